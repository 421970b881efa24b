// Tests that typed key paths resolve to stored properties, inherited ones too.

import Coffer
import Foundation
import Testing

/// A model class whose stored properties come partly from its superclass.
class Animal: Object {
    @Persisted var name = ""
    @Persisted var legs = 4
}

final class Bird: Animal {
    @Persisted var canFly = true
}

/// Typed key paths resolve to stored properties, also inherited ones, and
/// only to them.
@Suite struct KeyPathNameTests {
    @Test(arguments: Storage.allCases)
    func inheritedPropertiesSortQueryAndAggregate(storage: Storage) throws {
        let test = try TestDatabase(storage, [Bird.self]), db = test.db
        try db.write {
            db.add(Bird(value: ["name": "Robin", "legs": 2]))
            db.add(Bird(value: ["name": "Kiwi", "legs": 2, "canFly": false]))
            db.add(Bird(value: ["name": "Odd", "legs": 3]))
        }
        let birds = db.objects(Bird.self)
        #expect(birds.sorted(by: \.name).map(\.name) == ["Kiwi", "Odd", "Robin"])
        #expect(birds.where { $0.legs == 2 && $0.canFly }.map(\.name) == ["Robin"])
        #expect(birds.sum(of: \.legs) == 7)
        #expect(birds.distinct(by: [\Bird.legs]).count == 2)
    }

    @Test func anAggregateOfAComputedValueStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "aggregate-computed", objectTypes: [Bird.self]))
            _ = db.objects(Bird.self).max(of: \.name.count)
        }
        #expect(errorOutput(result).contains("reads a value computed from Bird.name"))
    }
}
