// The query translator (Sources/CofferSyncService/Query) against a real
// PostgreSQL: objects are merged by the service's own Integrator, each
// predicate is translated to SQL and run over them, and the objects it
// selects are compared with the ones the query language says match. Also:
// the plans use the property indexes, and unsupported forms are refused
// naming the part.
import CofferSyncProtocol
@testable import CofferSyncService
import CofferSyncTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

@Suite("query predicates translated to SQL")
struct QueryTranslatorTests {
    static let partition = "rules"
    static let ann = QueryUser(id: "ann", roles: ["editor"])

    /// Tasks 1...6 with owners, ranks of every number type, titles and flags.
    static let tasks: [(Int64, [SyncValue.SyncProperty])] = [
        (1, [.init("owner_id", .string("ann")), .init("rank", .int(1)), .init("title", .string("alpha")), .init("done", .bool(true))]),
        (2, [.init("owner_id", .string("bob")), .init("rank", .of(2.5)), .init("title", .string("Alpine 50%")), .init("done", .bool(false))]),
        (3, [.init("owner_id", .string("ann")), .init("rank", .of(Float(3))), .init("title", .string("beta_x"))]),
        (4, [.init("owner_id", .null), .init("rank", .int(-7)), .init("title", .string(""))]),
        (5, [.init("owner_id", .string("carl")), .init("rank", .of(2.0)), .init("tag", .objectId(Array(repeating: 0xab, count: 12)))]),
        (6, []),
    ]

    /// Runs `body` with a connection to a fresh, migrated database holding `tasks`.
    func withTasks(_ body: @Sendable (PostgresConnection) async throws -> Void) async throws {
        let url = try PostgresURL(try await PrivatePostgres.shared.freshDatabase())
        let logger = Logger(label: "query-tests")
        try await PostgresSession.with(url, logger: logger) { client in
            _ = try await SchemaMigrations.migrate(client: client, logger: logger)
            try await client.withConnection { connection in
                let integrator = Integrator(connection: connection, partition: Self.partition, logger: logger)
                let changes = Self.tasks.map { Change.create(class: "Task", pk: .int($0.0), properties: $0.1) }
                try await integrator.integrate(Changeset(clientVersion: 1, clock: 1 << 16, changes: changes),
                                               origin: clientID(1))
                try await body(connection)
            }
        }
    }

    /// The SELECT of the primary keys of the tasks `query` holds for.
    static func select(_ query: String, user: QueryUser) throws -> PostgresQuery {
        var bindings = PostgresBindings()
        bindings.append(partition)
        bindings.append("Task")
        var binder = SQLBinder(continuing: bindings)
        let condition = SQLTranslator(user: user).condition(try QueryParser.parse(query), object: "o", binder: &binder)
        return PostgresQuery(unsafeSQL: """
            SELECT o.pk FROM coffer_sync_objects o
            WHERE o.partition = $1 AND o.class = $2 AND \(SQLTranslator.isLive(object: "o")) AND \(condition)
            """, binds: binder.bindings)
    }

    static func matching(_ query: String, user: QueryUser = ann, on connection: PostgresConnection) async throws -> [Int64] {
        let rows = try await connection.query(try select(query, user: user), logger: Logger(label: "query-tests"))
        var keys: [Int64] = []
        for try await pk in rows.decode(ByteBuffer.self) {
            guard case .int(let key) = try SyncValue(encoded: pk.bytes) else { throw TestFailure("pk is not an int") }
            keys.append(key)
        }
        return keys.sorted()
    }

    static func expectMatching(_ query: String, _ expected: [Int64], user: QueryUser = ann,
                               on connection: PostgresConnection) async throws {
        let matched = try await matching(query, user: user, on: connection)
        #expect(matched == expected, "\(query)")
    }

    @Test("each supported form selects the objects the query language says match")
    func forms() async throws {
        try await withTasks { c in
            let cases: [(String, [Int64])] = [
                ("owner_id == %user.id", [1, 3]),
                ("%user.id == owner_id", [1, 3]),
                ("owner_id != %user.id", [2, 4, 5, 6]),
                ("owner_id == null", [4, 6]),
                ("owner_id != nil", [1, 2, 3, 5]),
                ("rank == 2", [5]),
                ("rank = 3", [3]),
                ("rank == 2.5", [2]),
                ("rank > 1", [2, 3, 5]),
                ("rank >= 1 AND rank < 3", [1, 2, 5]),
                ("-7 >= rank", [4]),
                ("rank <= 0x1", [1, 4]),
                ("title > 'alpha'", [3]),
                ("title < 'a'", [2, 4]),
                ("title BEGINSWITH 'Alp'", [2]),
                ("title BEGINSWITH 'al'", [1]),
                ("title BEGINSWITH ''", [1, 2, 3, 4]),
                ("title CONTAINS '50%'", [2]),
                ("title CONTAINS '_'", [3]),
                ("title ENDSWITH 'ha'", [1]),
                ("title == ''", [4]),
                ("done == true", [1]),
                ("done != true", [2, 3, 4, 5, 6]),
                ("tag == oid(abababababababababababab)", [5]),
                ("owner_id IN {'bob', 'carl'}", [2, 5]),
                ("owner_id IN {'bob', null}", [2, 4, 6]),
                ("owner_id IN {}", []),
                ("rank IN {1, 2.5}", [1, 2]),
                ("NOT owner_id == %user.id", [2, 4, 5, 6]),
                ("!(owner_id == 'ann' || owner_id == 'bob')", [4, 5, 6]),
                ("owner_id == 'ann' OR rank < 0 AND title == ''", [1, 3, 4]),
                ("(owner_id == 'ann' OR rank < 0) AND title BEGINSWITH 'b'", [3]),
                ("TRUEPREDICATE", [1, 2, 3, 4, 5, 6]),
                ("FALSEPREDICATE", []),
                ("'editor' IN %user.roles AND done == true", [1]),
                ("'admin' IN %user.roles", []),
                ("owner_id IN %user.roles", []),
                ("rank > 'a'", []),
            ]
            for (query, expected) in cases {
                try await Self.expectMatching(query, expected, on: c)
            }
            let bob = QueryUser(id: "bob", roles: ["ann"])
            try await Self.expectMatching("owner_id == %user.id", [2], user: bob, on: c)
            try await Self.expectMatching("owner_id IN %user.roles", [1, 3], user: bob, on: c)
        }
    }

    @Test("the typed copies follow the merged value: a later update replaces them, an earlier one does not")
    func typedCopiesFollowMerges() async throws {
        try await withTasks { c in
            let integrator = Integrator(connection: c, partition: Self.partition, logger: Logger(label: "query-tests"))
            // Task 5's rank (2.0) becomes a string; then a stale write (a smaller clock) loses.
            try await integrator.integrate(Changeset(clientVersion: 1, clock: 3 << 16, changes: [
                .update(class: "Task", pk: .int(5), properties: [.init("rank", .string("high"))])]), origin: clientID(2))
            try await integrator.integrate(Changeset(clientVersion: 2, clock: 2 << 16, changes: [
                .update(class: "Task", pk: .int(5), properties: [.init("rank", .int(9))])]), origin: clientID(2))
            try await Self.expectMatching("rank > 1", [2, 3], on: c)
            try await Self.expectMatching("rank BEGINSWITH 'hi'", [5], on: c)
            try await Self.expectMatching("rank == 9", [], on: c)
            // A deleted object is not live: no predicate selects it, its negation neither.
            try await integrator.integrate(Changeset(clientVersion: 3, clock: 4 << 16, changes: [
                .delete(class: "Task", pk: .int(1))]), origin: clientID(2))
            try await Self.expectMatching("owner_id == 'ann'", [3], on: c)
            try await Self.expectMatching("owner_id != 'ann'", [2, 4, 5, 6], on: c)
        }
    }

    @Test("comparisons go through the property indexes")
    func plansUseIndexes() async throws {
        try await withTasks { c in
            let logger = Logger(label: "query-tests")
            // 5,000 more tasks, made in SQL (the encodings do not matter to
            // the plans), so that a selective comparison is cheaper through
            // its index than through every object.
            try await c.query("""
                WITH t AS (SELECT i, 'user' || (i % 1000) AS owner, 'title' || i AS title FROM generate_series(1, 5000) i),
                o AS (
                    INSERT INTO coffer_sync_objects (partition, class, pk, created)
                    SELECT 'rules', 'Task', int4send(i), '\\x00'::bytea FROM t
                )
                INSERT INTO coffer_sync_properties (partition, class, pk, property, value, stamp, num, txt)
                SELECT 'rules', 'Task', int4send(i), 'owner_id', convert_to(owner, 'UTF8'), '\\x00'::bytea, NULL::float8, owner FROM t
                UNION ALL SELECT 'rules', 'Task', int4send(i), 'rank', int4send(i), '\\x00'::bytea, i, NULL FROM t
                UNION ALL SELECT 'rules', 'Task', int4send(i), 'title', convert_to(title, 'UTF8'), '\\x00'::bytea, NULL, title FROM t
                """, logger: logger)
            try await c.query("ANALYZE coffer_sync_objects", logger: logger)
            try await c.query("ANALYZE coffer_sync_properties", logger: logger)
            let expected: [(String, String)] = [
                ("owner_id == %user.id", "coffer_sync_properties_by_value"),
                ("rank > 4990", "coffer_sync_properties_by_num"),
                ("title <= 'title1'", "coffer_sync_properties_by_txt"),
                ("title BEGINSWITH 'title123'", "coffer_sync_properties_by_txt"),
            ]
            for (query, index) in expected {
                let select = try Self.select(query, user: Self.ann)
                let explain = PostgresQuery(unsafeSQL: "EXPLAIN " + select.sql, binds: select.binds)
                var plan = ""
                for try await line in try await c.query(explain, logger: logger).decode(String.self) {
                    plan += line + "\n"
                }
                #expect(plan.contains(index), "\(query):\n\(plan)")
            }
        }
    }

    @Test("a form outside the subset is refused, naming the part")
    func unsupported() throws {
        let refused: [(String, String)] = [
            ("title LIKE 'a*'", "'LIKE' at offset 6 is not supported"),
            ("rank BETWEEN {1, 2}", "'BETWEEN' at offset 5 is not supported"),
            ("title ==[c] 'a'", "the modifier '[c]' at offset 8 is not supported"),
            ("owner.name == 'a'", "the key path 'owner.name' at offset 0 is not supported"),
            ("rank == $0", "'$0' at offset 8 is not supported"),
            ("tags.@count > 1", "the key path 'tags.@count'"),
            ("rank > %user.name", "the substitution '%user.name' at offset 7 is not supported"),
            ("rank == ANY {1}", "'ANY' at offset 8 is not supported"),
            ("title == 'a' SORT(title ASC)", "'SORT' at offset 13 is not supported after a complete predicate"),
            ("rank == rank", "comparing two properties"),
            ("rank > null", "'>' at offset 5 orders only numbers and strings"),
            ("title BEGINSWITH 1", "'BEGINSWITH' at offset 6 needs a string"),
            ("owner_id == %user.roles", "'%user.roles' (in the comparison at offset 9) is a list"),
            ("(rank == 1", "the '(' at offset 0 is not closed"),
            ("title == 'a", "an unterminated string at offset 9"),
            ("rank == oid(12)", "is not an objectId"),
        ]
        for (query, message) in refused {
            let error = #expect(throws: QueryError.self, "\(query)") { try QueryParser.parse(query) }
            #expect(error?.description.contains(message) == true, "\(query): \(String(describing: error))")
        }
    }
}
