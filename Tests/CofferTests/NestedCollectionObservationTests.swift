// Observing the lists and dictionaries nested in a mixed value: the initial
// call, exact indices and keys for each kind of change, a change further down
// reported as a modification of the element holding it, no call for commits
// that leave the collection as it was, tokens, the collection gone with its
// object or its place, long lists compared position by position, delivery on
// a queue, an actor and as async sequences, and a frozen one not observed.

import Coffer
import Foundation
import Testing

@Suite("observing collections nested in mixed values")
struct NestedCollectionObservationTests {
    let test: TestDatabase
    var db: Database { test.db }
    let log = CallLog()

    init() throws {
        test = try TestDatabase(.inMemory, Bag.types)
    }

    /// A bag whose mixed property holds `["list": [1, 2], "map": ["a": "x"]]`.
    func addBag() throws -> Bag {
        try db.write {
            db.create(Bag.self, value: ["anything": AnyValue.fromDictionary([
                "list": .fromArray([.int(1), .int(2)]), "map": .fromDictionary(["a": .string("x")]),
            ])])
        }
    }

    /// The indices of a change, without reading the collection (which may be gone).
    func indices<C>(_ change: CollectionChange<C>) -> String {
        switch change {
        case .initial: "initial"
        case .update(_, let deletions, let insertions, let modifications): "-\(deletions) +\(insertions) ~\(modifications)"
        case .error(let error): "error \(error)"
        }
    }

    func keys<C>(_ change: DatabaseMapChange<C>) -> String {
        switch change {
        case .initial: "initial"
        case .update(_, let deletions, let insertions, let modifications): "-\(deletions) +\(insertions) ~\(modifications)"
        case .error(let error): "error \(error)"
        }
    }

    @Test func aNestedListReportsExactIndices() throws {
        let bag = try addBag()
        let list = try #require(bag.anything.dictionaryValue?["list"]?.listValue)
        let token = list.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["initial 2"])
        try db.write { list.append(.int(3)) }
        db.refresh()
        try db.write { list.insert(.string("first"), at: 0) }
        db.refresh()
        try db.write { list.remove(at: 2) }
        db.refresh()
        try db.write { list[1] = .double(1.5) }
        db.refresh()
        try db.write { list.move(from: 0, to: 2) }
        db.refresh()
        try db.write {
            list.append(.int(9))
            list[0] = .bool(true)
            list.remove(at: 1)
        }
        db.refresh()
        #expect(Array(list) == [.bool(true), .string("first"), .int(9)])
        // The last write: [1.5, 3, "first"] -> [true, "first", 9]. "first" is
        // kept; before it 1.5 -> true is a modification and 3 a deletion,
        // after it 9 an insertion.
        #expect(log.all == [
            "initial 2",
            "update 3 -[] +[2] ~[]",
            "update 4 -[] +[0] ~[]",
            "update 3 -[2] +[] ~[]",
            "update 3 -[] +[] ~[1]",
            "update 3 -[0] +[2] ~[]",
            "update 3 -[1] +[2] ~[0]",
        ])
    }

    @Test func aNestedDictionaryReportsKeys() throws {
        let bag = try addBag()
        let map = try #require(bag.anything.dictionaryValue?["map"]?.dictionaryValue)
        let token = map.observe { log.append(keys($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { map["b"] = .int(1) }
        db.refresh()
        try db.write { map["a"] = .string("y") }
        db.refresh()
        try db.write { map.removeObject(for: "a") }
        db.refresh()
        try db.write {
            map["b"] = .int(2)
            map["c"] = AnyValue.none
        }
        db.refresh()
        #expect(log.all == ["initial", "-[] +[\"b\"] ~[]", "-[] +[] ~[\"a\"]", "-[\"a\"] +[] ~[]", "-[] +[\"c\"] ~[\"b\"]"])
    }

    @Test func theCollectionAMixedPropertyHoldsIsObserved() throws {
        let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromArray([.int(1)])]) }
        let list = try #require(bag.anything.listValue)
        let token = list.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { list.append(.int(2)) }
        db.refresh()
        #expect(log.all == ["initial 1", "update 2 -[] +[1] ~[]"])

        let dictionary = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromDictionary([:])]) }
        let map = try #require(dictionary.anything.dictionaryValue)
        var calls: [String] = []
        let mapToken = map.observe { calls.append(keys($0)) }
        defer { mapToken.invalidate() }
        db.refresh()
        try db.write { map["k"] = .int(1) }
        db.refresh()
        #expect(calls == ["initial", "-[] +[\"k\"] ~[]"])
    }

    @Test func aChangeFurtherDownModifiesTheElementHoldingIt() throws {
        let bag = try db.write {
            db.create(Bag.self, value: ["anything": AnyValue.fromArray([
                .int(0), .fromArray([.int(1)]), .fromDictionary(["deep": .fromArray([])]),
            ])])
        }
        let outer = try #require(bag.anything.listValue)
        let token = outer.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { outer[1].listValue?.append(.int(2)) }
        db.refresh()
        try db.write { outer[2].dictionaryValue?["deep"]?.listValue?.append(.string("two levels down")) }
        db.refresh()
        #expect(log.all == ["initial 3", "update 3 -[] +[] ~[1]", "update 3 -[] +[] ~[2]"])
    }

    @Test func commitsLeavingTheCollectionAsItWasBringNoCall() throws {
        let bag = try addBag()
        let other = try addBag()
        let list = try #require(bag.anything.dictionaryValue?["list"]?.listValue)
        let token = list.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { bag.numbers.append(1) }
        db.refresh()
        try db.write { bag.anything.dictionaryValue?["map"]?.dictionaryValue?["b"] = .int(1) }
        db.refresh()
        try db.write { other.anything.dictionaryValue?["list"]?.listValue?.append(.int(3)) }
        db.refresh()
        try db.write { list[0] = .int(1) }
        db.refresh()
        #expect(log.all == ["initial 2"], "another property, a sibling, another object, the same value")
        try db.write { list[0] = .int(5) }
        db.refresh()
        #expect(log.all == ["initial 2", "update 2 -[] +[] ~[0]"])
    }

    @Test func anInvalidatedTokenStopsTheCalls() throws {
        let bag = try addBag()
        let list = try #require(bag.anything.dictionaryValue?["list"]?.listValue)
        let token = list.observe { log.append(describe($0)) }
        db.refresh()
        try db.write { list.append(.int(3)) }
        db.refresh()
        token.invalidate()
        try db.write { list.append(.int(4)) }
        db.refresh()
        #expect(log.all == ["initial 2", "update 3 -[] +[2] ~[]"])
    }

    @Test func deletingTheOwnerReportsEveryElementDeletedLast() throws {
        let bag = try addBag()
        let list = try #require(bag.anything.dictionaryValue?["list"]?.listValue)
        let map = try #require(bag.anything.dictionaryValue?["map"]?.dictionaryValue)
        var mapCalls: [String] = []
        let tokens = [list.observe { log.append(indices($0)) }, map.observe { mapCalls.append(keys($0)) }]
        defer { tokens.forEach { $0.invalidate() } }
        db.refresh()
        try db.write { db.delete(bag) }
        db.refresh()
        _ = try addBag()
        db.refresh()
        #expect(log.all == ["initial", "-[0, 1] +[] ~[]"])
        #expect(mapCalls == ["initial", "-[\"a\"] +[] ~[]"])
    }

    @Test func aCollectionWhosePlaceGetsAnotherValueIsDeletedAndObservingEnds() throws {
        let bag = try addBag()
        let list = try #require(bag.anything.dictionaryValue?["list"]?.listValue)
        let token = list.observe { log.append(indices($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { bag.anything.dictionaryValue?["list"] = .string("no longer a list") }
        db.refresh()
        try db.write { bag.anything.dictionaryValue?["list"] = .fromArray([.int(7)]) }
        db.refresh()
        #expect(log.all == ["initial", "-[0, 1] +[] ~[]"], "nothing follows the deletion")
    }

    @Test func aNestedCollectionOfAListOfMixedValuesIsObserved() throws {
        let bag = try db.write { db.create(Bag.self, value: ["mixedList": [AnyValue.fromArray([.int(1)])]]) }
        let inner = try #require(bag.mixedList[0].listValue)
        let token = inner.observe(keyPaths: ["name"]) { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { inner.insert(.int(0), at: 0) }
        db.refresh()
        #expect(log.all == ["initial 1", "update 2 -[] +[0] ~[]"], "key paths do not filter a mixed value's changes")
    }

    @Test func aNestedListObservedOnAQueueGetsFrozenLists() throws {
        let bag = try addBag()
        let list = try #require(bag.anything.dictionaryValue?["list"]?.listValue)
        let token = list.observe(on: DispatchQueue(label: "nested-list")) { change in
            if case .update(let list, _, _, _) = change { self.log.append("frozen \(list.isFrozen) \(list.compactMap(\.intValue))") }
            self.log.append(indices(change))
        }
        defer { token.invalidate() }
        #expect(log.wait(for: 1) == ["initial"])
        try db.write { list.append(.int(3)) }
        #expect(log.wait(for: 3) == ["initial", "frozen true [1, 2, 3]", "-[] +[2] ~[]"])
    }

    @MainActor @Test func aNestedDictionaryGivesItsChangesAsASequence() async throws {
        let test = try TestDatabase(.plain, Bag.types)
        let db = try await Database(configuration: test.configuration)
        let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromDictionary(["a": .int(1)])]) }
        let map = try #require(bag.anything.dictionaryValue)
        // The sequence observes from its first element on: the write comes
        // after the initial change, or the initial would already hold it.
        var changes = map.changes.makeAsyncIterator()
        var seen: [String] = []
        if let initial = await changes.next(isolation: #isolation) { seen.append(keys(initial)) }
        try db.write { map["b"] = .int(2) }
        if let update = await changes.next(isolation: #isolation) { seen.append(keys(update)) }
        #expect(seen.first == "initial")
        #expect(seen.last == "-[] +[\"b\"] ~[]")
    }

    @Test func aLongListChangedThroughoutIsComparedPositionByPosition() throws {
        let values = (0..<1_101).map { AnyValue.int($0) }
        let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromArray(values)]) }
        let list = try #require(bag.anything.listValue)
        var changes: [(deletions: [Int], insertions: [Int], modifications: [Int])] = []
        let token = list.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                changes.append((deletions, insertions, modifications))
            }
        }
        defer { token.invalidate() }
        db.refresh()
        // Reversed, 1,101 × 1,101 positions are beyond the search: each
        // position is compared with its own, and the middle one is unchanged.
        try db.write {
            list.removeAll()
            list.append(objectsIn: values.reversed())
        }
        db.refresh()
        let change = try #require(changes.first)
        #expect(change.deletions.isEmpty && change.insertions.isEmpty)
        #expect(change.modifications == Array(0..<550) + Array(551..<1_101))
        // A short stretch in the middle is searched: a move there is a deletion plus an insertion.
        try db.write { list.move(from: 500, to: 502) }
        db.refresh()
        #expect(changes.count == 2 && changes.last?.deletions == [500] && changes.last?.insertions == [502])
        #expect(changes.last?.modifications == [])
    }

    @MainActor @Test func aNestedListGivesFrozenValuesAsASequenceAndChangesOnAnActor() async throws {
        let test = try TestDatabase(.plain, Bag.types)
        let db = try await Database(configuration: test.configuration)
        let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromArray([.int(1)])]) }
        let list = try #require(bag.anything.listValue)
        let values = list.values
        let log = CallLog()
        let token = await list.observe(on: ObservingActor.shared) { _, change in
            if case .update(let list, _, let insertions, _) = change {
                log.append("\(list.isFrozen) \(list.count) +\(insertions)")
            }
        }
        defer { token.invalidate() }
        // The sequence observes from its first element on: the write comes
        // after the first snapshot, or that snapshot would already hold it.
        var snapshots = values.makeAsyncIterator()
        var counts: [Int] = []
        if let first = await snapshots.next(isolation: #isolation) { #expect(first.isFrozen); counts.append(first.count) }
        try db.write { list.append(.int(2)) }
        if let second = await snapshots.next(isolation: #isolation) { #expect(second.isFrozen); counts.append(second.count) }
        #expect(counts == [1, 2])
        #expect(await log.waitAsync(for: 1) == ["true 2 +[1]"])
    }

    @Test func aNestedCollectionOfAFrozenObjectIsNotObserved() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "nested-frozen-observe", objectTypes: Bag.types))
            let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.fromArray([.fromArray([])])]) }
            _ = bag.freeze().anything.listValue![0].listValue!.observe { _ in }
        }
        #expect(errorOutput(result).contains("a frozen value never changes and cannot be observed"))
    }
}

/// An actor for observers delivered off the database's thread.
private actor ObservingActor {
    static let shared = ObservingActor()
}
