// Tests of the batch paths: iterating Results packs the objects' values in one
// C call per page (a property read comes from the page while the database is as
// the page was read, from the C core after any change); adding a sequence of
// objects writes many per call; Results.setValue(_:forKey:) sets a property of
// every object in one call.

import Coffer
import Foundation
import Testing

@Suite struct BatchTests {
    /// Objects of every type, across page boundaries, read as property by property.
    @Test(arguments: Storage.allCases)
    func everyTypeAcrossPages(storage: Storage) throws {
        let test = try TestDatabase(storage, [AllTypes.self]), db = test.db
        let count = 600
        try db.write {
            for i in 0..<count {
                let object = AllTypes()
                object.id = i
                object.bool = i % 2 == 0
                object.int = -i
                object.int8 = Int8(i % 100)
                object.float = Float(i) / 4
                object.double = Double(i) * 1.5
                object.string = "s\u{e9}\(i)"
                object.data = Data([UInt8(i % 256), 0, 1])
                object.date = Date(timeIntervalSince1970: Double(i) + 0.25)
                object.uuid = UUID(uuid: (UInt8(i % 256), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
                object.decimal = Decimal128(i)
                object.priority = i % 3 == 0 ? .high : .low
                object.optString = i % 5 == 0 ? nil : "o\(i)"
                object.optInt = i % 7 == 0 ? nil : i
                object.optDate = i % 2 == 0 ? nil : Date(timeIntervalSince1970: -Double(i))
                db.add(object)
            }
        }
        var seen = 0
        for object in db.objects(AllTypes.self) {
            let i = seen
            #expect(object.id == i)
            #expect(object.bool == (i % 2 == 0))
            #expect(object.int == -i)
            #expect(object.int8 == Int8(i % 100))
            #expect(object.float == Float(i) / 4)
            #expect(object.double == Double(i) * 1.5)
            #expect(object.string == "s\u{e9}\(i)")
            #expect(object.data == Data([UInt8(i % 256), 0, 1]))
            #expect(object.date == Date(timeIntervalSince1970: Double(i) + 0.25))
            #expect(object.uuid.uuid.0 == UInt8(i % 256))
            #expect(object.decimal == Decimal128(i))
            #expect(object.priority == (i % 3 == 0 ? .high : .low))
            #expect(object.optString == (i % 5 == 0 ? nil : "o\(i)"))
            #expect(object.optInt == (i % 7 == 0 ? nil : i))
            #expect(object.optDate == (i % 2 == 0 ? nil : Date(timeIntervalSince1970: -Double(i))))
            #expect(object.optData == nil)
            seen += 1
        }
        #expect(seen == count)
    }

    /// A write inside the loop is seen by the objects read after it, and an
    /// object deleted in the loop reads as deleted.
    @Test(arguments: Storage.allCases)
    func writesInsideTheLoop(storage: Storage) throws {
        let test = try TestDatabase(storage, [StringKeyed.self]), db = test.db
        try db.write {
            for i in 0..<300 {
                db.add(StringKeyed(value: ["key": "k\(i)", "value": i]))
            }
        }
        var values: [Int] = []
        var validity: [Bool] = []
        try db.write {
            for object in db.objects(StringKeyed.self) {
                validity.append(!object.isInvalidated)
                guard !object.isInvalidated else { continue }
                if object.key == "k0" {
                    db.object(ofType: StringKeyed.self, forPrimaryKey: "k1")!.value = -1
                    db.object(ofType: StringKeyed.self, forPrimaryKey: "k299")!.value = -299
                    db.delete(db.object(ofType: StringKeyed.self, forPrimaryKey: "k2")!)
                }
                values.append(object.value)
            }
        }
        #expect(values.count == 299)
        #expect(validity[2] == false)
        #expect(values[1] == -1)
        #expect(values.last == -299)
    }

    /// Objects kept from a loop read the newest values after the snapshot moves.
    @Test func objectsKeptAfterTheSnapshotMoves() throws {
        let test = try TestDatabase(.plain, [StringKeyed.self]), db = test.db
        try db.write {
            for i in 0..<10 {
                db.add(StringKeyed(value: ["key": "k\(i)", "value": i]))
            }
        }
        let kept = Array(db.objects(StringKeyed.self))
        #expect(kept[3].value == 3)
        try db.write {
            kept[3].value = 33
        }
        #expect(kept[3].value == 33)
        #expect(kept[4].key == "k4")
        _ = db.refresh()
        #expect(kept[5].value == 5)
        #expect(kept.map(\.key) == (0..<10).map { "k\($0)" })
    }

    /// Objects added as a sequence are managed, in order, and stop at a duplicate.
    @Test(arguments: Storage.allCases)
    func addingMany(storage: Storage) throws {
        let test = try TestDatabase(storage, [StringKeyed.self, Book.self]), db = test.db
        let objects = (0..<2500).map { StringKeyed(value: ["key": "k\($0)", "value": $0]) }
        let mixed: [Object] = [Book(value: ["title": "A"]), objects[0]]
        try db.write {
            db.add(objects)
            db.add(mixed)
        }
        #expect(objects.allSatisfy { $0.database === db && !$0.isInvalidated })
        #expect(objects[2499].value == 2499)
        #expect(db.objects(StringKeyed.self).count == 2500)
        #expect(db.objects(Book.self).first?.title == "A")
        let more = [StringKeyed(value: ["key": "new", "value": 1]), StringKeyed(value: ["key": "k5", "value": 2]),
                    StringKeyed(value: ["key": "after", "value": 3])]
        try db.write {
            #expect(throws: CofferError.self) { try db.tryAdd(more) }
            #expect(more.map { $0.database != nil } == [true, false, false])
        }
        #expect(db.object(ofType: StringKeyed.self, forPrimaryKey: "new")?.value == 1)
        #expect(db.object(ofType: StringKeyed.self, forPrimaryKey: "k5")?.value == 5)
    }

    /// One property of every object of a Results, in one call.
    @Test(arguments: Storage.allCases)
    func settingAPropertyOfEveryObject(storage: Storage) throws {
        let test = try TestDatabase(storage, [StringKeyed.self]), db = test.db
        try db.write {
            db.add((0..<50).map { StringKeyed(value: ["key": "k\($0)", "value": $0]) })
        }
        let small = db.objects(StringKeyed.self).where { $0.value < 10 }
        try db.write {
            small.setValue(-1, forKey: "value")
        }
        #expect(db.objects(StringKeyed.self).where { $0.value == -1 }.count == 10)
        try db.write {
            #expect(throws: CofferError.self) { try small.trySetValue("text", forKey: "value") }
            #expect(throws: CofferError.self) { try small.trySetValue("x", forKey: "key") }
            #expect(throws: CofferError.self) { try small.trySetValue(1, forKey: "nothing") }
        }
        #expect(db.objects(StringKeyed.self).where { $0.value == -1 }.count == 10)
        #expect(throws: CofferError.self) { try small.trySetValue(2, forKey: "value") }
    }
}
