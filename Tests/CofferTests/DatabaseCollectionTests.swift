// Tests of generic code over DatabaseCollection, as Realm code is written over
// RealmCollection: the same functions run on Results, List, MutableSet,
// LinkingObjects and AnyDatabaseCollection, with Realm's members.

import Coffer
import Foundation
import Testing

/// Realm-style generic helpers, written once for every collection of hounds.
enum HoundReport {
    static func summary<C: DatabaseCollection>(_ hounds: C) -> String where C.Element == Hound {
        let names = hounds.sorted(byKeyPath: "age", ascending: false).map(\.name).joined(separator: ",")
        let total: Int = hounds.sum(ofProperty: "age")
        let oldest: Int? = hounds.max(ofProperty: "age")
        let youngest: Int? = hounds.min(ofProperty: "age")
        let average: Double? = hounds.average(ofProperty: "age")
        return "\(hounds.count):\(names):\(total):\(oldest ?? -1):\(youngest ?? -1):\(average ?? -1)"
    }

    static func grown<C: DatabaseCollection>(_ hounds: C) -> [String] where C.Element == Hound {
        hounds.filter("age >= %d", 3).sorted(by: \.name).map(\.name)
    }

    static func typedQueries<C: DatabaseCollection>(_ hounds: C) -> (Int?, Int?, [String]) where C.Element == Hound {
        (hounds.index(matching: "name == %@", "Fido"), hounds.index(matching: { $0.age < 2 }),
         hounds.where { $0.name.starts(with: "R") || $0.name.starts(with: "B") }.map(\.name))
    }
}

@Suite struct DatabaseCollectionTests {
    @Test(arguments: Storage.allCases)
    func genericCodeRunsOnEveryCollection(storage: Storage) throws {
        let test = try TestDatabase(storage, Kennels.types + [Pack.self]), db = test.db
        let kennel = try Kennels.fill(db)
        let pack = try db.write { db.create(Pack.self, value: ["members": Array(kennel.hounds)]) }
        let expected = "3:Fido,Rex,Bolt:9:5:1:3.0"
        #expect(HoundReport.summary(db.objects(Hound.self)) == expected)
        #expect(HoundReport.summary(kennel.hounds) == expected)
        #expect(HoundReport.summary(pack.members) == expected)
        #expect(HoundReport.summary(AnyDatabaseCollection(kennel.hounds)) == expected)
        #expect(HoundReport.summary(db.objects(Hound.self).filter("age > 2")) == "2:Fido,Rex:8:5:3:4.0")
        #expect(HoundReport.summary(kennel.hounds[0].kennels.filter("name == 'North'").first!.hounds) == expected)

        #expect(HoundReport.grown(db.objects(Hound.self)) == ["Fido", "Rex"])
        #expect(HoundReport.grown(pack.members) == ["Fido", "Rex"])
        // List order is kept: Rex, Fido, Bolt; the results are in creation order too.
        for positions in [HoundReport.typedQueries(kennel.hounds), HoundReport.typedQueries(db.objects(Hound.self)),
                          HoundReport.typedQueries(AnyDatabaseCollection(db.objects(Hound.self)))] {
            #expect(positions.0 == 1 && positions.1 == 2 && positions.2 == ["Rex", "Bolt"])
        }
        #expect(db.objects(Hound.self).sorted(byKeyPath: "age").index(matching: "name == %@", "Fido") == 2)
        #expect(kennel.hounds.index(matching: "name == 'Nobody'") == nil)
    }

    @Test func positionsKeysAndValues() throws {
        let test = try TestDatabase(.plain, Kennels.types + [Pack.self]), db = test.db
        let kennel = try Kennels.fill(db)
        let fido = kennel.hounds[1]
        let pack = try db.write { db.create(Pack.self, value: ["members": [fido, kennel.hounds[2]]]) }
        let all = db.objects(Hound.self)
        #expect(all.index(of: fido) == 1 && kennel.hounds.index(of: fido) == 1 && pack.members.index(of: fido) == 0)
        #expect(fido.kennels.index(of: kennel) == 0)
        #expect(all.sorted(byKeyPath: "age").index(of: fido) == 2)
        #expect(all.filter("age < 4").index(of: fido) == nil)
        #expect(all.index(of: Hound()) == nil)
        #expect(all.first?.name == "Rex" && all.last?.name == "Bolt" && kennel.hounds.last?.name == "Bolt")
        #expect(all.objects(at: [0, 2]).map(\.name) == ["Rex", "Bolt"])
        #expect(all.value(forKey: "name") as? [String] == ["Rex", "Fido", "Bolt"])
        #expect(kennel.hounds.value(forKey: "age") as? [Int] == [3, 5, 1])
        #expect(fido.kennels.value(forKeyPath: "name") as? [String] == ["North"])
        #expect(kennel.tags.value(forKey: "self") as? [String] == Array(kennel.tags))
        #expect(all.database === db && kennel.hounds.database === db && fido.kennels.database === db)

        func birthday<C: DatabaseCollection>(_ hounds: C) where C.Element == Hound {
            hounds.setValue(10, forKey: "age")
        }
        try db.write { birthday(pack.members) }
        #expect(kennel.hounds.map(\.age) == [3, 10, 10])
        try db.write { birthday(all) }
        #expect(kennel.hounds.map(\.age) == [10, 10, 10])
    }

    @Test func aCollectionOfADeletedObjectIsInvalidated() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        let hounds = kennel.hounds, tags = kennel.tags, rex = kennel.hounds[0]
        let kennels = rex.kennels, results = db.objects(Hound.self)
        #expect(!hounds.isInvalidated && !tags.isInvalidated && !kennels.isInvalidated && !results.isInvalidated)
        #expect(!List<Int>().isInvalidated && !AnyDatabaseCollection(hounds).isInvalidated)
        try db.write { db.delete(kennel) }
        #expect(hounds.isInvalidated && tags.isInvalidated && AnyDatabaseCollection(hounds).isInvalidated)
        #expect(!kennels.isInvalidated && kennels.isEmpty)
        try db.write { db.delete(rex) }
        #expect(kennels.isInvalidated && !results.isInvalidated && results.count == 2)
    }

    @Test func anyDatabaseCollectionFreezesThawsAndPassesAReference() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        let erased = AnyDatabaseCollection(kennel.hounds.where { $0.age > 2 })
        let frozen = erased.freeze()
        #expect(frozen.isFrozen && !erased.isFrozen && frozen.database?.isFrozen == true)
        try db.write { kennel.hounds.append(Hound(value: ["name": "Max", "age": 7])) }
        #expect(frozen.map(\.name) == ["Rex", "Fido"] && erased.map(\.name) == ["Rex", "Fido", "Max"])
        #expect(frozen.thaw()?.map(\.name) == ["Rex", "Fido"])
        let reference = ThreadSafeReference(to: AnyDatabaseCollection(kennel.hounds))
        let configuration = test.configuration
        let names = onAnotherThread { () -> [String] in
            let other = try! Database(configuration: configuration)
            return other.resolve(reference)?.map(\.name) ?? []
        }
        #expect(names == ["Rex", "Fido", "Bolt", "Max"])
    }

    @Test func throwingTwinsNameTheProblem() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        #expect(throws: CofferError.self) { try kennel.hounds.tryFilter("age >>> 3") }
        do {
            _ = try kennel.hounds.trySorted(byKeyPath: "weight")
            Issue.record("sorting by an unknown property did not throw")
        } catch let error as CofferError {
            #expect(error.message.contains("weight"), "\(error.message)")
        }
    }

    @Test func queryingAnUnmanagedListStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Yard().hounds.filter("age > 1")
        }
        #expect(errorOutput(result).contains("an unmanaged List<Hound> cannot be queried"))
    }

    @Test func anInvalidIndexMatchingQueryStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "index-matching", objectTypes: Kennels.types))
            let kennel = try Kennels.fill(db)
            _ = kennel.hounds.index(matching: "agee > 1")
        }
        #expect(errorOutput(result).contains("agee"))
    }

    @Test func valueForKeyOfAValueCollectionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let numbers = List<Int>()
            numbers.append(1)
            _ = numbers.value(forKey: "age")
        }
        #expect(errorOutput(result).contains("value(forKey: \"age\") reads properties of objects; a List<Int> holds Int values"))
    }
}

/// A second list of hounds, to check that generic code sees each list's own order.
final class Pack: Object {
    @Persisted var members: List<Hound>
}
