// The models of Realm's documented relationship example.

import Coffer
import Foundation

/// Realm's documented relationship example: people with an embedded address,
/// friends and dogs, and dogs that know their owners.
enum Social {
    final class Person: Object {
        @Persisted(primaryKey: true) var _id: ObjectId
        @Persisted var name = ""
        @Persisted var birthdate: Date?
        @Persisted var address: Address?
        @Persisted var friends: List<Person>
        @Persisted var dogs: List<Dog>
        @Persisted var bestFriend: Person?
    }

    final class Dog: Object {
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted var breed: String?
        @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
        let walkers = LinkingObjects(fromType: Walker.self, property: "bestDog")
    }

    final class Address: EmbeddedObject {
        @Persisted var street: String?
        @Persisted var city: String?
        @Persisted var country: String?
        @Persisted var postalCode: String?
    }

    static let types: [Object.Type] = [Person.self, Dog.self, Address.self, Walker.self]
}

/// Links to dogs from another class, for the plain LinkingObjects form.
final class Walker: Object {
    @Persisted var name = ""
    @Persisted var bestDog: Social.Dog?
}

/// A business with many embedded addresses, as in Realm's embedded-object example.
final class Business: Object {
    @Persisted var name = ""
    @Persisted var addresses: List<Social.Address>
}

/// One property of every collection kind.
final class Bag: Object {
    @Persisted var numbers: List<Int>
    @Persisted var optionalNames: List<String?>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var pets: Map<String, Social.Dog?>
    @Persisted var favouriteDogs: MutableSet<Social.Dog>
    @Persisted var anything: AnyValue
    @Persisted var mixedList: List<AnyValue>
    @Persisted var mixedMap: Map<String, AnyValue>

    static let types: [Object.Type] = [Bag.self, Social.Dog.self, Social.Person.self, Social.Address.self, Walker.self]
}
