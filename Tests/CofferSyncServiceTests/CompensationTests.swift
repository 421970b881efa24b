// Compensating writes of refused collection edits, against a real
// PostgreSQL through the service's own store: a refused change restates the
// object, and the collection edits a restatement leaves as they are are
// undone one by one (a list element the service does not have erased, a
// replaced element's stored value back, a set element or map key the
// service does not have removed); none of the refused values reach the
// state tables.
import CofferSyncProtocol
@testable import CofferSyncService
import CofferSyncTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

@Suite("compensating writes of collection edits")
struct CompensationTests {
    static let logger = Logger(label: "compensation-tests")

    @Test("refused list, set and map edits are undone on the client that made them")
    func collections() async throws {
        let url = try PostgresURL(try await PrivatePostgres.shared.freshDatabase())
        try await PostgresSession.with(url, logger: Self.logger) { client in
            _ = try await SchemaMigrations.migrate(client: client, logger: Self.logger)
            let store = SyncStore(client: client, logger: Self.logger)
            let partition = "compensation"
            let writerID = clientID(1)
            _ = try await store.register(partition: partition, client: writerID, schema: TestSchema.schema)
            let rules = try PermissionRules.parse([
                "classes": ["Task": ["read": true, "write": "title BEGINSWITH 'ok'"]] as [String: Any],
            ] as [String: Any])
            let writer = SyncStore.Writer(rules: rules, user: QueryUser(id: "ann", roles: []))
            let task = SyncValue.int(1)
            let e1 = ElementID(clock: 1 << 16, client: writerID, seq: 0)
            let e2 = ElementID(clock: 2 << 16, client: writerID, seq: 0)
            let first = try await store.integrate(partition: partition, client: writerID, changesets: [
                Changeset(clientVersion: 1, clock: 1 << 16, changes: [
                    TestSchema.createTask(1, title: "ok"),
                    .listInsert(class: "Task", pk: task, property: "steps", id: e1, after: nil, value: .string("a")),
                    .setAdd(class: "Task", pk: task, property: "tags", value: .string("t")),
                    .mapPut(class: "Task", pk: task, property: "attrs", key: "k", value: .string("v")),
                ]),
            ], writer: writer)
            #expect(first.refused.isEmpty)
            let second = try await store.integrate(partition: partition, client: writerID, changesets: [
                Changeset(clientVersion: 2, clock: 2 << 16, changes: [
                    TestSchema.setTitle(1, "not ok"),
                    .listInsert(class: "Task", pk: task, property: "steps", id: e2, after: e1, value: .string("b")),
                    .listSet(class: "Task", pk: task, property: "steps", id: e1, value: .string("z")),
                    .setAdd(class: "Task", pk: task, property: "tags", value: .string("u")),
                    .setRemove(class: "Task", pk: task, property: "tags", value: .string("t")),
                    .mapPut(class: "Task", pk: task, property: "attrs", key: "n", value: .string("w")),
                    .mapPut(class: "Task", pk: task, property: "attrs", key: "k", value: .string("x")),
                ]),
            ], writer: writer)
            #expect(second.refused.map(\.pk) == [task])

            let (history, _) = try await store.history(partition: partition, after: 0, excluding: writerID,
                                                       maxBytes: 1 << 20)
            let compensation = try Changeset(encoded: try #require(history.last).encoded)
            #expect(history.last?.origin == Compensation.origin)
            #expect(compensation.clock == (2 << 16) + 1)
            #expect(compensation.changes == [
                .create(class: "Task", pk: task, properties: [.init("done", .bool(false)), .init("title", .string("ok"))]),
                .setAdd(class: "Task", pk: task, property: "tags", value: .string("t")),
                .mapPut(class: "Task", pk: task, property: "attrs", key: "k", value: .string("v")),
                .listErase(class: "Task", pk: task, property: "steps", id: e2),
                .listSet(class: "Task", pk: task, property: "steps", id: e1, value: .string("a")),
                .setRemove(class: "Task", pk: task, property: "tags", value: .string("u")),
                .mapRemove(class: "Task", pk: task, property: "attrs", key: "n"),
            ])

            // The state tables hold none of the refused values.
            let lines = try await StateDump.load(partition: partition, client: client, logger: Self.logger).lines()
            #expect(lines == [
                #"{"class":"Task","pk":1,"properties":{"attrs":{"k":"v"},"done":false,"steps":["a"],"tags":["t"],"title":"ok"}}"#,
            ])
        }
    }
}
