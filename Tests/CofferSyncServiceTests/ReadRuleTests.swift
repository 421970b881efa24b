// Read rules against a real PostgreSQL: which objects a user may read is
// decided in SQL (the class's read rule, or its write rule), an object that
// becomes readable is restated whole (lists in order with their element ids,
// erased elements included), and a session's download filter passes, drops,
// restates or removes each change by what its client has and may read.
import CofferSyncProtocol
@testable import CofferSyncService
import CofferSyncTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

@Suite("sync service read rules")
struct ReadRuleTests {
    static let partition = "reads"
    static let logger = Logger(label: "read-rule-tests")
    static let ann = QueryUser(id: "ann", roles: [])
    static let bob = QueryUser(id: "bob", roles: [])
    static let root = QueryUser(id: "root", roles: ["admin"])
    static let sam = QueryUser(id: "sam", roles: ["staff"])

    static func rules() throws -> PermissionRules {
        try PermissionRules.parse([
            "classes": [
                "Task": ["read": "owner_id == %user.id", "write": "'admin' IN %user.roles"],
                "Person": ["read": ["staff"], "write": false],
            ] as [String: Any],
        ] as [String: Any])
    }

    static func task(_ id: Int64, owner: String, title: String) -> Change {
        .create(class: "Task", pk: .int(id), properties: [.init("owner_id", .string(owner)), .init("title", .string(title))])
    }

    static func key(_ className: String, _ pk: SyncValue) -> ObjectKey {
        ObjectKey(className: className, pk: pk.encoded)
    }

    /// Runs `body` with a pool on a fresh, migrated database and an
    /// integrator of the partition.
    func withStore(_ body: @Sendable (PostgresClient) async throws -> Void) async throws {
        let url = try PostgresURL(try await PrivatePostgres.shared.freshDatabase())
        try await PostgresSession.with(url, logger: Self.logger) { client in
            _ = try await SchemaMigrations.migrate(client: client, logger: Self.logger)
            try await body(client)
        }
    }

    static func integrate(_ changeset: Changeset, origin: ClientID, on client: PostgresClient) async throws {
        try await client.withConnection { connection in
            try await Integrator(connection: connection, partition: partition, logger: logger)
                .integrate(changeset, origin: origin)
        }
    }

    @Test("readable objects are decided in PostgreSQL by the read rule or the write rule")
    func readable() async throws {
        try await withStore { client in
            try await Self.integrate(Changeset(clientVersion: 1, clock: 1 << 16, changes: [
                Self.task(1, owner: "ann", title: "one"),
                Self.task(2, owner: "bob", title: "two"),
                Self.task(3, owner: "ann", title: "three"),
                .create(class: "Person", pk: .string("pat"), properties: [.init("age", .int(40))]),
            ]), origin: clientID(1), on: client)
            try await Self.integrate(Changeset(clientVersion: 2, clock: 2 << 16, changes: [
                .delete(class: "Task", pk: .int(3)),
            ]), origin: clientID(1), on: client)
            let objects = ClientObjects(client: client, logger: Self.logger)
            let rules = try Self.rules()
            let asked: Set<ObjectKey> = Set((1...4).map { Self.key("Task", .int($0)) } + [Self.key("Person", .string("pat"))])
            func readable(_ user: QueryUser) async throws -> Set<ObjectKey> {
                try await objects.readable(asked, partition: Self.partition, rules: rules, user: user)
            }
            // Ann reads her live task; not Bob's, not her deleted one, not one that does not exist.
            #expect(try await readable(Self.ann) == [Self.key("Task", .int(1))])
            #expect(try await readable(Self.bob) == [Self.key("Task", .int(2))])
            // The admin may write every task, so it reads them all; people are for staff.
            #expect(try await readable(Self.root) == [Self.key("Task", .int(1)), Self.key("Task", .int(2))])
            #expect(try await readable(Self.sam) == [Self.key("Person", .string("pat"))])
            // The whole partition, as a reconciliation reads it.
            #expect(try await objects.readableObjects(partition: Self.partition, rules: rules, user: Self.ann)
                    == [Self.key("Task", .int(1))])
            #expect(try await objects.readableObjects(partition: "elsewhere", rules: rules, user: Self.root) == [])
            // Classes without rules of their own are read by nobody (rules.default).
            let other = Self.key("Other", .int(1))
            #expect(try await objects.readable([other], partition: Self.partition, rules: rules, user: Self.root) == [])
        }
    }

    @Test("an object is restated whole: properties, set, map, and lists in order with erased elements")
    func restatement() async throws {
        try await withStore { client in
            let c = clientID(1)
            let e1 = ElementID(clock: 1 << 16, client: c, seq: 0)
            let e2 = ElementID(clock: 1 << 16, client: c, seq: 1)
            let e3 = ElementID(clock: 2 << 16, client: clientID(2), seq: 0)
            try await Self.integrate(Changeset(clientVersion: 1, clock: 1 << 16, changes: [
                Self.task(1, owner: "ann", title: "one"),
                .listInsert(class: "Task", pk: .int(1), property: "steps", id: e1, after: nil, value: .string("a")),
                .listInsert(class: "Task", pk: .int(1), property: "steps", id: e2, after: e1, value: .string("b")),
                .setAdd(class: "Task", pk: .int(1), property: "tags", value: .string("t")),
                .mapPut(class: "Task", pk: .int(1), property: "attrs", key: "k", value: .string("v")),
            ]), origin: c, on: client)
            // A concurrent insert after e1 with a larger id goes before e2; e2 is erased.
            try await Self.integrate(Changeset(clientVersion: 1, clock: 2 << 16, changes: [
                .listInsert(class: "Task", pk: .int(1), property: "steps", id: e3, after: e1, value: .string("c")),
                .listErase(class: "Task", pk: .int(1), property: "steps", id: e2),
            ]), origin: clientID(2), on: client)
            let changes = try await client.withConnection { connection in
                try await Restatement.changes(of: "Task", .int(1), partition: Self.partition, on: connection,
                                              logger: Self.logger)
            }
            #expect(changes == [
                .create(class: "Task", pk: .int(1), properties: [.init("owner_id", .string("ann")), .init("title", .string("one"))]),
                .setAdd(class: "Task", pk: .int(1), property: "tags", value: .string("t")),
                .mapPut(class: "Task", pk: .int(1), property: "attrs", key: "k", value: .string("v")),
                .listInsert(class: "Task", pk: .int(1), property: "steps", id: e1, after: nil, value: .string("a")),
                .listInsert(class: "Task", pk: .int(1), property: "steps", id: e3, after: e1, value: .string("c")),
                .listInsert(class: "Task", pk: .int(1), property: "steps", id: e2, after: e3, value: .string("b")),
                .listErase(class: "Task", pk: .int(1), property: "steps", id: e2),
            ])
            // Restated with other objects at once, the same changes.
            let batched = try await client.withConnection { connection in
                try await Restatement.changes(of: [Self.key("Task", .int(1)), Self.key("Task", .int(9))],
                                              partition: Self.partition, on: connection, logger: Self.logger)
            }
            #expect(batched[Self.key("Task", .int(1))] == changes)
            #expect(batched[Self.key("Task", .int(9))] == [.delete(class: "Task", pk: .int(9))])
            // An object the service does not hold live is restated as a delete.
            let missing = try await client.withConnection { connection in
                try await Restatement.changes(of: "Task", .int(9), partition: Self.partition, on: connection,
                                              logger: Self.logger)
            }
            #expect(missing == [.delete(class: "Task", pk: .int(9))])
        }
    }

    @Test("the download filter passes, drops, restates and removes by what the client has and may read")
    func filter() async throws {
        try await withStore { client in
            let writer = clientID(1)
            let first = Changeset(clientVersion: 1, clock: 1 << 16, changes: [
                Self.task(1, owner: "ann", title: "ann's"),
                Self.task(2, owner: "bob", title: "bob's"),
            ])
            try await Self.integrate(first, origin: writer, on: client)
            let objects = ClientObjects(client: client, logger: Self.logger)
            let rules = try Self.rules()
            let annClient = clientID(7), bobClient = clientID(8)
            let ann = ReadFilter(objects: objects, partition: Self.partition, client: annClient, rules: rules, user: Self.ann)
            let bob = ReadFilter(objects: objects, partition: Self.partition, client: bobClient, rules: rules, user: Self.bob)
            let stored1 = StoredChangeset(serverVersion: 1, origin: writer, encoded: first.encoded)

            // A fresh client: its own task arrives whole, the other one not at all.
            let annFirst = try await ann.filter([stored1])
            let annChanges = try Changeset(encoded: annFirst.changesets[0].encoded).changes
            #expect(annChanges == [.create(class: "Task", pk: .int(1), properties: [
                .init("owner_id", .string("ann")), .init("title", .string("ann's"))])])
            #expect(annFirst.changesets[0].serverVersion == 1)
            #expect(annFirst.marks == [Self.key("Task", .int(1)): true])
            // Recorded only once acknowledged.
            await ann.state.sent(annFirst.marks, lastVersion: 1)
            #expect(try await objects.given(nil, partition: Self.partition, client: annClient) == [])
            try await ann.acknowledged(1)
            #expect(try await objects.given(nil, partition: Self.partition, client: annClient) == [Self.key("Task", .int(1))])
            let bobFirst = try await bob.filter([stored1])
            await bob.state.sent(bobFirst.marks, lastVersion: 1)
            try await bob.acknowledged(1)

            // Task 1 changes hands: Ann gets its removal, Bob the whole object.
            let handOver = Changeset(clientVersion: 2, clock: 3 << 16, changes: [
                .update(class: "Task", pk: .int(1), properties: [.init("owner_id", .string("bob"))]),
            ])
            try await Self.integrate(handOver, origin: writer, on: client)
            let stored2 = StoredChangeset(serverVersion: 2, origin: writer, encoded: handOver.encoded)
            let annSecond = try await ann.filter([stored2])
            #expect(try Changeset(encoded: annSecond.changesets[0].encoded).changes == [.delete(class: "Task", pk: .int(1))])
            #expect(try Changeset(encoded: annSecond.changesets[0].encoded).clock == 3 << 16)
            #expect(annSecond.marks == [Self.key("Task", .int(1)): false])
            let bobSecond = try await bob.filter([stored2])
            #expect(try Changeset(encoded: bobSecond.changesets[0].encoded).changes == [
                .create(class: "Task", pk: .int(1), properties: [.init("owner_id", .string("bob")), .init("title", .string("ann's"))]),
            ])
            await bob.state.sent(bobSecond.marks, lastVersion: 2)
            // A later change of a task Bob has passes as it is; Ann, without it, gets nothing.
            let edit = Changeset(clientVersion: 3, clock: 4 << 16, changes: [
                .update(class: "Task", pk: .int(1), properties: [.init("title", .string("bob's now"))]),
            ])
            try await Self.integrate(edit, origin: writer, on: client)
            let stored3 = StoredChangeset(serverVersion: 3, origin: writer, encoded: edit.encoded)
            let bobThird = try await bob.filter([stored3])
            #expect(bobThird.changesets[0].encoded == edit.encoded)
            await ann.state.sent(annSecond.marks, lastVersion: 2)
            let annThird = try await ann.filter([stored3])
            #expect(try Changeset(encoded: annThird.changesets[0].encoded).changes == [])
            #expect(annThird.changesets[0].serverVersion == 3)

            // A reconciliation point: whatever the client has and may no
            // longer read is removed (Ann's table still says task 1, her
            // removal not being acknowledged), and what it may read is restated.
            let marker = Changeset(clientVersion: 0, clock: 5 << 16, changes: [])
            let stored4 = StoredChangeset(serverVersion: 4, origin: Compensation.origin, encoded: marker.encoded)
            let fresh = ReadFilter(objects: objects, partition: Self.partition, client: annClient, rules: rules, user: Self.ann)
            let reconciled = try await fresh.filter([stored4])
            #expect(try Changeset(encoded: reconciled.changesets[0].encoded).changes == [
                .delete(class: "Task", pk: .int(1)),
            ])
            let admin = ReadFilter(objects: objects, partition: Self.partition, client: clientID(9), rules: rules, user: Self.root)
            let adminBatch = try await admin.filter([stored4])
            let restated = try Changeset(encoded: adminBatch.changesets[0].encoded).changes
            #expect(restated.map { $0.object.pk } == [.int(1), .int(2)])
        }
    }

    @Test("a client is reconciled when it reads as another user or with other roles than before")
    func readAs() async throws {
        try await withStore { client in
            try await Self.integrate(Changeset(clientVersion: 1, clock: 1 << 16, changes: [
                Self.task(1, owner: "ann", title: "ann's"),
                Self.task(2, owner: "bob", title: "bob's"),
            ]), origin: clientID(1), on: client)
            let store = SyncStore(client: client, logger: Self.logger)
            let id = clientID(7)
            _ = try await store.register(partition: Self.partition, client: id, schema: TestSchema.schema)
            let objects = ClientObjects(client: client, logger: Self.logger)
            let rules = try Self.rules()
            func start(_ user: QueryUser, lastServerVersion: UInt64) async throws -> UInt64 {
                try await ReadFilter(objects: objects, partition: Self.partition, client: id, rules: rules, user: user)
                    .start(lastServerVersion: lastServerVersion)
                return try await store.latestVersion(partition: Self.partition)
            }
            // A fresh client: nothing to reconcile.
            #expect(try await start(Self.ann, lastServerVersion: 0) == 0)
            #expect(try await objects.swapReadAs("ann", partition: Self.partition, client: id) == "ann")
            #expect(try await start(Self.ann, lastServerVersion: 1) == 0)
            // Other roles: a reconciliation point in the history.
            let admin = QueryUser(id: "ann", roles: ["admin"])
            let marked = try await start(admin, lastServerVersion: 1)
            #expect(marked > 0)
            #expect(try await start(admin, lastServerVersion: 1) == marked)
            // A client that synced before read rules is taken to have every live object.
            let old = clientID(8)
            _ = try await store.register(partition: Self.partition, client: old, schema: TestSchema.schema)
            let before = ReadFilter(objects: objects, partition: Self.partition, client: old, rules: rules, user: Self.bob)
            try await before.start(lastServerVersion: 1)
            #expect(try await objects.given(nil, partition: Self.partition, client: old)
                    == [Self.key("Task", .int(1)), Self.key("Task", .int(2))])
            #expect(try await store.latestVersion(partition: Self.partition) > marked)
        }
    }
}
