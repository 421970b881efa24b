// Rendering rows of objects (JSON objects in schema order) as an aligned
// table, a JSON array, JSON lines or CSV (RFC 4180 quoting).

import Foundation

enum Formatter {
    /// `total` is the number of matches when `rows` holds only the first
    /// ones (the table's last line says so).
    static func render(_ rows: [JSON], columns: [String], format: OutputFormat, total: UInt64? = nil) -> String {
        switch format {
        case .json:
            return "[" + rows.map(\.text).joined(separator: ",\n ") + "]\n"
        case .jsonl:
            return rows.map { $0.text + "\n" }.joined()
        case .csv:
            let lines = [columns.map(csvField)] + rows.map { row in columns.map { csvField(cell(row[$0])) } }
            return lines.map { $0.joined(separator: ",") + "\r\n" }.joined()
        case .table:
            return table(rows, columns: columns, total: total)
        }
    }

    /// A value as one cell: strings bare, anything else as compact JSON.
    static func cell(_ value: JSON?) -> String {
        switch value {
        case nil, .null?: return "null"
        case .string(let s)?: return s
        case let v?: return v.text
        }
    }

    private static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Columns padded to their widest cell; control characters in a cell are
    /// escaped so that every row stays on one line. Ends with a row count.
    private static func table(_ rows: [JSON], columns: [String], total: UInt64?) -> String {
        let cells = rows.map { row in columns.map { oneLine(cell(row[$0])) } }
        let widths = columns.indices.map { i in max(columns[i].count, cells.map { $0[i].count }.max() ?? 0) }
        func line(_ items: [String]) -> String {
            items.enumerated().map { $1.padding(widths[$0]) }.joined(separator: " | ").trimmingTrailingSpaces() + "\n"
        }
        var out = line(columns)
        out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "-+-") + "\n"
        cells.forEach { out += line($0) }
        let all = total ?? UInt64(rows.count)
        let shown = all == UInt64(rows.count) ? "" : "\(rows.count) of "
        out += "(\(shown)\(all) \(all == 1 ? "object" : "objects"))\n"
        return out
    }

    private static func oneLine(_ text: String) -> String {
        guard text.contains(where: { $0.isNewline || $0 == "\t" }) else { return text }
        return text.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
            .replacingOccurrences(of: "\t", with: "\\t")
    }
}
