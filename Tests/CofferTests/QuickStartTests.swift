import Coffer
import Foundation
import Testing

/// The README's Swift quick start, kept compiling and passing.
enum QuickStart {
    enum Status: String, PersistableEnum { case open, done }

    final class Dog: Object {
        @Persisted(primaryKey: true) var id: ObjectId
        @Persisted(indexed: true) var name = ""
        @Persisted var breed: String?
        @Persisted var status = Status.open
        var nickname = ""
    }

    final class Address: EmbeddedObject {
        @Persisted var city: String?
    }

    final class Person: Object {
        @Persisted var name = ""
        @Persisted var address: Address?
        @Persisted var bestFriend: Person?
        @Persisted var friends: List<Person>
        @Persisted var tags: MutableSet<String>
        @Persisted var scores: Map<String, Int>
        @Persisted var extra: AnyValue
        @Persisted(originProperty: "friends") var friendOf: LinkingObjects<Person>
    }
}

@Suite struct QuickStartTests {
    @Test func readmeQuickStart() throws {
        typealias Dog = QuickStart.Dog
        let dir = TemporaryDirectory()
        let key = testKey

        var config = Database.Configuration(fileURL: dir.file("dogs.coffer"))
        config.objectTypes = [Dog.self]
        config.encryptionKey = key
        let db = try Database(configuration: config)

        let rex = Dog(value: ["name": "Rex", "breed": "Beagle"])
        try db.write {
            try db.add(rex)
        }
        try db.write { rex.status = .done }

        let dogs = db.objects(Dog.self)
        #expect(dogs.count == 1)
        #expect(dogs.first?.name == "Rex")
        let same = db.object(ofType: Dog.self, forPrimaryKey: rex.id)
        #expect(same?.status == .done)
        #expect(same?.breed == "Beagle")
    }

    @Test func readmeLinksAndCollections() throws {
        typealias Person = QuickStart.Person
        let dir = TemporaryDirectory()
        let db = try Database(configuration: Database.Configuration(
            fileURL: dir.file("people.coffer"), objectTypes: [Person.self, QuickStart.Address.self]))

        let ada = Person(value: ["name": "Ada", "address": ["city": "London"]])
        let bob = Person(value: ["name": "Bob"])
        ada.friends.append(bob)
        bob.bestFriend = ada
        try db.write { try db.add(ada) }
        try db.write {
            ada.tags.insert("math")
            ada.scores["chess"] = 3
            ada.extra = .dictionary(["languages": .list([.string("en"), .string("fr")])])
        }
        #expect(bob.friendOf.map(\.name) == ["Ada"])
        #expect(db.objects(Person.self).count == 2)
        #expect(bob.bestFriend?.address?.city == "London")
        #expect(Array(ada.tags) == ["math"])
        #expect(ada.scores["chess"] == 3)
        #expect(ada.extra == .dictionary(["languages": .list([.string("en"), .string("fr")])]))
    }
}
