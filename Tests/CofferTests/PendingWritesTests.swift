// Assignments to a managed object's properties in a write transaction wait
// and are written together in one record write: these check that every read,
// query, other object's write, deletion, commit and cancel sees or discards
// them exactly as if each assignment had been written at once.

@testable import Coffer
import Foundation
import Testing

@Suite struct PendingWritesTests {
    @Test(arguments: Storage.allCases)
    func assignmentsToOneObjectWaitAndAreWrittenTogether(_ storage: Storage) throws {
        let test = try TestDatabase(storage, [AllTypes.self])
        let db = test.db
        let object = try db.write { db.create(AllTypes.self, value: ["id": 1]) }
        let stamp = Date(timeIntervalSince1970: 1_000)
        let id = ObjectId()
        let uuid = UUID()
        try db.write {
            object.int = 7
            object.double = 2.5
            object.string = "seven"
            object.data = Data([1, 2, 3])
            object.date = stamp
            object.objectId = id
            object.uuid = uuid
            object.decimal = Decimal128(12)
            object.optInt = nil
            object.optString = "set"
            object.priority = .high
            object.int = 8  // the last assignment of a property wins
            #expect(db.pendingWrites.values.count == 11)
            #expect(db.pendingWrites.isWaiting(for: object.managedState!))
        }
        #expect(db.pendingWrites.isEmpty)
        let again = try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 1))
        #expect(again.int == 8)
        #expect(again.double == 2.5)
        #expect(again.string == "seven")
        #expect(again.data == Data([1, 2, 3]))
        #expect(again.date == stamp)
        #expect(again.objectId == id)
        #expect(again.uuid == uuid)
        #expect(again.decimal == Decimal128(12))
        #expect(again.optInt == nil)
        #expect(again.optString == "set")
        #expect(again.priority == .high)
    }

    @Test func aReadOfTheObjectOrAnyOtherSeesWhatWaits() throws {
        let test = try TestDatabase(.plain, [Dog.self])
        let db = test.db
        let (rex, fido) = try db.write {
            (db.create(Dog.self, value: ["name": "Rex", "age": 1]), db.create(Dog.self, value: ["name": "Fido", "age": 2]))
        }
        try db.write {
            rex.age = 5
            #expect(rex.age == 5)  // the read writes it first
            #expect(db.pendingWrites.isEmpty)
            rex.name = "Max"
            let view = try #require(db.object(ofType: Dog.self, forPrimaryKey: rex._id))
            #expect(view.name == "Max")
            rex.color = "brown"
            fido.age = 3  // another object: rex's assignment is written first
            #expect(db.pendingWrites.isWaiting(for: fido.managedState!))
            #expect(db.pendingWrites.values.count == 1)
            #expect(db.objects(Dog.self).where { $0.color == "brown" }.count == 1)
            fido.age = 4
            #expect(db.objects(Dog.self).where { $0.age == 4 }.map(\.name) == ["Fido"])
            #expect(db.objects(Dog.self).sorted(by: \.age).map(\.name) == ["Fido", "Max"])
        }
        #expect(db.objects(Dog.self).map(\.age).sorted() == [4, 5])
    }

    @Test func aCancelledTransactionWritesNothingThatWaited() throws {
        let test = try TestDatabase(.plain, [Dog.self])
        let db = test.db
        let rex = try db.write { db.create(Dog.self, value: ["name": "Rex", "age": 1]) }
        db.beginWrite()
        rex.age = 9
        rex.name = "Max"
        db.cancelWrite()
        #expect(db.pendingWrites.isEmpty)
        #expect(rex.age == 1 && rex.name == "Rex")
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.write {
                rex.age = 10
                throw Stop()
            }
        }
        #expect(rex.age == 1)
    }

    @Test func anObjectLetGoWhileItsAssignmentsWaitWritesThemFirst() throws {
        let test = try TestDatabase(.plain, [Dog.self])
        let db = test.db
        let id = try db.write { db.create(Dog.self, value: ["name": "Rex"]) }._id
        try db.write {
            do {
                let rex = try #require(db.object(ofType: Dog.self, forPrimaryKey: id))
                rex.age = 6
                rex.name = "Max"
            }
            #expect(db.pendingWrites.isEmpty)
        }
        let rex = try #require(db.object(ofType: Dog.self, forPrimaryKey: id))
        #expect(rex.age == 6 && rex.name == "Max")
    }

    @Test func deletingTheObjectWritesWhatWaitsFirstAndLinksAreWrittenAtOnce() throws {
        let test = try TestDatabase(.plain, noteTypes)
        let db = test.db
        let (rex, ann) = try db.write {
            (db.create(NoteDog.self, value: ["name": "Rex"]), db.create(NotePerson.self, value: ["name": "Ann"]))
        }
        try db.write {
            rex.age = 3
            db.delete(rex)
            #expect(db.pendingWrites.isEmpty)
            ann.name = "Anna"
            ann.dogs.append(db.create(NoteDog.self, value: ["name": "Bo"]))
            #expect(db.pendingWrites.isEmpty)
        }
        #expect(rex.isInvalidated)
        #expect(ann.name == "Anna" && ann.dogs.map(\.name) == ["Bo"])
    }

    @Test func anObserverIsToldOfAllTheAssignmentsOfOneObjectInOneChange() throws {
        let test = try TestDatabase(.plain, [Dog.self])
        let db = test.db
        let rex = try db.write { db.create(Dog.self, value: ["name": "Rex", "age": 1]) }
        var told: [[String]] = []
        let token = rex.observe { change in
            if case .change(_, let properties) = change {
                told.append(properties.map { "\($0.name) \($0.oldValue ?? "nil")->\($0.newValue ?? "nil")" })
            }
        }
        defer { token.invalidate() }
        db.refresh()
        try db.write {
            rex.age = 2
            rex.name = "Max"
            rex.age = 3
        }
        for _ in 0..<500 where told.isEmpty {
            db.refresh()
            if told.isEmpty { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(told == [["name Rex->Max", "age 1->3"]])
    }
}
