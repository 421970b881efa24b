// Tests of the lists and dictionaries nested in AnyValue as live collections:
// changed in place inside a write, read again after another thread's commit
// and after reopening, frozen with their object, nested to the core's limit,
// stopping the program when changed outside a write, and the notifications
// of their object (observing the collections themselves:
// NestedCollectionObservationTests).

import Coffer
import Foundation
import Testing

@Suite struct AnyValueLiveCollectionTests {
    /// A bag whose mixed property holds `["list": [1], "map": ["a": "x"]]`.
    func addBag(_ db: Database) throws -> Bag {
        try db.write {
            db.create(Bag.self, value: ["anything": AnyValue.fromDictionary([
                "list": .fromArray([.int(1)]), "map": .fromDictionary(["a": .string("x")]),
            ])])
        }
    }

    @Test func valuesMadeInMemoryAreUnmanaged() {
        let list = AnyValue.fromArray([.int(1), .fromDictionary(["k": .none])])
        #expect(list.listValue?.database == nil && list.listValue?.count == 2)
        #expect(list == .list([.int(1), .dictionary(["k": .none])]), "literals make the same unmanaged values")
        list.listValue?.append(.string("more"))
        #expect(list.listValue?.last == .string("more"), "an unmanaged list changes in memory")
        #expect(AnyValue.fromDictionary(["a": .int(1)]) != .fromDictionary(["a": .int(2)]))
        #expect(AnyValue.fromArray([]) != .fromDictionary([:]))
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func equalValuesHashAlike(storage: Storage) throws {
        let test = try TestDatabase(storage, Bag.types), db = test.db
        let bag = try addBag(db)
        let copy: AnyValue = .dictionary(["map": .dictionary(["a": .string("x")]), "list": .list([.int(1)])])
        #expect(bag.anything == copy && bag.anything.hashValue == copy.hashValue)
        let again = try #require(db.objects(Bag.self).first)
        #expect(AnyValue.object(bag) == .object(again) && AnyValue.object(bag).hashValue == AnyValue.object(again).hashValue)
        let values: Set<AnyValue> = [.double(.nan), .double(.nan), .int(1), copy, bag.anything, .fromArray([]), .object(bag), .object(again)]
        #expect(values.count == 5)
        #expect(!values.contains(.fromArray([.int(1)])) && values.contains(.list([])))
    }

    @Test(arguments: Storage.allCases)
    func nestedCollectionsChangeInPlaceAndPersist(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let config = configuration(storage, Bag.types, in: dir)
        let db = try Database(configuration: config)
        let bag = try addBag(db)
        let dictionary = try #require(bag.anything.dictionaryValue)
        #expect(dictionary.database != nil && !dictionary.isFrozen)
        let list = try #require(dictionary["list"]?.listValue)
        #expect(list.database != nil)
        try db.write {
            bag.anything.dictionaryValue?["list"]?.listValue?.append(.int(2))
            list.insert(.fromArray([.bool(true)]), at: 0)
            list[0].listValue?.append(.string("deep"))
            bag.anything.dictionaryValue?["map"]?.dictionaryValue?["b"] = .double(0.5)
            dictionary["map"]?.dictionaryValue?.removeObject(for: "a")
            dictionary["added"] = .fromDictionary(["n": .fromArray([.int(7)])])
        }
        let expected: AnyValue = .dictionary([
            "list": .list([.list([.bool(true), .string("deep")]), .int(1), .int(2)]),
            "map": .dictionary(["b": .double(0.5)]),
            "added": .dictionary(["n": .list([.int(7)])]),
        ])
        #expect(bag.anything == expected)
        #expect(Array(list) == [.list([.bool(true), .string("deep")]), .int(1), .int(2)], "the view read before the write is live")

        try db.write {
            dictionary["list"] = .string("replaced")
            dictionary.removeObject(for: "added")
        }
        #expect(bag.anything == .dictionary(["list": .string("replaced"), "map": .dictionary(["b": .double(0.5)])]))
        if storage != .inMemory {
            let reopened = try Database(configuration: config)
            let stored = try #require(reopened.objects(Bag.self).first)
            #expect(stored.anything == bag.anything)
        }
    }

    @Test func readingByNameGivesTheLiveValueToo() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let bag = try addBag(db)
        let byName = try #require(bag.value(forKey: "anything") as? AnyValue)
        let subscripted = try #require(bag["anything"] as? AnyValue)
        try db.write { byName.dictionaryValue?["list"]?.listValue?.append(.int(2)) }
        #expect(subscripted.dictionaryValue?["list"] == .list([.int(1), .int(2)]))
        #expect(Bag(value: ["anything": AnyValue.fromArray([])]).value(forKey: "anything") as? AnyValue == .list([]))
    }

    @Test func assigningANewValueReplacesTheNestedCollection() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let bag = try addBag(db)
        let other = try db.write { db.create(Bag.self) }
        try db.write {
            other.anything = bag.anything  // a copy of the live dictionary's contents
            bag.anything = .fromArray([.int(9)])
        }
        #expect(other.anything.dictionaryValue?["list"] == .list([.int(1)]))
        #expect(bag.anything == .list([.int(9)]))
        #expect(bag.anything.dictionaryValue == nil)
        try db.write { other.anything.dictionaryValue?["list"]?.listValue?.removeAll() }
        #expect(other.anything.dictionaryValue?["list"] == .list([]))
        #expect(bag.anything == .list([.int(9)]), "the copy is its own collection")
    }

    @Test func listsAndMapsOfMixedValuesHoldLiveNestedCollections() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let bag = try db.write {
            db.create(Bag.self, value: ["mixedList": [AnyValue.fromArray([.int(1)])], "mixedMap": ["m": AnyValue.fromDictionary([:])]])
        }
        try db.write {
            bag.mixedList[0].listValue?.append(.int(2))
            bag.mixedList.first?.listValue?.append(.int(3))
            bag.mixedMap["m"]?.dictionaryValue?["k"] = .fromArray([.string("v")])
            for case .dictionary(let inner) in bag.mixedMap.values {
                inner["k"]?.listValue?.append(.string("w"))
            }
            for case .list(let inner) in bag.mixedList {
                inner.append(.int(4))
            }
        }
        #expect(Array(bag.mixedList) == [.list([.int(1), .int(2), .int(3), .int(4)])])
        #expect(bag.mixedMap["m"] == .dictionary(["k": .list([.string("v"), .string("w")])]))
    }

    @Test func aCommitOfAnotherThreadIsSeenAfterRefresh() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let bag = try addBag(db)
        let list = try #require(bag.anything.dictionaryValue?["list"]?.listValue)
        let configuration = test.configuration
        let written = onAnotherThread { () -> Bool in
            guard let other = try? Database(configuration: configuration),
                  let stored = other.objects(Bag.self).first else { return false }
            return (try? other.write { stored.anything.dictionaryValue?["list"]?.listValue?.append(.string("there")) }) != nil
        }
        #expect(written)
        db.refresh()
        #expect(Array(list) == [.int(1), .string("there")])
    }

    @Test func aFrozenObjectGivesFrozenNestedCollections() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let bag = try addBag(db)
        let frozen = bag.freeze()
        let list = try #require(frozen.anything.dictionaryValue?["list"]?.listValue)
        #expect(list.isFrozen && frozen.anything.dictionaryValue?.isFrozen == true)
        try db.write { bag.anything.dictionaryValue?["list"]?.listValue?.append(.int(2)) }
        #expect(Array(list) == [.int(1)], "the frozen list keeps its version")
        #expect(bag.anything.dictionaryValue?["list"]?.listValue?.count == 2)
        let thawed = try #require(list.thaw())
        #expect(!thawed.isFrozen && Array(thawed) == [.int(1), .int(2)])
    }

    @Test func aFrozenNestedCollectionCannotBeChanged() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "nested-frozen", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromArray([.fromArray([])])]) }
            let frozen = bag.freeze().anything.listValue![0].listValue!
            try db.write { frozen.append(.int(1)) }
        }
        #expect(errorOutput(result).contains("cannot insert into Bag.anything[0]: it is frozen, and frozen objects and collections are read-only"))
    }

    /// `depth` lists, each inside the one before, the innermost holding 1.
    func nested(_ depth: Int) -> AnyValue {
        (1..<depth).reduce(AnyValue.fromArray([.int(1)])) { inner, _ in .fromArray([inner]) }
    }

    @Test func liveCollectionsReachTheNestingLimit() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let bag = try db.write { db.create(Bag.self, value: ["anything": nested(100)]) }
        var innermost = bag.anything
        for _ in 1..<100 {
            innermost = try #require(innermost.listValue?[0])
        }
        let list = try #require(innermost.listValue)
        try db.write { list.append(.int(2)) }
        #expect(Array(list) == [.int(1), .int(2)])
        #expect(bag.anything != .list([nested(99)]), "the deepest list changed")
    }

    @Test func nestingBeyondTheLimitStopsNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "nesting-limit", objectTypes: Bag.types))
            let deep = (1..<100).reduce(AnyValue.fromArray([])) { inner, _ in .fromArray([inner]) }
            let bag = try db.write { db.create(Bag.self, value: ["anything": deep]) }
            var innermost = bag.anything
            for _ in 1..<100 { innermost = innermost.listValue![0] }
            try db.write { innermost.listValue!.append(.fromArray([])) }
        }
        #expect(errorOutput(result).contains("limit is 100"))
    }

    @Test func changingALiveNestedListOutsideAWriteStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "nested-outside-write", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromDictionary(["list": .fromArray([])])]) }
            bag.anything.dictionaryValue?["list"]?.listValue?.append(.int(1))
        }
        #expect(errorOutput(result).contains("Bag.anything[\"list\"]"))
        #expect(errorOutput(result).contains("write transaction"))
    }

    @Test func changingALiveNestedDictionaryOutsideAWriteStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "nested-map-outside-write", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromDictionary([:])]) }
            bag.anything.dictionaryValue?["k"] = .int(1)
        }
        #expect(errorOutput(result).contains("Bag.anything"))
        #expect(errorOutput(result).contains("write transaction"))
    }

    @Test func aNestedCollectionWhosePlaceNoLongerHoldsOneStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "nested-gone", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromArray([.fromArray([])])]) }
            let inner = bag.anything.listValue![0].listValue!
            try db.write { bag.anything.listValue![0] = .int(1) }
            _ = inner.count
        }
        #expect(errorOutput(result).contains("'Bag', property 'anything': list element 0 holds int, not a list"))
    }

    @Test func theListOfAMixedPropertyIsPassedInAReference() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromArray([.int(1)])]) }
        let reference = ThreadSafeReference(to: try #require(bag.anything.listValue))
        let configuration = test.configuration
        let read = onAnotherThread { () -> [Int] in
            guard let other = try? Database(configuration: configuration),
                  let list = other.resolve(reference) else { return [] }
            return list.compactMap(\.intValue)
        }
        #expect(read == [1])
    }

    @Test func aNestedCollectionIsNotPassedInAReferenceOnItsOwn() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "nested-reference", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromArray([.fromArray([])])]) }
            _ = ThreadSafeReference(to: bag.anything.listValue![0].listValue!)
        }
        #expect(errorOutput(result).contains("Bag.anything[0] is nested in a mixed value and cannot be passed in a ThreadSafeReference"))
    }

    @Test func theObjectIsNotifiedOfChangesInsideItsMixedProperty() throws {
        let test = try TestDatabase(.inMemory, Bag.types), db = test.db
        let bag = try addBag(db)
        var names: [[String]] = []
        let token = bag.observe { change in
            if case .change(_, let properties) = change { names.append(properties.map(\.name)) }
        }
        defer { token.invalidate() }
        db.refresh()
        try db.write { bag.anything.dictionaryValue?["list"]?.listValue?.append(.int(2)) }
        db.refresh()
        try db.write { bag.anything.dictionaryValue?["new"] = .int(3) }
        db.refresh()
        #expect(names == [["anything"], ["anything"]])
    }
}
