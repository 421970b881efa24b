// `coffer count FILE [CLASS]`: the number of objects of one class, or of
// every class.

import ArgumentParser

struct CountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "count",
        abstract: "Print the number of objects of one class (a bare number) or of every class.")

    @OptionGroup var options: FileOptions

    @Argument(help: "Count only this class.")
    var className: String?

    func run() throws {
        Output.write(try CountCommand.text(options.open(), className: className))
    }

    static func text(_ db: Database, className: String?) throws -> String {
        try db.read { txn in
            if let className {
                return "\(try txn.count(db.schema.require(className, in: db.path)))\n"
            }
            let width = db.schema.classes.map(\.name.count).max() ?? 0
            return try db.schema.classes.map { "\($0.name.padding(width))  \(try txn.count($0))\n" }.joined()
        }
    }
}
