// The merge rules of docs/SYNC.md as the service applies them, checked
// through `coffer-sync dump`: last writer wins by stamp whatever the arrival
// order, a delete beats an update, a create after a tombstone starts a new
// life, concurrent list inserts after one anchor are ordered by id, set adds
// and removes, map puts and removals, and links to deleted objects read null.
import CofferSyncProtocol
import CofferSyncTestSupport
import Foundation
import Testing

@Suite("sync merge rules on the service")
struct MergeTests {
    /// One service and database for the suite's tests; each test has its own partition.
    struct Fixture {
        let postgres: String
        let service: ServiceProcess

        static func make() async throws -> Fixture {
            let postgres = try await PrivatePostgres.shared.freshDatabase()
            return Fixture(postgres: postgres, service: try await ServiceProcess.start(postgres: postgres))
        }

        func client(_ byte: UInt8, _ partition: String) async throws -> TestClient {
            let client = TestClient(url: service.url, id: clientID(byte))
            try await client.hello(partition: partition)
            return client
        }
    }

    @Test("last writer wins per property by clock, then by client id, whatever the arrival order")
    func lastWriterWins() async throws {
        let f = try await Fixture.make()
        defer { f.service.stop() }
        let p = uniquePartition()
        let a = try await f.client(1, p), b = try await f.client(2, p)
        try await a.upload([Changeset(clientVersion: 1, clock: 10 << 16, changes: [TestSchema.createTask(1, title: "a0")])])
        // B's write has the larger clock but arrives first; A's later arrival loses.
        try await b.upload([Changeset(clientVersion: 1, clock: 30 << 16, changes: [TestSchema.setTitle(1, "b-late")])])
        try await a.upload([Changeset(clientVersion: 2, clock: 20 << 16, changes: [
            .update(class: "Task", pk: .int(1), properties: [.init("title", .string("a-early")), .init("done", .bool(true))])])])
        var task = try #require(object(try await dump(f.postgres, p), "Task", 1))
        #expect(task["title"] as? String == "b-late")
        #expect(task["done"] as? Bool == true)
        // Equal clocks: the larger client id wins.
        try await b.upload([Changeset(clientVersion: 2, clock: 40 << 16, changes: [TestSchema.setTitle(1, "b-tie")])])
        try await a.upload([Changeset(clientVersion: 3, clock: 40 << 16, changes: [TestSchema.setTitle(1, "a-tie")])])
        task = try #require(object(try await dump(f.postgres, p), "Task", 1))
        #expect(task["title"] as? String == "b-tie")
    }

    @Test("a delete beats a concurrent update with a larger stamp, and links to it read null")
    func deleteBeatsUpdate() async throws {
        let f = try await Fixture.make()
        defer { f.service.stop() }
        let p = uniquePartition()
        let a = try await f.client(1, p), b = try await f.client(2, p)
        try await a.upload([Changeset(clientVersion: 1, clock: 10 << 16, changes: [
            .create(class: "Person", pk: .string("ann"), properties: [.init("age", .int(30))]),
            .create(class: "Task", pk: .int(1), properties: [
                .init("title", .string("t")), .init("owner", .link(targetClass: "Person", primaryKey: .string("ann")))]),
        ])])
        var state = try await dump(f.postgres, p)
        #expect((object(state, "Task", 1)?["owner"] as? [String: Any])?["$link"] != nil)

        try await a.upload([Changeset(clientVersion: 2, clock: 20 << 16, changes: [.delete(class: "Person", pk: .string("ann"))])])
        try await b.upload([Changeset(clientVersion: 1, clock: 50 << 16, changes: [
            .update(class: "Person", pk: .string("ann"), properties: [.init("age", .int(31))])])])
        state = try await dump(f.postgres, p)
        #expect(!state.contains { $0["class"] as? String == "Person" })
        #expect(object(state, "Task", 1)?["owner"] is NSNull)
    }

    @Test("a create after a tombstone starts a new life; an older create is ignored")
    func createAfterTombstone() async throws {
        let f = try await Fixture.make()
        defer { f.service.stop() }
        let p = uniquePartition()
        let a = try await f.client(1, p), b = try await f.client(2, p)
        try await a.upload([Changeset(clientVersion: 1, clock: 10 << 16, changes: [
            TestSchema.createTask(1, title: "first", done: true),
            .update(class: "Task", pk: .int(1), properties: [.init("score", .of(2.5 as Double))]),
            .setAdd(class: "Task", pk: .int(1), property: "tags", value: .string("old")),
        ])])
        try await a.upload([Changeset(clientVersion: 2, clock: 20 << 16, changes: [.delete(class: "Task", pk: .int(1))])])
        // A create older than the delete does nothing.
        try await b.upload([Changeset(clientVersion: 1, clock: 15 << 16, changes: [TestSchema.createTask(1, title: "stale")])])
        #expect(object(try await dump(f.postgres, p), "Task", 1) == nil)
        // A newer create starts again: what it does not set is gone.
        try await b.upload([Changeset(clientVersion: 2, clock: 30 << 16, changes: [
            .create(class: "Task", pk: .int(1), properties: [.init("title", .string("second"))])])])
        let task = try #require(object(try await dump(f.postgres, p), "Task", 1))
        #expect(task["title"] as? String == "second")
        #expect(task["done"] == nil)
        #expect(task["score"] == nil)
        #expect(task["tags"] as? [String] == [])
    }

    @Test("concurrent list inserts after the same element are ordered by id, larger first, in any arrival order")
    func concurrentListInserts() async throws {
        let f = try await Fixture.make()
        defer { f.service.stop() }
        let p = uniquePartition()
        let a = try await f.client(1, p), b = try await f.client(2, p), c = try await f.client(3, p)
        let head = ElementID(clock: 10 << 16, client: a.id, seq: 0)
        try await a.upload([Changeset(clientVersion: 1, clock: 10 << 16, changes: [
            TestSchema.createTask(1, title: "list"),
            .listInsert(class: "Task", pk: .int(1), property: "steps", id: head, after: nil, value: .string("h")),
            .listInsert(class: "Task", pk: .int(1), property: "steps", id: ElementID(clock: 10 << 16, client: a.id, seq: 1),
                        after: head, value: .string("h2")),
        ])])
        // B and C both insert after "h" concurrently; C's clock is smaller but C
        // arrives first. B appends two in one changeset.
        let bFirst = ElementID(clock: 30 << 16, client: b.id, seq: 0)
        try await c.upload([Changeset(clientVersion: 1, clock: 20 << 16, changes: [
            .listInsert(class: "Task", pk: .int(1), property: "steps", id: ElementID(clock: 20 << 16, client: c.id, seq: 0),
                        after: head, value: .string("c"))])])
        try await b.upload([Changeset(clientVersion: 1, clock: 30 << 16, changes: [
            .listInsert(class: "Task", pk: .int(1), property: "steps", id: bFirst, after: head, value: .string("b1")),
            .listInsert(class: "Task", pk: .int(1), property: "steps", id: ElementID(clock: 30 << 16, client: b.id, seq: 1),
                        after: bFirst, value: .string("b2")),
        ])])
        var task = try #require(object(try await dump(f.postgres, p), "Task", 1))
        #expect(task["steps"] as? [String] == ["h", "b1", "b2", "c", "h2"])

        // Erase and replace by element id; a stale replacement loses.
        try await a.upload([Changeset(clientVersion: 2, clock: 40 << 16, changes: [
            .listErase(class: "Task", pk: .int(1), property: "steps", id: bFirst),
            .listSet(class: "Task", pk: .int(1), property: "steps", id: head, value: .string("H")),
        ])])
        try await c.upload([Changeset(clientVersion: 2, clock: 35 << 16, changes: [
            .listSet(class: "Task", pk: .int(1), property: "steps", id: head, value: .string("stale"))])])
        task = try #require(object(try await dump(f.postgres, p), "Task", 1))
        #expect(task["steps"] as? [String] == ["H", "b2", "c", "h2"])
    }

    @Test("set adds and removes resolve per element by stamp; map keys are properties")
    func setsAndMaps() async throws {
        let f = try await Fixture.make()
        defer { f.service.stop() }
        let p = uniquePartition()
        let a = try await f.client(1, p), b = try await f.client(2, p)
        try await a.upload([Changeset(clientVersion: 1, clock: 10 << 16, changes: [
            TestSchema.createTask(1, title: "s"),
            .setAdd(class: "Task", pk: .int(1), property: "tags", value: .string("red")),
            .setAdd(class: "Task", pk: .int(1), property: "tags", value: .string("blue")),
            .mapPut(class: "Task", pk: .int(1), property: "attrs", key: "color", value: .string("red")),
            .mapPut(class: "Task", pk: .int(1), property: "attrs", key: "size", value: .string("L")),
        ])])
        // Concurrent: B removes red (later) while A re-adds red (earlier) and adds green.
        try await b.upload([Changeset(clientVersion: 1, clock: 30 << 16, changes: [
            .setRemove(class: "Task", pk: .int(1), property: "tags", value: .string("red")),
            .mapRemove(class: "Task", pk: .int(1), property: "attrs", key: "size"),
            .mapPut(class: "Task", pk: .int(1), property: "attrs", key: "color", value: .string("blue")),
        ])])
        try await a.upload([Changeset(clientVersion: 2, clock: 20 << 16, changes: [
            .setAdd(class: "Task", pk: .int(1), property: "tags", value: .string("red")),
            .setAdd(class: "Task", pk: .int(1), property: "tags", value: .string("green")),
            .mapPut(class: "Task", pk: .int(1), property: "attrs", key: "color", value: .string("green")),
            .mapPut(class: "Task", pk: .int(1), property: "attrs", key: "shape", value: .string("round")),
        ])])
        let task = try #require(object(try await dump(f.postgres, p), "Task", 1))
        #expect(task["tags"] as? [String] == ["blue", "green"])
        #expect(task["attrs"] as? [String: String] == ["color": "blue", "shape": "round"])
    }

    @Test("values of every kind come out of the dump in their documented JSON form")
    func dumpForms() async throws {
        let f = try await Fixture.make()
        defer { f.service.stop() }
        let p = uniquePartition()
        let a = try await f.client(1, p)
        try await a.upload([Changeset(clientVersion: 1, clock: 10 << 16, changes: [
            .create(class: "Task", pk: .int(7), properties: [
                .init("title", .string("q\"uote")),
                .init("note", .embedded(className: "Note", properties: [.init("text", .string("inside"))])),
                .init("extra", .list([.int(1), .date(seconds: 2, nanoseconds: 3), .binary([1, 2])])),
                .init("owner", .link(targetClass: "Person", primaryKey: .string("nobody"))),
            ])])])
        let result = try await ServiceProcess.command(["dump", "--postgres", f.postgres, "--partition", p])
        #expect(result.stdout == """
            {"class":"Task","pk":7,"properties":{"attrs":{},"extra":[1,{"$date":[2,3]},{"$binary":"AQI="}],\
            "note":{"$embedded":"Note","properties":{"text":"inside"}},"owner":null,"steps":[],"tags":[],\
            "title":"q\\"uote"}}

            """)
        let missing = try await ServiceProcess.command(["dump", "--postgres", f.postgres, "--partition", "no-such"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("partition 'no-such' does not exist"))
    }
}
