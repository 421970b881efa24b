// Tests of frozen databases, objects, results and collections: pinned to one
// version, readable from other threads and tasks at once, read-only, thawed
// back, released with their last view, and counted as active versions.

import Coffer
import Foundation
import Testing

/// The models of the frozen-view and thread-safe-reference tests.
enum Kennels {
    final class Yard: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted var hounds: List<Hound>
        @Persisted var tags: MutableSet<String>
        @Persisted var scores: Map<String, Int>
    }

    final class Hound: Object {
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted(originProperty: "hounds") var kennels: LinkingObjects<Yard>
    }

    static let types: [Object.Type] = [Yard.self, Hound.self]

    /// A yard "North" with Rex (3), Fido (5) and Bolt (1), tags and scores.
    @discardableResult
    static func fill(_ db: Database) throws -> Yard {
        try db.write {
            let kennel = db.create(Yard.self, value: ["name": "North"])
            for (name, age) in [("Rex", 3), ("Fido", 5), ("Bolt", 1)] {
                kennel.hounds.append(Hound(value: ["name": name, "age": age]))
            }
            kennel.tags.insert("dry")
            kennel.tags.insert("large")
            kennel.scores["clean"] = 4
            return kennel
        }
    }
}

typealias Hound = Kennels.Hound
typealias Yard = Kennels.Yard

@Suite struct FrozenDatabaseTests {
    @Test(arguments: Storage.allCases)
    func aFrozenDatabaseKeepsItsVersion(storage: Storage) throws {
        let test = try TestDatabase(storage, Kennels.types), db = test.db
        try Kennels.fill(db)
        let frozen = db.freeze()
        #expect(frozen.isFrozen && !db.isFrozen)
        #expect(db.freeze() === frozen, "the same snapshot gives the same frozen view")
        #expect(frozen.freeze() === frozen)
        try db.write { db.add(Hound(value: ["name": "Late", "age": 2])) }
        #expect(frozen.objects(Hound.self).count == 3)
        #expect(db.objects(Hound.self).count == 4)
        #expect(!frozen.refresh(), "a frozen database never moves")
        #expect(frozen.objects(Hound.self).count == 3)
        #expect(db.freeze() !== frozen, "a new version gives a new frozen view")
        #expect(db.freeze().objects(Hound.self).count == 4)
        #expect(frozen.thaw() === db, "thawed on its own thread, it is the database it came from")
        #expect(db.thaw() === db)
    }

    @Test func freezingMovesADatabaseBehindToTheNewestVersion() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        try Kennels.fill(db)
        #expect(db.objects(Hound.self).count == 3)
        let other = try Database(configuration: test.configuration)
        try other.write { other.add(Hound(value: ["name": "Other"])) }
        #expect(db.objects(Hound.self).count == 3, "the snapshot stays until refreshed")
        let frozen = db.freeze()
        #expect(frozen.objects(Hound.self).count == 4)
        #expect(db.objects(Hound.self).count == 4, "the database and its frozen view agree")
    }

    @Test(arguments: Storage.allCases)
    func aFrozenObjectKeepsItsValuesAndThaws(storage: Storage) throws {
        let test = try TestDatabase(storage, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        let rex = kennel.hounds[0]
        let frozenRex = rex.freeze()
        #expect(frozenRex.isFrozen && !rex.isFrozen)
        #expect(frozenRex.database?.isFrozen == true)
        #expect(frozenRex.freeze() === frozenRex)
        try db.write { rex.age = 10 }
        #expect(frozenRex.age == 3 && frozenRex.name == "Rex")
        #expect(frozenRex.kennels.first?.name == "North")
        #expect(frozenRex.kennels.first?.isFrozen == true, "links read from a frozen object are frozen")
        #expect(!frozenRex.isInvalidated)
        let thawed = try #require(frozenRex.thaw())
        #expect(!thawed.isFrozen && thawed.age == 10)
        #expect(thawed.isSameObject(as: rex))
        try db.write { db.delete(rex) }
        #expect(frozenRex.name == "Rex", "a frozen object outlives its deletion")
        #expect(frozenRex.thaw() == nil)
        let unmanaged = Hound()
        #expect(!unmanaged.isFrozen && unmanaged.thaw() === unmanaged)
    }

    @Test(arguments: Storage.allCases)
    func frozenResultsKeepTheirQueriesAndObjects(storage: Storage) throws {
        let test = try TestDatabase(storage, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        let grown = db.objects(Hound.self).filter("age > %d", 2).sorted(byKeyPath: "name")
        let frozen = grown.freeze()
        #expect(frozen.isFrozen && !grown.isFrozen)
        try db.write {
            db.add(Hound(value: ["name": "Ace", "age": 7]))
            kennel.hounds[2].age = 9
        }
        #expect(grown.map(\.name) == ["Ace", "Bolt", "Fido", "Rex"])
        #expect(frozen.map(\.name) == ["Fido", "Rex"])
        #expect(frozen.allSatisfy { $0.isFrozen })
        #expect(frozen.max(ofProperty: "age") as Int? == 5)
        #expect(frozen.filter("name BEGINSWITH %@", "R").count == 1, "frozen results can be queried further")
        #expect(frozen.where { $0.age == 5 }.first?.name == "Fido")
        let listResults = kennel.hounds.filter("age < %d", 4).freeze()
        try db.write { kennel.hounds.removeAll() }
        #expect(listResults.map(\.name) == ["Rex"], "results of a list keep the list's objects as they were")
        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen)
        #expect(thawed.map(\.name) == ["Ace", "Bolt", "Fido", "Rex"], "thawed results follow the live data")
    }

    @Test(arguments: Storage.allCases)
    func frozenCollectionsKeepTheirElements(storage: Storage) throws {
        let test = try TestDatabase(storage, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        let hounds = kennel.hounds.freeze(), tags = kennel.tags.freeze(), scores = kennel.scores.freeze()
        #expect(hounds.isFrozen && tags.isFrozen && scores.isFrozen)
        #expect(!kennel.hounds.isFrozen)
        try db.write {
            kennel.hounds.remove(at: 0)
            kennel.tags.insert("warm")
            kennel.scores["clean"] = 1
        }
        #expect(hounds.map(\.name) == ["Rex", "Fido", "Bolt"])
        #expect(Set(tags) == ["dry", "large"])
        #expect(scores["clean"] == 4 && scores.count == 1)
        #expect(try #require(hounds.thaw()).map(\.name) == ["Fido", "Bolt"])
        #expect(try #require(tags.thaw()).count == 3)
        #expect(try #require(scores.thaw())["clean"] == 1)
        try db.write { db.delete(kennel) }
        #expect(hounds.count == 3)
        #expect(hounds.thaw() == nil && tags.thaw() == nil && scores.thaw() == nil)
    }

    @Test func writingAFrozenDatabaseThrowsOrStops() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        try Kennels.fill(db)
        let frozen = db.freeze()
        expectCofferError(.misuse, containing: "frozen", "thaw()") { try frozen.write { } }
        expectCofferError(.misuse, containing: "frozen") { try frozen.tryAdd(Hound()) }
        #expect(!frozen.isInWriteTransaction)
    }

    @Test func settingAFrozenObjectsPropertyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "frozen-set", objectTypes: Kennels.types))
            let rex = try db.write { db.create(Hound.self, value: ["name": "Rex"]) }.freeze()
            rex.name = "Max"
        }
        #expect(errorOutput(result).contains("cannot modify Hound.name: it is frozen"))
    }

    @Test func appendingToAFrozenListStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "frozen-list", objectTypes: Kennels.types))
            let kennel = try Kennels.fill(db).freeze()
            kennel.hounds.append(Hound())
        }
        #expect(errorOutput(result).contains("Yard.hounds: it is frozen"))
    }

    @Test func freezingInAWriteTransactionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "frozen-write", objectTypes: Kennels.types))
            try db.write { _ = db.create(Hound.self).freeze() }
        }
        #expect(errorOutput(result).contains("cannot freeze inside a write transaction"))
    }

    @Test func freezingAnUnmanagedObjectStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Hound().freeze()
        }
        #expect(errorOutput(result).contains("an unmanaged Hound object cannot be frozen"))
    }

    @Test func freezingAnUnmanagedListStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Yard().hounds.freeze()
        }
        #expect(errorOutput(result).contains("an unmanaged List<Hound> cannot be frozen"))
    }

    /// A frozen view pins its version until the last frozen database, object
    /// or results of it goes away, and counts against the limit of versions.
    @Test(arguments: [Storage.plain, .encrypted])
    func aFrozenViewPinsItsVersionUntilItsLastViewGoes(storage: Storage) throws {
        let dir = TemporaryDirectory()
        var config = configuration(storage, Kennels.types, in: dir)
        config.maximumNumberOfActiveVersions = 2
        let db = try Database(configuration: config)
        try Kennels.fill(db)
        var frozenRex: Hound? = db.objects(Hound.self).first!.freeze()
        try db.write { db.add(Hound(value: ["name": "Two"])) }
        let frozenAfter = db.objects(Hound.self).freeze()
        // The two frozen versions and the next commit would be three.
        expectCofferError(.limit, containing: "2") { try db.write { try db.tryAdd(Hound()) } }
        #expect(frozenRex?.name == "Rex", "the frozen object still reads its version")
        frozenRex = nil
        try db.write { db.add(Hound(value: ["name": "Three"])) }
        #expect(db.objects(Hound.self).count == 5)
        #expect(frozenAfter.count == 4)
    }

    @Test func aFrozenObjectIsReadFromAnotherThread() throws {
        let test = try TestDatabase(.encrypted, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        let frozen = Frozen(kennel)
        let names = onAnotherThread { frozen.value.hounds.map(\.name) + [frozen.name] }
        #expect(names == ["Rex", "Fido", "Bolt", "North"])
    }

    @Test func thawingOnAnotherThreadGivesADatabaseOfThatThread() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        try Kennels.fill(db)
        let frozen = Frozen(db.objects(Hound.self).sorted(byKeyPath: "age"))
        let ages = onAnotherThread { () -> [Int] in
            guard let live = frozen.value.thaw() else { return [] }
            try! live.database.write { live[0].age = 30 }
            return live.map(\.age)
        }
        #expect(ages == [3, 5, 30])
        db.refresh()
        #expect(db.objects(Hound.self).sorted(byKeyPath: "age").map(\.name) == ["Rex", "Fido", "Bolt"])
    }

    /// Eight tasks read the same frozen objects, results and collections at
    /// once while another thread writes; run under the Thread Sanitizer too.
    @Test(arguments: [Storage.plain, .encrypted])
    func frozenObjectsAreReadFromEightTasksAtOnce(storage: Storage) async throws {
        let test = try TestDatabase(storage, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        let frozenKennel = Frozen(kennel)
        let frozenHounds = Frozen(db.objects(Hound.self).sorted(byKeyPath: "name"))
        let configuration = test.configuration
        let writer = Thread {
            let live = try! Database(configuration: configuration)
            for index in 0..<50 {
                try! live.write { live.add(Hound(value: ["name": "H\(index)", "age": index])) }
            }
        }
        writer.start()
        let totals = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var total = 0
                    for _ in 0..<25 {
                        let hounds = frozenHounds.value
                        total += hounds.count + hounds.reduce(0) { $0 + $1.age }
                        total += frozenKennel.hounds.count + frozenKennel.tags.count + (frozenKennel.scores["clean"] ?? 0)
                        total += hounds.filter("age >= %d", task % 4).count
                        total += hounds[0].kennels.count
                    }
                    return total
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        // Per round: 3 hounds aged 9 in all (12), 3 + 2 + 4 in the kennel (9), one
        // kennel (1), and the hounds of the task's filter.
        let matching: [Int] = [3, 3, 2, 2]
        let expected: [Int] = (0..<8).map { (task: Int) -> Int in 25 * (22 + matching[task % 4]) }
        #expect(totals.sorted() == expected.sorted())
        while writer.isExecuting || !writer.isFinished { try await Swift.Task.sleep(nanoseconds: 1_000_000) }
    }
}
