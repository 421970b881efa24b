// writeCopy(configuration:progress:): the fraction of a copy written, from 0
// to 1, and a copy cancelled by its handler, which leaves no file.

import Coffer
import Foundation
import Testing

@Suite struct CopyProgressTests {
    func filled(_ storage: Storage, in dir: TemporaryDirectory) throws -> Database {
        let db = try Database(configuration: configuration(storage, [SchemaV1.Person.self], in: dir))
        try db.write {
            for i in 0..<2000 {
                db.add(SchemaV1.Person(value: ["firstName": "first", "lastName": "\(i)", "age": i]))
            }
        }
        return db
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func aCopyReportsItsProgressFrom0To1(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let db = try filled(storage, in: dir)
        var copy = configuration(storage, [SchemaV1.Person.self], in: dir, name: "copy.coffer")
        var fractions: [Double] = []
        try db.writeCopy(configuration: copy) { fractions.append($0); return true }
        #expect(fractions.first == 0)
        #expect(fractions.last == 1)
        #expect(fractions.count >= 3)
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 < $1 })
        copy.objectTypes = [SchemaV1.Person.self]
        #expect(try Database(configuration: copy).objects(SchemaV1.Person.self).count == 2000)
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func aCancelledCopyLeavesNoFile(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let db = try filled(storage, in: dir)
        let copy = configuration(storage, [SchemaV1.Person.self], in: dir, name: "copy.coffer")
        var reports = 0
        let error = #expect(throws: CofferError.self) {
            try db.writeCopy(configuration: copy) { _ in reports += 1; return reports < 2 }
        }
        #expect(error?.code == .cancelled)
        #expect(reports == 2)
        #expect(!FileManager.default.fileExists(atPath: copy.fileURL!.path))
    }
}
