// `coffer export FILE [CLASS…] [--output F]`: JSON lines that `coffer
// import` rebuilds the file from. The first line carries the schema; each
// further line is one object of a class that is not embedded, with "$class",
// its "$key" in this file (what links point at) and its properties.

import ArgumentParser
import Foundation

/// The header line's "coffer" member, which import checks.
enum ExportFormat {
    static let marker = "export"
    static let version = 1
}

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write objects as JSON lines (a schema header line, then one object a line).",
        discussion: """
            Values are written by their stored types: dates as ISO 8601 text in UTC, binaries in \
            base64, ObjectIds, UUIDs and decimals as text, links as the target's "$key", embedded \
            objects inline; values of mixed properties that JSON cannot tell apart are tagged \
            ({"$date": ...}, {"$link": {"class": ..., "key": ...}}). See README.md.
            """)

    @OptionGroup var options: FileOptions

    @Argument(help: "Export only these classes (default: every class).")
    var classes: [String] = []

    @Option(name: .shortAndLong, help: "Write to this file instead of stdout.")
    var output: String?

    func run() throws {
        let db = try options.open()
        let sink = try TextSink(path: output)
        do {
            try ExportCommand.export(db, classNames: classes, to: sink)
            sink.flush()
        } catch {
            // A partial export is no export: leave no file that looks whole.
            if let output { try? FileManager.default.removeItem(atPath: output) }
            throw error
        }
    }

    static func export(_ db: Database, classNames: [String], to sink: TextSink) throws {
        let chosen = try classNames.isEmpty
            ? db.schema.classes.filter { !$0.isEmbedded }
            : classNames.map { try db.schema.require($0, in: db.path) }
        if let embedded = chosen.first(where: \.isEmbedded) {
            throw CLIError("class \(embedded.name) is embedded: its objects are exported inside their parents")
        }
        let header = JSON.object([
            ("coffer", .string(ExportFormat.marker)), ("format", .int(Int64(ExportFormat.version))),
            ("library", .string(cofferLibraryVersion())), ("schema", db.schema.json),
        ])
        sink.line(header.text)
        try db.read { txn in
            let total = try chosen.reduce(UInt64(0)) { $0 + (try txn.count($1)) }
            let progress = Progress("exporting", total: total)
            defer { progress.finish() }
            let encoder = ValueEncoder(txn: txn, mode: .export)
            var done: UInt64 = 0
            for cls in chosen {
                try txn.forEachObject(of: cls) { obj in
                    sink.line(try encoder.object(obj, of: cls, withKey: true).text)
                    done += 1
                    progress.update(done)
                }
            }
        }
    }
}
