// The README's Swift quick start, kept compiling and passing.

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
            db.add(rex)
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
        try db.write { db.add(ada) }
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

    @Test func readmeQueries() throws {
        typealias Dog = QuickStart.Dog
        typealias Person = QuickStart.Person
        let dir = TemporaryDirectory()
        let db = try Database(configuration: Database.Configuration(
            fileURL: dir.file("query.coffer"), objectTypes: [Dog.self, Person.self, QuickStart.Address.self]))
        try db.write {
            db.add(Dog(value: ["name": "Rex", "breed": "Beagle"]))
            db.add(Dog(value: ["name": "rocky", "breed": "Pug", "status": QuickStart.Status.done]))
            db.add(Dog(value: ["name": "Ruff"]))
            let ada = Person(value: ["name": "Ada", "address": ["city": "London"], "scores": ["chess": 3]])
            ada.friends.append(Person(value: ["name": "Bob"]))
            db.add(ada)
        }

        let dogs = db.objects(Dog.self)
        let open = dogs.where { $0.status == .open && $0.name.starts(with: "r", options: .caseInsensitive) }
        let found = dogs.filter("name BEGINSWITH %@ AND breed IN %@", "R", ["Beagle", "Pug"])
        let byName = open.sorted(by: \.name)
        let people = db.objects(Person.self)
        let social = people.where { $0.friends.count > 0 || $0.address.city == "London" }
        let chess = people.where { $0.scores["chess"] >= 3 && $0.friends.name.contains("Bo") }
        let friendOfAda = people.filter("ANY friendOf.name == %@", "Ada")

        #expect(open.map(\.name) == ["Rex", "Ruff"])
        #expect(found.map(\.name) == ["Rex"])
        #expect(byName.map(\.name) == ["Rex", "Ruff"])
        #expect(social.map(\.name) == ["Ada"])
        #expect(chess.map(\.name) == ["Ada"])
        #expect(friendOfAda.map(\.name) == ["Bob"])
    }

    @Test func readmeProjections() throws {
        typealias Person = QuickStart.Person
        let dir = TemporaryDirectory()
        let db = try Database(configuration: Database.Configuration(
            fileURL: dir.file("projection.coffer"), objectTypes: [Person.self, QuickStart.Address.self]))
        try db.write {
            let ada = Person(value: ["name": "Ada", "address": ["city": "London"]])
            ada.friends.append(Person(value: ["name": "Bob"]))
            db.add(ada)
        }

        let people = db.objects(QuickStart.PersonProjection.self).where { $0.homeCity == "London" }.sorted(by: \.firstName)
        #expect(people.map(\.caps) == ["ADA"])
        #expect(people.first.map { Array($0.friendNames) } == ["Bob"])
        try db.write { people.first?.firstName = "Augusta" }
        #expect(db.objects(Person.self).map(\.name) == ["Augusta", "Bob"])
    }
}

extension QuickStart {
    final class PersonProjection: Projection<Person> {
        @Projected(\Person.name) var firstName
        @Projected(\Person.name.localizedUppercase) var caps
        @Projected(\Person.address?.city) var homeCity
        @Projected(\Person.friends.projectTo.name) var friendNames: ProjectedCollection<String>
    }
}
