// Values of any length within the protocol's limits: a multi-MiB string and
// binary upload through `coffer-sync serve` and download to another client;
// predicates over long and short strings select what the query language
// says (the indexes hold a bounded prefix, the whole value is rechecked);
// a version 5 database, whose indexes held whole values, upgrades to 6.
import CofferSyncProtocol
@testable import CofferSyncService
import CofferSyncTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

@Suite("values longer than an index row")
struct LargeValueTests {
    /// `count` random ASCII letters: PostgreSQL cannot compress them below an index row.
    static func letters(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<count).map { _ in UInt8(ascii: "a") + UInt8.random(in: 0..<26, using: &generator) }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    @Test("a 6 MiB string and a 2 MiB binary upload and download to another client")
    func largeValuesSync() async throws {
        try await withTaskExecutorPreference(HeavyWork.executor) {
            let postgres = try await PrivatePostgres.shared.freshDatabase()
            let service = try await ServiceProcess.start(postgres: postgres)
            defer { service.stop() }
            let partition = uniquePartition()
            let title = Self.letters(6 << 20)
            let blob = Self.randomBytes(2 << 20)

            let a = TestClient(url: service.url)
            try await a.hello(partition: partition)
            #expect(try await a.downloadAll().isEmpty)
            let changeset = Changeset(clientVersion: 1, clock: 1 << 16, changes: [
                .create(class: "Task", pk: .int(1), properties: [
                    .init("title", .string(title)), .init("done", .bool(false)), .init("extra", .binary(blob))]),
                TestSchema.createTask(2, title: "short"),
            ])
            let (last, serverVersion) = try await a.upload([changeset])
            #expect(last == 1)

            let b = TestClient(url: service.url)
            try await b.hello(partition: partition)
            let received = try await b.downloadAll()
            #expect(received == [ServerChangeset(serverVersion: serverVersion, origin: a.id, changeset: changeset)])
            let state = try await dump(postgres, partition)
            #expect((object(state, "Task", 1)?["title"] as? String)?.utf8.count == 6 << 20)
            #expect(object(state, "Task", 2)?["title"] as? String == "short")
        }
    }

    @Test("comparisons over long strings recheck the whole value; short ones still match")
    func longStringPredicates() async throws {
        try await withTaskExecutorPreference(HeavyWork.executor) {
            // Two long titles that share their first 300 characters, more than the index keeps.
            let shared = String(repeating: "é", count: 150) + Self.letters(150)
            let long1 = shared + "1" + Self.letters(3 << 20)
            let long2 = shared + "2"
            let tasks: [(Int64, String)] = [(1, long1), (2, long2), (3, "short"), (4, "shorter"), (5, shared)]
            let url = try PostgresURL(try await PrivatePostgres.shared.freshDatabase())
            let logger = Logger(label: "large-value-tests")
            try await PostgresSession.with(url, logger: logger) { client in
                _ = try await SchemaMigrations.migrate(client: client, logger: logger)
                try await client.withConnection { c in
                    let integrator = Integrator(connection: c, partition: QueryTranslatorTests.partition, logger: logger)
                    let changes = tasks.map { Change.create(class: "Task", pk: .int($0.0), properties: [.init("title", .string($0.1))]) }
                    try await integrator.integrate(Changeset(clientVersion: 1, clock: 1 << 16, changes: changes),
                                                   origin: clientID(1))
                    let read = try await c.query(
                        "SELECT value FROM coffer_sync_properties WHERE pk = \(SyncValue.int(1).encoded.bytea) AND property = 'title'",
                        logger: logger)
                    for try await value in read.decode(ByteBuffer.self) {
                        #expect(try SyncValue(encoded: value.bytes) == .string(long1))
                    }
                    let cases: [(String, [Int64])] = [
                        ("title == 'short'", [3]),
                        ("title BEGINSWITH 'short'", [3, 4]),
                        ("title == '\(long2)'", [2]),
                        ("title == '\(shared)'", [5]),
                        ("title BEGINSWITH '\(shared)'", [1, 2, 5]),
                        ("title BEGINSWITH '\(shared)2'", [2]),
                        ("title > '\(shared)'", [1, 2]),
                        ("title >= '\(shared)1'", [1, 2]),
                        ("title < '\(shared)2'", [1, 3, 4, 5]),
                        ("title <= '\(shared)'", [3, 4, 5]),
                        ("title IN {'shorter', '\(long2)'}", [2, 4]),
                        ("title ENDSWITH 'ter'", [4]),
                    ]
                    for (query, expected) in cases {
                        let matched = try await QueryTranslatorTests.matching(query, on: c)
                        #expect(matched == expected, "\(query.prefix(80))")
                    }
                }
            }
        }
    }

    @Test("a version 5 database, which cannot store a long value, upgrades to 6 and then can")
    func upgradeFromVersion5() async throws {
        try await withTaskExecutorPreference(HeavyWork.executor) {
            let url = try PostgresURL(try await PrivatePostgres.shared.freshDatabase())
            let logger = Logger(label: "large-value-tests")
            try await PostgresSession.with(url, logger: logger) { client in
                _ = try await SchemaMigrations.migrate(client: client, logger: logger)
                // Back to version 5's indexes, which held whole values.
                try await client.withConnection { c in
                    for statement in [
                        "DROP INDEX coffer_sync_properties_by_value",
                        "DROP INDEX coffer_sync_properties_by_txt",
                        "CREATE INDEX coffer_sync_properties_by_value ON coffer_sync_properties (partition, class, property, value)",
                        "CREATE INDEX coffer_sync_properties_by_txt ON coffer_sync_properties (partition, class, property, txt)",
                        "UPDATE coffer_sync_meta SET version = 5",
                    ] {
                        try await c.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                }
                let long = Changeset(clientVersion: 2, clock: 2 << 16, changes: [
                    .create(class: "Task", pk: .int(2), properties: [.init("title", .string(Self.letters(1 << 20)))])])
                let short = Changeset(clientVersion: 1, clock: 1 << 16, changes: [TestSchema.createTask(1, title: "kept")])
                try await client.withConnection { c in
                    let integrator = Integrator(connection: c, partition: "p", logger: logger)
                    try await integrator.integrate(short, origin: clientID(1))
                    let error = await #expect(throws: (any Error).self) {
                        try await client.withTransaction(logger: logger) { t in
                            try await Integrator(connection: t, partition: "p", logger: logger).integrate(long, origin: clientID(1))
                        }
                    }
                    let message = error.map { (unwrapTransactionError($0) as? PSQLError)?.serverInfo?[.message] } ?? nil
                    #expect(message?.contains("index row") == true, "\(String(describing: message))")
                }

                #expect(try await SchemaMigrations.migrate(client: client, logger: logger) == (5, 6))
                try await client.withConnection { c in
                    var definitions: [String] = []
                    let rows = try await c.query(
                        "SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'coffer_sync_properties_by_%' ORDER BY indexname",
                        logger: logger)
                    for try await definition in rows.decode(String.self) { definitions.append(definition) }
                    #expect(definitions.count == 3)
                    #expect(definitions.contains { $0.contains("by_txt") && $0.contains("(txt, 256)") }, "\(definitions)")
                    #expect(definitions.contains { $0.contains("by_value") && $0.contains("1024") }, "\(definitions)")
                    try await Integrator(connection: c, partition: "p", logger: logger).integrate(long, origin: clientID(1))
                    let matched = try await c.query(
                        "SELECT count(*) FROM coffer_sync_properties WHERE partition = 'p' AND property = 'title'", logger: logger)
                    for try await count in matched.decode(Int.self) { #expect(count == 2) }
                }
            }
        }
    }
}
