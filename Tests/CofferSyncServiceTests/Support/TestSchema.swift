// The schema and change builders the service tests share: a Task class with
// a property of each kind the merge rules treat differently, a Person to link
// to, and an embedded Note.
import CofferSyncProtocol
import CofferSyncTestSupport
import Foundation

enum TestSchema {
    static let schema = SyncSchema(classes: [
        SchemaClass(name: "Task", primaryKey: "id", properties: [
            SchemaProperty(name: "id", type: 2),
            SchemaProperty(name: "title", type: 5),
            SchemaProperty(name: "done", type: 1),
            SchemaProperty(name: "score", type: 4, flags: SchemaProperty.optional),
            SchemaProperty(name: "owner", type: 11, flags: SchemaProperty.optional, target: "Person"),
            SchemaProperty(name: "steps", type: 5, flags: SchemaProperty.list),
            SchemaProperty(name: "tags", type: 5, flags: SchemaProperty.set),
            SchemaProperty(name: "attrs", type: 5, flags: SchemaProperty.map),
            SchemaProperty(name: "note", type: 11, flags: SchemaProperty.optional, target: "Note"),
            SchemaProperty(name: "extra", type: 12, flags: SchemaProperty.optional),
        ]),
        SchemaClass(name: "Person", primaryKey: "name", properties: [
            SchemaProperty(name: "name", type: 5),
            SchemaProperty(name: "age", type: 2),
        ]),
        SchemaClass(name: "Note", isEmbedded: true, primaryKey: "", properties: [
            SchemaProperty(name: "text", type: 5),
        ]),
    ])

    static func task(_ id: Int64) -> SyncValue { .int(id) }

    static func createTask(_ id: Int64, title: String, done: Bool = false) -> Change {
        .create(class: "Task", pk: .int(id), properties: [.init("title", .string(title)), .init("done", .bool(done))])
    }

    static func setTitle(_ id: Int64, _ title: String) -> Change {
        .update(class: "Task", pk: .int(id), properties: [.init("title", .string(title))])
    }
}

/// A unique partition name per test.
func uniquePartition(_ name: String = #function) -> String {
    "\(name.prefix(while: { $0 != "(" }))-\(UUID().uuidString.prefix(8))"
}

/// `coffer-sync dump` of a partition, each line parsed.
func dump(_ postgres: String, _ partition: String) async throws -> [[String: Any]] {
    let result = try await ServiceProcess.command(["dump", "--postgres", postgres, "--partition", partition])
    guard result.status == 0 else { throw TestFailure("dump failed: \(result.stderr)") }
    return try result.stdout.split(separator: "\n").map {
        try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
    }
}

/// The dumped object of a class and primary key, or nil.
func object(_ lines: [[String: Any]], _ className: String, _ pk: Int) -> [String: Any]? {
    lines.first { $0["class"] as? String == className && ($0["pk"] as? Int) == pk }?["properties"] as? [String: Any]
}

/// A client id whose bytes are all `byte` (to order clients in tie-breaks).
func clientID(_ byte: UInt8) -> ClientID {
    ClientID(bytes: [UInt8](repeating: byte, count: 16))
}
