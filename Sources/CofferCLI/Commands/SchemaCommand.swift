// `coffer schema FILE [--json]`: the classes, properties, types, keys and
// indexes a file stores, and its schema version.

import ArgumentParser

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the classes, properties, types, primary keys and indexes of a file.")

    @OptionGroup var options: FileOptions

    @Flag(help: "Print the schema as JSON (the form export's header line carries).")
    var json = false

    func run() throws {
        let db = try options.open()
        if json {
            Output.line(db.schema.json.text)
        } else {
            Output.write(SchemaCommand.text(db.schema, only: nil))
        }
    }

    /// The schema as aligned text, for every class or only one.
    static func text(_ schema: SchemaInfo, only: ClassInfo?) -> String {
        var out = only == nil ? "schema version \(schema.version)\n" : ""
        for cls in schema.classes where only == nil || only?.name == cls.name {
            out += "class \(cls.name)\(cls.isEmbedded ? " (embedded)" : "")\n"
            let width = cls.properties.map(\.name.count).max() ?? 0
            let typeWidth = cls.properties.map(\.displayType.count).max() ?? 0
            for p in cls.properties {
                var notes: [String] = []
                if p.isPrimaryKey { notes.append("primary key") }
                if p.isIndexed { notes.append("indexed") }
                var line = "  " + p.name.padding(width) + "  " + p.displayType.padding(typeWidth)
                if !notes.isEmpty { line += "  " + notes.joined(separator: ", ") }
                out += line.trimmingTrailingSpaces() + "\n"
            }
        }
        return out
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}
