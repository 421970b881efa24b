// Tests of write transactions and of adding, creating and deleting objects.

import Coffer
import Foundation
import Testing

@Suite struct WriteTransactionTests {
    @Test(arguments: Storage.allCases)
    func writeCommitsDurably(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let config = configuration(storage, [Dog.self], in: dir)
        let db = try Database(configuration: config)
        #expect(!db.isInWriteTransaction)
        let count = try db.write {
            #expect(db.isInWriteTransaction)
            db.add(Dog(value: ["name": "Rex"]))
            return db.objects(Dog.self).count
        }
        #expect(count == 1)
        #expect(!db.isInWriteTransaction)
        // Another handle on the same data sees the commit.
        #expect(try Database(configuration: config).objects(Dog.self).first?.name == "Rex")
    }

    @Test(arguments: Storage.allCases)
    func beginCommitAndCancel(storage: Storage) throws {
        let test = try TestDatabase(storage, [Dog.self]), db = test.db
        db.beginWrite()
        db.add(Dog(value: ["name": "Rex"]))
        try db.commitWrite()
        db.beginWrite()
        db.add(Dog(value: ["name": "Fido"]))
        db.objects(Dog.self)[0].age = 9
        #expect(db.objects(Dog.self).count == 2, "a write transaction sees its own changes")
        db.cancelWrite()
        #expect(!db.isInWriteTransaction)
        #expect(db.objects(Dog.self).map(\.name) == ["Rex"])
        #expect(db.objects(Dog.self)[0].age == 0)
    }

    @Test func aThrowingBlockCancelsAndRethrows() throws {
        struct Stop: Error {}
        let test = try TestDatabase(.plain, [Dog.self]), db = test.db
        #expect(throws: Stop.self) {
            try db.write {
                try db.tryAdd(Dog(value: ["name": "Rex"]))
                throw Stop()
            }
        }
        #expect(!db.isInWriteTransaction)
        #expect(db.objects(Dog.self).isEmpty)
        // A block that commits or cancels itself is left alone.
        try db.write { db.add(Dog()); try db.commitWrite() }
        try db.write { db.add(Dog()); db.cancelWrite() }
        #expect(db.objects(Dog.self).count == 1)
    }

    @Test func writeInsideAWriteTransactionThrows() throws {
        let test = try TestDatabase(.plain, [Dog.self]), db = test.db
        db.beginWrite()
        expectCofferError(.misuse, containing: "already in a write transaction") { try db.write {} }
        #expect(db.isInWriteTransaction, "the first transaction is still open")
        db.cancelWrite()
        #expect(!db.refresh(), "nothing read yet, so no snapshot to let go")
    }

    @Test func writesOutsideAWriteTransactionThrow() throws {
        let test = try TestDatabase(.plain, [Dog.self]), db = test.db
        try db.write { db.add(Dog(value: ["name": "Rex"])) }
        let rex = db.objects(Dog.self)[0]
        expectCofferError(.notInWriteTransaction, containing: "add objects", "write") { try db.tryAdd(Dog()) }
        expectCofferError(.notInWriteTransaction, containing: "create objects") { try db.tryCreate(Dog.self) }
        expectCofferError(.notInWriteTransaction, containing: "delete objects") { try db.tryDelete(rex) }
        #expect(db.objects(Dog.self).count == 1)
    }

    @Test func settingAManagedPropertyOutsideAWriteTransactionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "outside-write", objectTypes: [Dog.self]))
            let rex = try db.write { db.create(Dog.self, value: ["name": "Rex"]) }
            rex.name = "Max"
        }
        #expect(errorOutput(result).contains("cannot modify Dog.name outside a write transaction; call write {} or beginWrite() first"))
    }

    @Test func changingAPrimaryKeyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "change-key", objectTypes: [StringKeyed.self]))
            try db.write {
                let object = db.create(StringKeyed.self, value: ["key": "a"])
                object.key = "b"
            }
        }
        #expect(errorOutput(result).contains("StringKeyed"))
        #expect(errorOutput(result).contains("key"))
    }
}

@Suite struct AddCreateDeleteTests {
    @Test(arguments: Storage.allCases)
    func addMakesTheObjectManagedAndLive(storage: Storage) throws {
        let test = try TestDatabase(storage, [Dog.self]), db = test.db
        let rex = Dog(value: ["name": "Rex", "age": 3])
        try db.write { db.add(rex) }
        #expect(rex.database === db)
        let fetched = try #require(db.object(ofType: Dog.self, forPrimaryKey: rex._id))
        #expect(fetched.isSameObject(as: rex))
        #expect(fetched !== rex)
        try db.write { fetched.age = 4 }
        #expect(rex.age == 4, "both read the stored object")
        try db.write { db.add(rex) }  // already managed: nothing happens
        #expect(db.objects(Dog.self).count == 1)
        #expect(!rex.isSameObject(as: Dog()))
        #expect(!rex.isSameObject(as: nil))
    }

    @Test(arguments: Storage.allCases)
    func updatePolicies(storage: Storage) throws {
        let test = try TestDatabase(storage, [StringKeyed.self, Note.self]), db = test.db
        try db.write { db.add(StringKeyed(value: ["key": "a", "value": 1])) }

        expectCofferError(.primaryKeyExists, containing: "StringKeyed", "a") {
            try db.write { try db.tryAdd(StringKeyed(value: ["key": "a", "value": 2])) }
        }
        #expect(db.objects(StringKeyed.self).map(\.value) == [1], "nothing of the failed add was written")

        // A failed add leaves the transaction usable.
        try db.write {
            expectCofferError(.primaryKeyExists) { try db.tryAdd(StringKeyed(value: ["key": "a"])) }
            db.add(StringKeyed(value: ["key": "b", "value": 5]))
        }
        #expect(db.objects(StringKeyed.self).count == 2)

        let modified = StringKeyed(value: ["key": "a", "value": 10])
        try db.write { db.add(modified, update: .modified) }
        #expect(modified.database === db)
        #expect(db.object(ofType: StringKeyed.self, forPrimaryKey: "a")?.value == 10)
        try db.write { db.add(StringKeyed(value: ["key": "a", "value": 11]), update: .all) }
        #expect(db.object(ofType: StringKeyed.self, forPrimaryKey: "a")?.value == 11)
        #expect(modified.value == 11, "the added object is a view of the stored one")
        #expect(db.objects(StringKeyed.self).count == 2)

        expectCofferError(.invalidArgument, containing: "Note", "no primary key") {
            try db.write { try db.tryAdd(Note(), update: .modified) }
        }
        expectCofferError(.invalidArgument, containing: "Note") {
            _ = try db.write { try db.tryCreate(Note.self, value: ["text": "x"], update: .all) }
        }
    }

    @Test(arguments: Storage.allCases)
    func createFromValues(storage: Storage) throws {
        let test = try TestDatabase(storage, [Dog.self, StringKeyed.self]), db = test.db
        let rex = try db.write { db.create(Dog.self, value: ["name": "Rex", "age": 3, "breed": "Beagle"]) }
        #expect(rex.database === db)
        #expect(rex.name == "Rex")
        #expect(rex.color == "")
        #expect(rex._id != ObjectId())

        let copy = try db.write { db.create(Dog.self, value: Dog(value: ["name": "Copy", "breed": "Pug"])) }
        #expect(copy.breed == "Pug")

        try db.write { db.create(StringKeyed.self, value: ["key": "k", "value": 1]) }
        // Updating with some properties leaves the others.
        let updated = try db.write { db.create(StringKeyed.self, value: ["key": "k"], update: .modified) }
        #expect(updated.value == 1)
        try db.write { db.create(StringKeyed.self, value: ["key": "k", "value": 7], update: .all) }
        #expect(db.objects(StringKeyed.self).map(\.value) == [7])
    }

    @Test func createRejectsBadValuesByName() throws {
        let test = try TestDatabase(.plain, [Dog.self, AllTypes.self, StringKeyed.self]), db = test.db
        try db.write {
            expectCofferError(.notFound, containing: "Dog", "nmae") { try db.tryCreate(Dog.self, value: ["nmae": "Rex"]) }
            expectCofferError(.type, containing: "Dog.age", "int", "\"old\"") { try db.tryCreate(Dog.self, value: ["age": "old"]) }
            expectCofferError(.type, containing: "Dog.name", "required") { try db.tryCreate(Dog.self, value: ["name": NSNull()]) }
            expectCofferError(.type, containing: "AllTypes.int16") { try db.tryCreate(AllTypes.self, value: ["int16": 70_000]) }
            expectCofferError(.type, containing: "AllTypes.priority") { try db.tryCreate(AllTypes.self, value: ["priority": 2]) }
            expectCofferError(.invalidArgument, containing: "6 properties", "2 values") { try db.tryCreate(Dog.self, value: ["a", "b"]) }
            expectCofferError(.invalidArgument, containing: "Int") { try db.tryCreate(Dog.self, value: 42) }
            // The C core checks strings: no NUL inside.
            expectCofferError(.invalidArgument, containing: "StringKeyed") { try db.tryCreate(StringKeyed.self, value: ["key": "a\u{0}b"]) }
        }
        #expect(db.isEmpty, "none of the rejected objects was written")
    }

    @Test(arguments: Storage.allCases)
    func deleteInvalidatesObjects(storage: Storage) throws {
        let test = try TestDatabase(storage, [Dog.self, Book.self]), db = test.db
        let (rex, fido) = try db.write {
            (db.create(Dog.self, value: ["name": "Rex"]), db.create(Dog.self, value: ["name": "Fido"]))
        }
        try db.write { db.delete(rex) }
        #expect(rex.isInvalidated)
        #expect(!fido.isInvalidated)
        #expect(db.objects(Dog.self).map(\.name) == ["Fido"])
        expectCofferError(.notFound, containing: "deleted") { try db.write { try db.tryDelete(rex) } }
        expectCofferError(.invalidArgument, containing: "not managed") { try db.write { try db.tryDelete(Dog()) } }

        try db.write {
            db.add([Book(value: ["title": "A"]), Book(value: ["title": "B"])])
            db.delete(db.objects(Book.self))
        }
        #expect(db.objects(Book.self).isEmpty)
        #expect(!db.isEmpty)
        try db.write { db.deleteAll() }
        #expect(db.isEmpty)
        #expect(fido.isInvalidated)
    }

    @Test func aDeleteThatIsCancelledComesBack() throws {
        let test = try TestDatabase(.plain, [Dog.self]), db = test.db
        let rex = try db.write { db.create(Dog.self, value: ["name": "Rex"]) }
        db.beginWrite()
        db.delete(rex)
        #expect(rex.isInvalidated)
        db.cancelWrite()
        #expect(!rex.isInvalidated)
        #expect(rex.name == "Rex")
    }

    @Test func objectsAddedInACancelledTransactionAreInvalidated() throws {
        let test = try TestDatabase(.plain, [Dog.self]), db = test.db
        let rex = Dog(value: ["name": "Rex"])
        db.beginWrite()
        db.add(rex)
        let created = db.create(Dog.self, value: ["name": "Max"])
        db.cancelWrite()
        #expect(rex.isInvalidated)
        #expect(created.isInvalidated)
        expectCofferError(.misuse, containing: "cancelled") { try db.write { try db.tryAdd(rex) } }
        // The next object may get the same key; the invalidated one never reads it.
        try db.write { db.add(Dog(value: ["name": "Fido"])) }
        #expect(rex.isInvalidated)
    }

    @Test func objectsBelongToOneDatabase() throws {
        let dir = TemporaryDirectory()
        let first = try Database(configuration: configuration(.plain, [Dog.self], in: dir, name: "a.coffer"))
        let second = try Database(configuration: configuration(.plain, [Dog.self], in: dir, name: "b.coffer"))
        let rex = try first.write { first.create(Dog.self, value: ["name": "Rex"]) }
        expectCofferError(.misuse, containing: "another Database") { try second.write { try second.tryAdd(rex) } }
        expectCofferError(.misuse, containing: "another Database") { try second.write { try second.tryDelete(rex) } }
        // Copying through create works.
        let copy = try second.write { second.create(Dog.self, value: rex) }
        #expect(copy.name == "Rex")
        #expect(copy._id == rex._id)
    }

    @Test func readingADeletedObjectStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "read-deleted", objectTypes: [Dog.self]))
            let rex = try db.write { db.create(Dog.self, value: ["name": "Rex"]) }
            try db.write { db.delete(rex) }
            _ = rex.name
        }
        #expect(errorOutput(result).contains("the Dog object has been deleted or invalidated"))
    }
}
