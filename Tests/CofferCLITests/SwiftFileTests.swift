// The coffer tool's commands on files written by the Swift overlay, plain and
// encrypted: schema, count, query, stats, and an export → import round trip,
// run in process through the commands' own functions.

import Coffer
@testable import CofferCLI
import Foundation
import Testing

final class Crate: Object {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted(indexed: true) var label = ""
    @Persisted var weight = 0.0
    @Persisted var packed = Date(timeIntervalSince1970: 0)
    @Persisted var photo = Data()
    @Persisted var tags: List<String>
    @Persisted var sizes: Map<String, Int>
    @Persisted var keeper: Keeper?
    @Persisted var extra: AnyValue
    @Persisted var spot: Spot?
}

final class Keeper: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var crates: List<Crate>
}

final class Spot: EmbeddedObject {
    @Persisted var aisle = 0
    @Persisted var shelf: String?
}

@Suite("coffer on files made by Swift")
struct SwiftFileTests {
    static let key = Data((0..<64).map { UInt8(255 - $0) })

    /// A file with two crates and their keeper, written through the overlay.
    func makeFile(in dir: URL, encrypted: Bool) throws -> URL {
        var config = Coffer.Database.Configuration(objectTypes: [Crate.self, Keeper.self, Spot.self])
        config.fileURL = dir.appendingPathComponent("swift.coffer")
        if encrypted { config.encryptionKey = Self.key }
        let db = try Coffer.Database(configuration: config)
        try db.write {
            let keeper = Keeper(value: ["name": "Kim"])
            let a = Crate(value: ["label": "apples", "weight": 12.5, "photo": Data([1, 2, 3]), "keeper": keeper])
            a.packed = Date(timeIntervalSince1970: 1_700_000_000.25)
            a.tags.append(contentsOf: ["fruit", "red"])
            a.sizes["small"] = 2
            a.extra = .string("fragile")
            a.spot = Spot(value: ["aisle": 4, "shelf": "B"])
            let b = Crate(value: ["label": "pears", "keeper": keeper])
            b.extra = .int(7)
            db.add(a)
            db.add(b)
            keeper.crates.append(contentsOf: [a, b])
        }
        return config.fileURL!
    }

    func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test(arguments: [false, true])
    func commandsOnASwiftFile(encrypted: Bool) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = try makeFile(in: dir, encrypted: encrypted)
        let key = encrypted ? EncryptionKey(bytes: [UInt8](Self.key), source: "a test key") : nil
        let db = try CofferCLI.Database(path: url.path, key: key)

        let schema = SchemaCommand.text(db.schema, only: nil)
        #expect(schema.contains("class Crate"))
        #expect(schema.contains("class Spot (embedded)"))
        #expect(try CountCommand.text(db, className: "Crate") == "2\n")

        let json = try QueryCommand.run(db, className: "Crate", query: "label == 'apples'", format: .json, limit: nil)
        let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [[String: Any]]
        #expect(rows.count == 1)
        #expect(rows[0]["keeper"] as? String == "Kim")
        #expect(rows[0]["tags"] as? [String] == ["fruit", "red"])
        #expect(rows[0]["packed"] as? String == "2023-11-14T22:13:20.25Z")
        #expect((rows[0]["spot"] as? [String: Any])?["aisle"] as? Int == 4)

        #expect(try StatsCommand.text(db).contains("Keeper"))

        let exported = dir.appendingPathComponent("out.jsonl").path
        let sink = try TextSink(path: exported)
        try ExportCommand.export(db, classNames: [], to: sink)
        sink.flush()
        let text = try String(contentsOfFile: exported, encoding: .utf8)
        let copy = dir.appendingPathComponent("copy.coffer").path
        #expect(try ImportCommand.load(ExportDocument(text: text), into: copy, key: key, existed: false) == 3)

        let again = dir.appendingPathComponent("again.jsonl").path
        let copied = try CofferCLI.Database(path: copy, key: key)
        let sink2 = try TextSink(path: again)
        try ExportCommand.export(copied, classNames: [], to: sink2)
        sink2.flush()
        let lines = try String(contentsOfFile: again, encoding: .utf8).split(separator: "\n")
        let original = text.split(separator: "\n")
        #expect(lines.count == original.count)
        if !encrypted {
            #expect(lines == original)
        }
    }

    @Test func aBadLineNamesItsNumber() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = try makeFile(in: dir, encrypted: false)
        let db = try CofferCLI.Database(path: url.path, key: nil)
        let exported = dir.appendingPathComponent("out.jsonl").path
        let sink = try TextSink(path: exported)
        try ExportCommand.export(db, classNames: ["Keeper"], to: sink)
        sink.flush()
        let text = try String(contentsOfFile: exported, encoding: .utf8)
        // The keeper's crates are not in the input.
        let error = #expect(throws: CLIError.self) {
            try ImportCommand.load(ExportDocument(text: text), into: dir.appendingPathComponent("k.coffer").path,
                                   key: nil, existed: false)
        }
        #expect(error?.message.hasPrefix("line 2: ") == true)
        #expect(error?.message.contains("not in the input") == true)
    }
}
