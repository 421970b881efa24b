// Results of values written as Realm Swift code writes them, with only the
// import changed: `Results<Int>` from a list's `sorted(ascending:)` and
// `distinct()`, read, aggregated, frozen and observed with RealmCollectionChange.

import CofferRealmCompat
import Foundation
import Testing

final class Walker: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var ages: List<Int>
    @Persisted var weights: List<Double>
    @Persisted var tags: List<String>
    @Persisted var scores: List<Int?>
}

@Suite struct RealmResultsOfValuesTests {
    let configuration: Realm.Configuration
    let realm: Realm

    init() throws {
        var config = Realm.Configuration(objectTypes: [Walker.self])
        config.inMemoryIdentifier = "realm-results-of-values-\(UUID().uuidString)"
        configuration = config
        realm = try Realm(configuration: config)
    }

    func walker(_ ages: [Int], tags: [String] = [], weights: [Double] = []) throws -> Walker {
        let walker = Walker(value: ["name": "Ann", "ages": ages, "tags": tags, "weights": weights])
        try realm.write { realm.add(walker) }
        return walker
    }

    @Test func resultsOfIntReadAsRealmsDo() throws {
        let walker = try walker([5, 3, 9, 3], tags: ["b", "a", "b"], weights: [2.5, 1.5])
        let ages: Results<Int> = walker.ages.sorted(ascending: true)
        let descending: Results<Int> = walker.ages.sorted(ascending: false)
        let distinct: Results<Int> = walker.ages.distinct()
        let tags: Results<String> = walker.tags.distinct().sorted(ascending: true)
        #expect(Array(ages) == [3, 3, 5, 9])
        #expect(Array(descending) == [9, 5, 3, 3])
        #expect(Array(distinct) == [5, 3, 9])
        #expect(Array(tags) == ["a", "b"])
        #expect(ages.count == 4 && ages.first == 3 && ages.last == 9 && ages[2] == 5)
        #expect(Array(ages.indices) == [0, 1, 2, 3] && ages.index(of: 5) == 2 && ages.index(of: 4) == nil)
        #expect(ages.min() == 3 && ages.max() == 9 && ages.sum() == 20)
        #expect(ages.average() == 5.0)
        let weights: Results<Double> = walker.weights.sorted()
        #expect(weights.sum() == 4.0 && weights.average() == 2.0 && weights.min() == 1.5)
        #expect(ages.realm === realm && ages.database === realm)
        #expect(ages.description == "Results<Int>[3, 3, 5, 9]")
        #expect(!ages.isFrozen)

        try realm.write { walker.ages.append(1) }
        #expect(Array(ages) == [1, 3, 3, 5, 9], "the results read their list anew")
        #expect(ages.sum() == 21)
        let empty: Results<Int> = try self.walker(ages: []).ages.sorted()
        #expect(empty.isEmpty && empty.sum() == 0 && empty.average() as Double? == nil && empty.min() == nil)
    }

    func walker(ages: [Int]) throws -> Walker {
        let walker = Walker(value: ["name": "Bo", "ages": ages])
        try realm.write { realm.add(walker) }
        return walker
    }

    @Test func coffersEarlierNameIsTheSameType() throws {
        let walker = try walker([2, 1])
        let view: ValueResults<Int> = walker.ages.sorted()
        let results: Results<Int> = view
        #expect(Array(results) == [1, 2])
    }

    @Test func frozenResultsOfIntKeepTheirValues() throws {
        let walker = try walker([4, 2])
        let ages: Results<Int> = walker.ages.sorted()
        let frozen = ages.freeze()
        #expect(frozen.isFrozen && frozen.freeze().isFrozen)
        try realm.write { walker.ages.append(1) }
        #expect(Array(frozen) == [2, 4], "frozen at the version they were frozen at")
        #expect(Array(ages) == [1, 2, 4])
        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen && Array(thawed) == [1, 2, 4])
        let read = try #require(frozen.realm)
        #expect(read.isFrozen)
    }

    @Test func observingResultsOfIntReportsRowsOfTheSortedView() throws {
        let walker = try walker([30, 10, 20])
        let ages: Results<Int> = walker.ages.sorted(ascending: true)
        var calls: [String] = []
        let token = ages.observe { (changes: RealmCollectionChange<Results<Int>>) in
            switch changes {
            case .initial(let results):
                calls.append("initial \(Array(results))")
            case .update(let results, let deletions, let insertions, let modifications):
                calls.append("\(Array(results)) -\(deletions) +\(insertions) ~\(modifications)")
            case .error(let error):
                calls.append("error \(error)")
            }
        }
        defer { token.invalidate() }
        realm.refresh()
        #expect(calls == ["initial [10, 20, 30]"])

        try realm.write { walker.ages.append(15) }
        realm.refresh()
        #expect(calls.last == "[10, 15, 20, 30] -[] +[1] ~[]")
        // 30 becomes 31: still last, a modification in place.
        try realm.write { walker.ages[0] = 31 }
        realm.refresh()
        #expect(calls.last == "[10, 15, 20, 31] -[] +[] ~[3]")
        // 10 becomes 25: it changes places, a deletion plus an insertion.
        try realm.write { walker.ages[1] = 25 }
        realm.refresh()
        #expect(calls.last == "[15, 20, 25, 31] -[0] +[2] ~[]")
        // A move in the list leaves the sorted view as it was: no call.
        try realm.write { walker.ages.move(from: 0, to: 3) }
        realm.refresh()
        #expect(calls.count == 4)
        try realm.write { walker.ages.removeAll() }
        realm.refresh()
        #expect(calls.last == "[] -[0, 1, 2, 3] +[] ~[]")
    }

    @MainActor @Test func resultsOfIntAsAsyncSequences() async throws {
        let realm = try await Realm(configuration: configuration)
        let walker = Walker(value: ["name": "Di", "ages": [2, 1]])
        try realm.write { realm.add(walker) }
        let ages: Results<Int> = walker.ages.distinct()
        var changes = ages.changes.makeAsyncIterator()
        var values = ages.values.makeAsyncIterator()
        guard case .initial(let first)? = await changes.next(isolation: #isolation) else {
            Issue.record("no initial change"); return
        }
        #expect(Array(first) == [2, 1])
        #expect(await values.next(isolation: #isolation).map(Array.init) == [2, 1])
        try realm.write { walker.ages.append(objectsIn: [2, 7]) }
        guard case .update(let now, let deletions, let insertions, let modifications)? = await changes.next(isolation: #isolation) else {
            Issue.record("no update"); return
        }
        #expect(Array(now) == [2, 1, 7] && now.isFrozen)
        #expect(deletions == [] && insertions == [2] && modifications == [])
        let snapshot = try #require(await values.next(isolation: #isolation))
        #expect(Array(snapshot) == [2, 1, 7] && snapshot.isFrozen)
    }

    @Test func resultsOfOptionalsAndStrings() throws {
        let walker = Walker(value: ["name": "Cy", "scores": [3, nil, 3, 1], "tags": ["x", "y", "x"]])
        try realm.write { realm.add(walker) }
        let scores: Results<Int?> = walker.scores.distinct()
        #expect(Array(scores) == [3, nil, 1])
        let tags: Results<String> = walker.tags.sorted(ascending: false)
        #expect(Array(tags) == ["y", "x", "x"])
    }
}
