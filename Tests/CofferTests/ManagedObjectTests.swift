// Tests of managed objects: class layouts with several levels, defaults, and C
// handles per transaction.

import Coffer
import Foundation
import Testing

/// Models whose properties are found through the class layout: several levels
/// of classes, every kind of default.
class Pet: Object {
    @Persisted var legs = 4
    @Persisted var nickname: String?
}

final class Cat: Pet {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted(indexed: true) var name = ""
    @Persisted var born: Date
    @Persisted var chip: UUID
    @Persisted var toys: List<String>
}

/// Managed objects keep one C handle per transaction; these check that what they
/// read is always current, and that adding, cancelling and deleting keep their
/// meaning.
@Suite struct ManagedObjectTests {
    @Test(arguments: Storage.allCases)
    func aManagedObjectSeesWritesMadeThroughAnotherViewOfIt(_ storage: Storage) throws {
        let directory = TemporaryDirectory()
        let db = try Database(configuration: configuration(storage, [Dog.self], in: directory))
        let rex = Dog(value: ["name": "Rex", "age": 3])
        try db.write { db.add(rex) }
        let other = try #require(db.object(ofType: Dog.self, forPrimaryKey: rex._id))
        #expect(rex.age == 3)
        try db.write {
            other.age = 4
            #expect(rex.age == 4)
            rex.name = "Rex II"
            #expect(other.name == "Rex II")
        }
        #expect(rex.age == 4 && other.name == "Rex II")
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func aSnapshotMovesOnAfterRefresh(_ storage: Storage) throws {
        let directory = TemporaryDirectory()
        let config = configuration(storage, [Dog.self], in: directory)
        let reader = try Database(configuration: config)
        let writer = try Database(configuration: config)
        let rex = Dog(value: ["name": "Rex", "age": 3])
        try writer.write { writer.add(rex) }
        _ = reader.refresh()
        let seen = try #require(reader.object(ofType: Dog.self, forPrimaryKey: rex._id))
        #expect(seen.age == 3)
        try writer.write { rex.age = 9 }
        #expect(seen.age == 3, "the reader's snapshot is unchanged until it refreshes")
        #expect(reader.refresh())
        #expect(seen.age == 9)
    }

    @Test(arguments: Storage.allCases)
    func deletingThroughOneViewInvalidatesTheOther(_ storage: Storage) throws {
        let directory = TemporaryDirectory()
        let db = try Database(configuration: configuration(storage, [Dog.self], in: directory))
        let rex = Dog(value: ["name": "Rex"])
        try db.write { db.add(rex) }
        #expect(rex.name == "Rex")
        let other = try #require(db.object(ofType: Dog.self, forPrimaryKey: rex._id))
        try db.write { db.delete(other) }
        #expect(rex.isInvalidated && other.isInvalidated)
        expectCofferError(.notFound, containing: "Dog object has been deleted") {
            try db.write { try db.tryDelete(rex) }
        }
    }

    @Test func cancellingAWriteInvalidatesOnlyWhatItAdded() throws {
        let directory = TemporaryDirectory()
        let db = try Database(configuration: configuration(.plain, [Dog.self], in: directory))
        let kept = Dog(value: ["name": "Kept"])
        try db.write { db.add(kept) }
        let dropped = Dog(value: ["name": "Dropped"])
        let created = try db.write { () throws -> Dog in
            db.add(dropped)
            return db.create(Dog.self, value: ["name": "Created"])
        }
        db.beginWrite()
        let cancelledAdd = Dog(value: ["name": "Cancelled"])
        db.add(cancelledAdd)
        let cancelledCreate = db.create(Dog.self, value: ["name": "Cancelled too"])
        db.cancelWrite()
        #expect(cancelledAdd.isInvalidated && cancelledCreate.isInvalidated)
        #expect(!kept.isInvalidated && !dropped.isInvalidated && !created.isInvalidated)
        #expect(db.objects(Dog.self).map(\.name) == ["Kept", "Dropped", "Created"])
        expectCofferError(.misuse, containing: "cancelled") { try db.write { try db.tryAdd(cancelledAdd) } }
    }

    @Test(arguments: Storage.allCases)
    func subclassesAddAndReadEveryProperty(_ storage: Storage) throws {
        let directory = TemporaryDirectory()
        let db = try Database(configuration: configuration(storage, [Cat.self], in: directory))
        let cat = Cat(value: ["legs": 3, "nickname": "Tripod", "name": "Tom"])
        cat.toys.append(contentsOf: ["mouse", "ball"])
        let id = cat.id
        #expect(cat.id == id, "a default value is fixed when the object is made")
        let born = cat.born
        let chip = cat.chip
        try db.write { db.add(cat) }
        let read = try #require(db.object(ofType: Cat.self, forPrimaryKey: id))
        #expect(read.legs == 3 && read.nickname == "Tripod" && read.name == "Tom")
        #expect(abs(read.born.timeIntervalSince(born)) < 0.001 && read.chip == chip)
        #expect(Array(read.toys) == ["mouse", "ball"])
        let copy = Cat(value: read)
        #expect(copy.name == "Tom" && copy.legs == 3 && copy.id == id && copy.database == nil)
    }

    @Test func whereOnEveryObjectUsesTheQueryAndKeepsCreationOrder() throws {
        let directory = TemporaryDirectory()
        let db = try Database(configuration: configuration(.plain, [Cat.self], in: directory))
        try db.write {
            for (name, legs) in [("b", 4), ("a", 3), ("c", 4), ("a", 4)] {
                db.add(Cat(value: ["name": name, "legs": legs]))
            }
        }
        let cats = db.objects(Cat.self)
        #expect(cats.where { $0.name == "a" }.map(\.legs) == [3, 4])
        #expect(cats.where { $0.legs == 4 }.map(\.name) == ["b", "c", "a"])
        #expect(cats.where { $0.legs == 4 }.where { $0.name == "a" }.count == 1)
        try db.write { db.add(Cat(value: ["name": "a", "legs": 4])) }
        #expect(cats.where { $0.name == "a" }.count == 3, "results follow writes")
    }
}
