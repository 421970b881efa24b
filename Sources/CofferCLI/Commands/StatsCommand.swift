// `coffer stats FILE`: file size, used and free pages, objects and bytes
// per class, index sizes, collections, the change log and the readers of
// every process with the version each reads (coffer_db_stats and friends).

import ArgumentParser
import CCoffer

struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print file size, used and free pages, per-class objects and bytes, index sizes, readers and the change log.")

    @OptionGroup var options: FileOptions

    func run() throws {
        Output.write(try StatsCommand.text(options.open()))
    }

    static func text(_ db: Database) throws -> String {
        var s = coffer_stats()
        try check(coffer_db_stats(db.handle, &s))
        var out = ""
        func row(_ label: String, _ value: String) { out += label.padding(18) + value + "\n" }
        row("file", db.path)
        row("encrypted", db.isEncrypted ? "yes" : "no")
        row("file size", bytes(s.file_size))
        row("page size", bytes(s.page_size))
        row("pages used", "\(s.pages_used) pages, \(bytes(s.pages_used * s.page_size))")
        row("pages free", "\(s.pages_free) pages, \(bytes(s.pages_free * s.page_size)) (reused by later writes; compact drops them)")
        row("version", "\(s.version)")
        row("schema version", "\(db.schema.version)")
        row("collections", bytes(s.collection_bytes))
        row("metadata", bytes(s.metadata_bytes))
        row("change log", "\(s.changelog_entries) entries, \(bytes(s.changelog_bytes))")
        let current = try readers(db)
        row("readers", "\(current.count) now (at most \(s.readers) at once so far, \(s.max_readers) slots)")
        for r in current {
            out += "  pid \(r.pid) thread \(String(r.thread, radix: 16)) "
                + (r.version == 0 ? "idle" : "reading version \(r.version)") + "\n"
        }
        let header = ["class", "objects", "object bytes", "index entries", "index bytes"]
        var rows: [[String]] = []
        for cls in db.schema.classes {
            var c = coffer_class_stats()
            try check(coffer_db_class_stats(db.handle, cls.id, &c), cls.name)
            rows.append([cls.name, "\(c.objects)", bytes(c.object_bytes), "\(c.index_entries)", bytes(c.index_bytes)])
        }
        let widths = header.indices.map { i in max(header[i].count, rows.map { $0[i].count }.max() ?? 0) }
        for r in [header] + rows {
            out += r.enumerated().map { $1.padding(widths[$0]) }.joined(separator: "  ").trimmingTrailingSpaces() + "\n"
        }
        return out
    }

    static func readers(_ db: Database) throws -> [coffer_reader] {
        var count = 0
        try check(coffer_db_readers(db.handle, nil, 0, &count))
        var list = [coffer_reader](repeating: coffer_reader(), count: count + 8)
        try check(coffer_db_readers(db.handle, &list, list.count, &count))
        return Array(list.prefix(count))
    }

    /// "12345 bytes (12.1 KiB)".
    static func bytes(_ n: UInt64) -> String {
        guard n >= 1024 else { return "\(n) bytes" }
        var value = Double(n)
        var unit = 0
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return "\(n) bytes (\((value * 10).rounded() / 10) \(units[unit]))"
    }
}
