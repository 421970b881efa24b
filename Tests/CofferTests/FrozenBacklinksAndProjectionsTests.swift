// Tests of frozen views and thread-safe references of LinkingObjects and of
// projections, which follow their object as lists and objects do.

import Coffer
import Foundation
import Testing

/// A hound shown under other names.
final class HoundCard: Projection<Hound> {
    @Projected(\Hound.name) var title
    @Projected(\Hound.age) var years
}

@Suite struct FrozenBacklinksAndProjectionsTests {
    @Test(arguments: Storage.allCases)
    func frozenLinkingObjectsKeepTheirVersion(storage: Storage) throws {
        let test = try TestDatabase(storage, Kennels.types), db = test.db
        let north = try Kennels.fill(db)
        let rex = north.hounds[0]
        let frozen = rex.kennels.freeze()
        #expect(frozen.isFrozen && !rex.kennels.isFrozen && frozen.freeze() === frozen)
        try db.write {
            db.create(Yard.self, value: ["name": "South", "hounds": [rex]])
        }
        #expect(rex.kennels.map(\.name) == ["North", "South"])
        #expect(frozen.map(\.name) == ["North"] && frozen.first?.isFrozen == true)
        let counts = Frozen(frozen)
        let seen = onAnotherThread { counts.value.count }
        #expect(seen == 1)
        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen && thawed.map(\.name) == ["North", "South"])
        let live = rex.kennels
        #expect(live.thaw() === live)
        try db.write { db.delete(rex) }
        #expect(frozen.thaw() == nil && frozen.count == 1)
    }

    @Test func linkingObjectsAreResolvedOnAnotherThread() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        let rex = try Kennels.fill(db).hounds[0]
        let reference = ThreadSafeReference(to: rex.kennels)
        let configuration = test.configuration
        let names = onAnotherThread { () -> [String] in
            let other = try! Database(configuration: configuration)
            return other.resolve(reference)?.map(\.name) ?? []
        }
        #expect(names == ["North"] && reference.isInvalidated)
    }

    @Test(arguments: Storage.allCases)
    func frozenProjectionsKeepTheirVersion(storage: Storage) throws {
        let test = try TestDatabase(storage, Kennels.types), db = test.db
        try Kennels.fill(db)
        let cards = db.objects(HoundCard.self)
        let rex = try #require(cards.first)
        let frozen = rex.freeze()
        #expect(frozen.isFrozen && !rex.isFrozen && frozen.rootObject.isFrozen && frozen.freeze() === frozen)
        try db.write { rex.years = 4 }
        #expect(frozen.years == 3 && rex.years == 4)
        let sendable = Frozen(frozen)
        #expect(onAnotherThread { sendable.title } == "Rex")
        let frozenCards = cards.freeze()
        try db.write { db.delete(rex.rootObject) }
        #expect(frozenCards.map(\.title) == ["Rex", "Fido", "Bolt"] && cards.map(\.title) == ["Fido", "Bolt"])
        #expect(frozen.thaw() == nil)
        let fido = try #require(frozenCards.last?.thaw())
        #expect(!fido.isFrozen && fido.title == "Bolt")
    }

    @Test func aProjectionIsResolvedOnAnotherThread() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        try Kennels.fill(db)
        let fido = try #require(db.objects(HoundCard.self).where { $0.years > 4 }.first)
        let reference = ThreadSafeReference(to: fido)
        let configuration = test.configuration
        let title = onAnotherThread { () -> String? in
            let other = try! Database(configuration: configuration)
            guard let card = other.resolve(reference) else { return nil }
            try! other.write { card.years += 1 }
            return card.title
        }
        #expect(title == "Fido")
        db.refresh()
        #expect(fido.years == 6)
    }

    @Test func freezingTheLinkingObjectsOfAnUnmanagedObjectStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Hound().kennels.freeze()
        }
        #expect(errorOutput(result).contains("an unmanaged LinkingObjects<Yard> cannot be frozen"))
    }

    @Test func aReferenceToAnUnmanagedProjectionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ThreadSafeReference(to: HoundCard(projecting: Hound()))
        }
        #expect(errorOutput(result).contains("an unmanaged Hound object cannot be passed in a ThreadSafeReference"))
    }
}
