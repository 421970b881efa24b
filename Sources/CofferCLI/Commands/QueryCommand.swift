// `coffer query FILE CLASS 'RQL'`: runs a query as the core parses it (with
// its SORT, DISTINCT and LIMIT) and prints the objects as a table, JSON, JSON
// lines or CSV.

import ArgumentParser
import CCoffer

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, jsonl, csv
}

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run a Realm Query Language query and print the matching objects.",
        discussion: """
            The query is the core's language (docs/QUERY.md), e.g. "age > 3 SORT(name ASC) LIMIT(10)"; \
            TRUEPREDICATE selects every object. Links print as the target's primary key (or CLASS#KEY), \
            embedded objects and collections inline. A malformed query prints the core's message, \
            with its position, and exits with status 1.
            """)

    @OptionGroup var options: FileOptions

    @Argument(help: "The class to query.")
    var className: String

    @Argument(help: "The query, e.g. 'age > 3 SORT(name ASC)'.")
    var query: String = "TRUEPREDICATE"

    @Option(help: "Output format: table, json, jsonl or csv.")
    var format: OutputFormat = .table

    @Option(help: "Print at most this many objects.")
    var limit: Int?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
    }

    func run() throws {
        let db = try options.open()
        Output.write(try QueryCommand.run(db, className: className, query: query, format: format, limit: limit))
    }

    /// The query's output as text; shared with the shell.
    static func run(_ db: Database, className: String, query: String, format: OutputFormat, limit: Int?) throws -> String {
        let cls = try db.schema.require(className, in: db.path)
        var compiled: OpaquePointer?
        try check(coffer_query_compile(db.handle, cls.id, query, query.utf8.count, nil, 0, &compiled))
        defer { coffer_query_free(compiled) }
        return try db.read { txn in
            var results: OpaquePointer?
            try check(coffer_query_run(txn.handle, compiled, &results))
            defer { coffer_results_free(results) }
            var count: UInt64 = 0
            try check(coffer_results_count(results, &count))
            let shown = min(count, UInt64(limit ?? Int.max))
            let encoder = ValueEncoder(txn: txn, mode: .display)
            let rows = try (0..<shown).map { i -> JSON in
                var obj: OpaquePointer?
                try check(coffer_results_get(results, i, &obj))
                defer { coffer_object_release(obj) }
                return try encoder.object(obj!, of: cls, withKey: false)
            }
            return Formatter.render(rows, columns: cls.properties.map(\.name), format: format, total: count)
        }
    }
}
