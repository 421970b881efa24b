// `coffer import FILE [--input F]`: reads what export writes (stdin by
// default), creating the file and its schema when missing. All objects land
// in one write transaction or none does; a file the import created is
// removed again when it fails. The file is verified before (when it
// existed) and after the write.

import ArgumentParser
import Foundation

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Read JSON lines written by export into a file, in one write transaction.",
        discussion: """
            The file is created with the export's schema if it does not exist; an existing file must \
            have every exported class with the same properties. Objects get new keys; links are \
            mapped to them. A bad line is reported with its line number and nothing is written. \
            An existing file is verified first (a damaged one is refused) and the file is verified \
            again after the import.
            """)

    @OptionGroup var options: FileOptions

    @Option(name: .shortAndLong, help: "Read from this file instead of stdin.")
    var input: String?

    func run() throws {
        let text = try readInput()
        let document = try ExportDocument(text: text)
        let existed = FileManager.default.fileExists(atPath: options.file)
        do {
            let count = try ImportCommand.load(document, into: options.file, key: options.key(), existed: existed)
            if Output.stderrIsTerminal { Output.error("imported \(count) objects into \(options.file)") }
        } catch {
            if !existed {
                for suffix in ["", "-lock", "-note"] {
                    try? FileManager.default.removeItem(atPath: options.file + suffix)
                }
            }
            throw error
        }
    }

    private func readInput() throws -> String {
        if let input {
            guard let data = FileManager.default.contents(atPath: input) else { throw CLIError("cannot read \(input)") }
            return String(decoding: data, as: UTF8.self)
        }
        return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }

    /// Opens (or creates) the file and writes the document's objects.
    static func load(_ document: ExportDocument, into path: String, key: EncryptionKey?, existed: Bool) throws -> Int {
        let db: Database
        do {
            db = try Database(path: path, key: key, readOnly: false, schema: existed ? nil : document.schema)
        } catch let error as CLIError where !existed {
            // The header's schema is what the file would have been made with.
            throw CLIError("line 1: \(error.message)")
        }
        try Importer.checkCompatible(document.schema, with: db.schema, path: path)
        // Never write into a damaged file, and check what was written before
        // anyone uses it (verification reads the whole file).
        if existed { try VerificationReport(db).requireSound(path) }
        let count = try Importer(db: db).run(document.objects)
        try VerificationReport(db).requireSound("\(path), as the import wrote it,")
        return count
    }
}
