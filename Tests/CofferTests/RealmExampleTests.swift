// Realm's documented examples with scalar properties, run against Coffer.

import Coffer
import Foundation
import Testing

/// Realm's documented examples that need only scalar properties, written against Coffer.
@Suite struct RealmExampleTests {
    @Test(arguments: Storage.allCases)
    func dogWithAnObjectIdPrimaryKey(storage: Storage) throws {
        let test = try TestDatabase(storage, [Dog.self]), db = test.db
        let dog = Dog()
        dog.name = "Rex"
        dog.age = 10
        try db.write { db.add(dog) }

        let specificDog = try #require(db.object(ofType: Dog.self, forPrimaryKey: dog._id))
        #expect(specificDog.name == "Rex")
        try db.write {
            specificDog.age += 1
            specificDog.currentCity = "Berlin"
        }
        #expect(dog.age == 11)
        let dogs = db.objects(Dog.self)
        #expect(dogs.count == 1)
        try db.write { db.delete(dog) }
        #expect(dogs.isEmpty)
        #expect(dog.isInvalidated)
    }

    @Test(arguments: Storage.allCases)
    func bookWithAnIndexedTitle(storage: Storage) throws {
        let test = try TestDatabase(storage, [Book.self]), db = test.db
        try db.write {
            db.add(Book(value: ["title": "The Hobbit", "price": 7.5]))
            db.add(Book(value: ["title": "Dune"]))
        }
        let books = db.objects(Book.self)
        #expect(books.map(\.title) == ["The Hobbit", "Dune"])
        #expect(books[1].price == 9.99, "the initial value of price")
        #expect(books.where { $0.title == "Dune" }.map(\.price) == [9.99], "an equality the index answers")
        try db.write { books[1].title = "Dune Messiah" }
        #expect(db.objects(Book.self)[1].title == "Dune Messiah")
        #expect(books.where { $0.title == "Dune" }.isEmpty, "the index follows the change")
        #expect(books.filter("title IN %@", ["Dune Messiah", "Emma"]).count == 1)
    }

    @Test(arguments: Storage.allCases)
    func taskWithAPersistableEnumStatus(storage: Storage) throws {
        let test = try TestDatabase(storage, [Task.self]), db = test.db
        let task = Task(value: ["name": "Write docs", "owner": "Ada"])
        #expect(task.statusEnum == .notStarted)
        try db.write { db.add(task) }
        try db.write { task.statusEnum = .inProgress }
        #expect(db.objects(Task.self)[0].statusEnum == .inProgress)
        let created = try db.write { db.create(Task.self, value: ["name": "Test", "statusEnum": "complete"]) }
        #expect(created.statusEnum == .complete)
        expectCofferError(.type, containing: "Task.statusEnum") {
            _ = try db.write { try db.tryCreate(Task.self, value: ["statusEnum": "finished"]) }
        }
    }

    @Test(arguments: Storage.allCases)
    func personWithPropertiesMapping(storage: Storage) throws {
        let test = try TestDatabase(storage, [Person.self]), db = test.db
        let person = Person()
        person.firstName = "Grace"
        person.lastName = "Hopper"
        try db.write { db.add(person) }
        try db.write { person.age = 85 }
        let stored = try #require(db.objects(Person.self).first)
        #expect(stored.firstName == "Grace")
        #expect(stored.lastName == "Hopper")
        #expect(stored.age == 85)
    }

    /// Realm's Person with an embedded Address, friends and dogs that know their owners.
    @Test(arguments: Storage.allCases)
    func personWithAddressFriendsAndDogs(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let config = configuration(storage, Social.types, in: dir)
        do {
            let db = try Database(configuration: config)
            let ali = Social.Person(value: ["name": "Ali", "address": ["city": "Cairo", "country": "Egypt"]])
            let jo = Social.Person()
            jo.name = "Jo"
            jo.address = Social.Address()
            jo.address?.city = "Lisbon"
            jo.friends.append(ali)
            ali.friends.append(jo)
            let buddy = Social.Dog(value: ["name": "Buddy", "age": 4])
            jo.dogs.append(buddy)
            try db.write { db.add(jo) }
            #expect(ali.database === db)
            #expect(buddy.owners.first?.name == "Jo")
        }
        guard storage != .inMemory else { return }
        // Reopened, everything is read back from the file.
        let db = try Database(configuration: config)
        let people = db.objects(Social.Person.self)
        #expect(people.map(\.name).sorted() == ["Ali", "Jo"])
        let jo = try #require(people.first { $0.name == "Jo" })
        #expect(jo.address?.city == "Lisbon")
        #expect(jo.friends.first?.address?.country == "Egypt")
        #expect(jo.friends.first?.friends.first?.isSameObject(as: jo) == true)
        #expect(jo.dogs.first?.owners.map(\.name) == ["Jo"])
    }
}

/// The model of Coffer's own overview: a dog with an ObjectId key, an indexed
/// name, an optional breed and an owner, and owners that know their dogs.
enum Kennel {
    final class Dog: Object {
        @Persisted(primaryKey: true) var id: ObjectId
        @Persisted(indexed: true) var name = ""
        @Persisted var breed: String?
        @Persisted var owner: Person?
    }

    final class Person: Object {
        @Persisted var name = ""
        @Persisted(originProperty: "owner") var dogs: LinkingObjects<Dog>
    }

    static let types: [Object.Type] = [Dog.self, Person.self]
}

@Suite struct OverviewExampleTests {
    @Test(arguments: Storage.allCases)
    func dogsWithOwners(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let config = configuration(storage, Kennel.types, in: dir)
        let db = try Database(configuration: config)
        let ali = Kennel.Person(value: ["name": "Ali"])
        try db.write {
            db.add(Kennel.Dog(value: ["name": "Rex", "breed": "Beagle", "owner": ali]))
            db.add(Kennel.Dog(value: ["name": "Fido", "owner": ali]))
            db.add(Kennel.Dog(value: ["name": "Rover"]))
        }
        let puppies = db.objects(Kennel.Dog.self).where { $0.name.starts(with: "R") }.sorted(by: \.name)
        #expect(puppies.map(\.name) == ["Rex", "Rover"])
        #expect(puppies.first?.owner?.name == "Ali")
        #expect(puppies.last?.owner == nil)
        #expect(ali.dogs.map(\.name).sorted() == ["Fido", "Rex"])
        #expect(db.objects(Kennel.Dog.self).where { $0.owner.name == "Ali" && $0.breed == nil }.map(\.name) == ["Fido"])
        let rex = try #require(puppies.first)
        #expect(db.object(ofType: Kennel.Dog.self, forPrimaryKey: rex.id)?.isSameObject(as: rex) == true)

        expectCofferError(.primaryKeyExists, containing: "Dog") {
            try db.write { try db.tryAdd(Kennel.Dog(value: ["id": rex.id, "name": "Copy"])) }
        }
        #expect(db.objects(Kennel.Dog.self).count == 3, "the failed write added nothing")
        try db.write { db.delete(ali) }
        #expect(rex.owner == nil, "deleting the owner clears the link")
    }
}
