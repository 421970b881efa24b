// Tests of MutableSet and Map, unmanaged and managed.

import Coffer
import Foundation
import Testing

/// `MutableSet` and `Map`, unmanaged and managed.
@Suite struct SetAndMapTests {
    func edit(_ tags: MutableSet<String>) {
        tags.insert("a")
        tags.insert("b")
        tags.insert("a")
        tags.insert(objectsIn: ["c", "d"])
        tags.remove("d")
        tags.formUnion(["e"])
        tags.formIntersection(["a", "b", "e", "z"])
        tags.subtract(["b"])
    }

    @Test(arguments: [false, true])
    func setsEditAlikeUnmanagedAndManaged(managed: Bool) throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let bag = Bag()
        if managed {
            try db.write { db.add(bag) }
        }
        try db.write { edit(bag.tags) }
        #expect(Set(bag.tags) == ["a", "e"])
        #expect(bag.tags.count == 2)
        #expect(bag.tags.contains("e"))
        #expect(!bag.tags.contains("b"))
        #expect(bag.tags.isSubset(of: ["a", "e", "f"]))
        #expect(bag.tags.intersects(["e"]))
        try db.write { bag.tags.removeAll() }
        #expect(bag.tags.isEmpty)
    }

    @Test(arguments: Storage.allCases)
    func managedSetsOfObjects(storage: Storage) throws {
        let test = try TestDatabase(storage, Bag.types), db = test.db
        let rex = Social.Dog(value: ["name": "Rex"])
        let bag = Bag(value: ["tags": ["x", "x", "y"]])
        bag.favouriteDogs.insert(rex)
        bag.favouriteDogs.insert(rex)
        try db.write { db.add(bag) }
        #expect(Set(bag.tags) == ["x", "y"])
        #expect(bag.favouriteDogs.count == 1)
        try db.write { bag.favouriteDogs.insert(db.objects(Social.Dog.self)[0]) }
        #expect(bag.favouriteDogs.count == 1, "the same stored object is not added twice")
        #expect(bag.favouriteDogs.contains(rex))
        try db.write { db.delete(rex) }
        #expect(bag.favouriteDogs.isEmpty, "a deleted object leaves every set")
    }

    @Test(arguments: Storage.allCases)
    func mapsOfValuesAndObjects(storage: Storage) throws {
        let test = try TestDatabase(storage, Bag.types), db = test.db
        let bag = Bag(value: ["scores": ["ada": 3]])
        bag.scores["bob"] = 5
        #expect(bag.scores.keys == ["ada", "bob"])
        let rex = Social.Dog(value: ["name": "Rex"])
        bag.pets["first"] = rex
        try db.write { db.add(bag) }
        #expect(bag.scores.count == 2)
        #expect(bag.scores["ada"] == 3)
        #expect(bag.scores["nobody"] == nil)
        try db.write {
            bag.scores["cy"] = 7
            bag.scores["ada"] = nil
            bag.scores.removeObject(forKey: "bob")
        }
        #expect(Dictionary(uniqueKeysWithValues: bag.scores.map { ($0.key, $0.value) }) == ["cy": 7])
        #expect(bag.scores.values == [7])
        #expect(bag.pets["first"]??.name == "Rex")
        try db.write { db.delete(rex) }
        #expect(bag.pets.count == 1, "the key stays")
        let first = try #require(bag.pets["first"], "the key stays")
        #expect(first == nil, "a map value whose object is deleted becomes nil")
        try db.write { bag.scores.removeAll() }
        #expect(bag.scores.isEmpty)
    }

    @Test func aBadMapKeyIsAnError() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        expectCofferError(.invalidArgument, containing: "a.b") {
            _ = try db.write { try db.tryCreate(Bag.self, value: ["scores": ["a.b": 1]]) }
        }
        #expect(db.objects(Bag.self).isEmpty)
    }

    @Test func aBadMapKeyOnAManagedMapStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "map-bad-key", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self) }
            try db.write { bag.scores["$x"] = 1 }
        }
        #expect(errorOutput(result).contains("$x"))
    }
}
