// Tests of List, unmanaged and managed.

import Coffer
import Foundation
import Testing

/// `List`: unmanaged in memory, managed as a live view of the database.
@Suite struct ListTests {
    /// The same edits on an unmanaged and a managed list give the same elements.
    func edit(_ list: List<Int>) {
        list.append(1)
        list.append(contentsOf: [2, 3, 4])
        list.insert(0, at: 0)
        list.remove(at: 4)
        list.move(from: 0, to: 3)
        list.swapAt(0, 1)
        list[3] = 30
        list.replace(index: 2, object: 20)
    }

    @Test func unmanagedListsEditInMemory() {
        let bag = Bag()
        edit(bag.numbers)
        #expect(Array(bag.numbers) == [2, 1, 20, 30])
        #expect(bag.numbers.index(of: 20) == 2)
        #expect(bag.numbers.index(of: 7) == nil)
        bag.numbers.removeAll()
        #expect(bag.numbers.isEmpty)
    }

    @Test(arguments: Storage.allCases)
    func managedListsEditTheDatabase(storage: Storage) throws {
        let test = try TestDatabase(storage, Bag.types), db = test.db
        let bag = Bag()
        bag.numbers.append(contentsOf: [7, 8])
        try db.write { db.add(bag) }
        #expect(Array(bag.numbers) == [7, 8])
        try db.write {
            bag.numbers.removeAll()
            edit(bag.numbers)
        }
        #expect(Array(bag.numbers) == [2, 1, 20, 30])
        #expect(bag.numbers.count == 4)
        #expect(bag.numbers[2] == 20)
        #expect(bag.numbers.index(of: 30) == 3)
        #expect(db.objects(Bag.self)[0].numbers.reduce(0, +) == 53, "another object reads the same list")
        #expect(bag.numbers.database === db)

        try db.write {
            bag.numbers.removeLast()
            bag.numbers = List()
        }
        #expect(bag.numbers.isEmpty, "assigning a list replaces the contents")
    }

    @Test func optionalElementsAndCancelledChanges() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let bag = try db.write { db.create(Bag.self, value: ["optionalNames": ["a", nil, "c"]]) }
        #expect(Array(bag.optionalNames) == ["a", nil, "c"])
        db.beginWrite()
        bag.optionalNames.append("d")
        db.cancelWrite()
        #expect(Array(bag.optionalNames) == ["a", nil, "c"], "a cancelled write leaves the list as it was")
    }

    @Test func listsOfObjects() throws {
        let test = try TestDatabase(.encrypted, Social.types), db = test.db
        let ada = try db.write { db.create(Social.Person.self, value: ["name": "Ada"]) }
        let rex = Social.Dog(value: ["name": "Rex"])
        try db.write {
            ada.dogs.append(rex)
            ada.dogs.append(Social.Dog(value: ["name": "Fido"]))
            ada.dogs.append(rex)
        }
        #expect(ada.dogs.map(\.name) == ["Rex", "Fido", "Rex"])
        #expect(ada.dogs.index(of: rex) == 0)
        #expect(db.objects(Social.Dog.self).count == 2, "appending a managed object again links it again")
        try db.write { ada.dogs.remove(at: 0) }
        #expect(db.objects(Social.Dog.self).count == 2, "removing a link deletes no object")
        #expect(ada.dogs.map(\.name) == ["Fido", "Rex"])
    }

    @Test func aWrongCreateValueNamesTheProperty() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        expectCofferError(.type, containing: "Bag.numbers") {
            _ = try db.write { try db.tryCreate(Bag.self, value: ["numbers": ["one"]]) }
        }
        expectCofferError(.type, containing: "Bag.numbers") {
            _ = try db.write { try db.tryCreate(Bag.self, value: ["numbers": 1]) }
        }
        #expect(db.objects(Bag.self).isEmpty)
    }

    @Test func appendingOutsideAWriteTransactionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "list-outside-write", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self) }
            bag.numbers.append(1)
        }
        #expect(errorOutput(result).contains("cannot insert into Bag.numbers outside a write transaction"))
    }

    @Test func anIndexOutOfRangeStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "list-out-of-range", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self, value: ["numbers": [1, 2]]) }
            _ = bag.numbers[2]
        }
        #expect(errorOutput(result).contains("index 2 is out of range for Bag.numbers, which has 2 elements"))
    }

    @Test func aDeletedOwnersListStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "list-deleted", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self, value: ["numbers": [1, 2]]) }
            try db.write { db.delete(bag) }
            _ = bag.numbers.count
        }
        #expect(errorOutput(result).contains("Bag object has been deleted"))
    }

    @Test func aListUsedOnAnotherThreadStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "list-thread", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self, value: ["numbers": [1]]) }
            let box = UncheckedBox(bag.numbers)
            _ = onAnotherThread { box.value.count }
        }
        #expect(errorOutput(result).contains("opened on another thread"))
    }
}
