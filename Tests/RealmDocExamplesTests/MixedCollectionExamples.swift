// "Supported Types - Swift SDK", its mixed data type (AnyRealmValue) holding
// lists and dictionaries, with Coffer's renames (Realm → Database,
// AnyRealmValue → AnyValue):
// https://www.mongodb.com/docs/atlas/device-sdks/sdk/swift/model-data/supported-types/
// A mixed property set to nested collections made with fromArray and
// fromDictionary, read back as a List and a Map, changed in place inside a
// write, and a nested collection replaced by assigning a new value.

import Coffer
import Foundation
import Testing

enum MixedCollectionsPage {
    class Dog: Object {
        @Persisted var name = ""
        @Persisted var currentCity = ""
        @Persisted var companion: AnyValue
    }

    static let types: [Object.Type] = [Dog.self]
}

@Suite struct MixedCollectionExamples {
    @Test func mixedPropertiesHoldNestedCollections() throws {
        typealias Dog = MixedCollectionsPage.Dog
        let realm = try Database(configuration: Database.Configuration(
            inMemoryIdentifier: "mixed-collections", objectTypes: MixedCollectionsPage.types))

        let myDog = Dog()
        myDog.name = "Rex"
        // A mixed property may hold a list or a dictionary of mixed values,
        // nested in each other.
        myDog.companion = AnyValue.fromDictionary([
            "name": .string("Wolfie"),
            "favoriteToys": .fromArray([.string("rope"), .string("ball")]),
            "owner": .fromDictionary(["name": .string("Ann"), "age": .int(32)]),
        ])
        try realm.write {
            realm.add(myDog)
        }

        // Read back, a nested collection is a live List or Map.
        let dog = try #require(realm.objects(Dog.self).first)
        guard case let .dictionary(companion) = dog.companion,
              case let .list(toys)? = companion["favoriteToys"] else {
            Issue.record("companion is \(dog.companion)")
            return
        }
        #expect(toys.count == 2 && toys[0].stringValue == "rope")
        #expect(companion["owner"]?.dictionaryValue?["age"]?.intValue == 32)

        // Change it in place inside a write transaction.
        try realm.write {
            toys.append(.string("frisbee"))
            dog.companion.dictionaryValue?["owner"]?.dictionaryValue?["age"] = .int(33)
        }
        #expect(Array(toys) == [.string("rope"), .string("ball"), .string("frisbee")])
        #expect(companion["owner"]?.dictionaryValue?["age"] == .int(33))

        // Assigning a new value replaces the nested collection.
        try realm.write {
            dog.companion = .fromArray([.string("cat"), .bool(true)])
        }
        #expect(dog.companion.listValue.map(Array.init) == [.string("cat"), .bool(true)])
        #expect(dog.companion.dictionaryValue == nil)
    }
}
