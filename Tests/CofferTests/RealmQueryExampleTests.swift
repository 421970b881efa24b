// Realm's documented query examples, and queries over mixed values and sets, run
// against Coffer.

import Coffer
import Foundation
import Testing

/// Realm's documented query examples, written against Coffer.
@Suite struct RealmQueryExampleTests {
    @Test(arguments: Storage.allCases)
    func dogsAndTheirPeople(storage: Storage) throws {
        let test = try TestDatabase(storage, Social.types), db = test.db
        try db.write {
            let ali = Social.Person(value: ["name": "Ali", "address": ["city": "Cairo", "country": "Egypt"]])
            let jo = Social.Person(value: ["name": "Jo", "address": ["city": "Lisbon"]])
            jo.friends.append(ali)
            jo.bestFriend = ali
            jo.dogs.append(Social.Dog(value: ["name": "Buddy", "age": 4, "breed": "Beagle"]))
            jo.dogs.append(Social.Dog(value: ["name": "Rex", "age": 11]))
            ali.dogs.append(Social.Dog(value: ["name": "Fido", "age": 1, "breed": "Pug"]))
            db.add([jo, ali])
        }
        let dogs = db.objects(Social.Dog.self)
        let people = db.objects(Social.Person.self)
        #expect(dogs.where { $0.age > 3 && $0.name.starts(with: "R") }.map(\.name) == ["Rex"])
        #expect(dogs.where { $0.breed == nil }.map(\.name) == ["Rex"])
        #expect(dogs.where { $0.owners.name == "Jo" }.map(\.name) == ["Buddy", "Rex"])
        #expect(dogs.where { $0.owners.address.city == "Cairo" }.map(\.name) == ["Fido"])
        #expect(people.where { $0.dogs.name == "Buddy" }.map(\.name) == ["Jo"])
        #expect(people.where { $0.dogs.age.max > 10 }.map(\.name) == ["Jo"])
        #expect(people.where { $0.dogs.age.avg < 2 }.map(\.name) == ["Ali"])
        #expect(people.where { $0.address.city == "Lisbon" }.map(\.name) == ["Jo"], "a path into an embedded object")
        #expect(people.where { $0.bestFriend.name == "Ali" }.map(\.name) == ["Jo"])
        #expect(people.where { $0.friends.address.country == "Egypt" }.map(\.name) == ["Jo"])
        #expect(people.where { $0.friends.count == 0 }.map(\.name) == ["Ali"])
        #expect(people.where { $0.friends.dogs.name == "Fido" }.map(\.name) == ["Jo"], "through two lists")
        #expect(people.filter("ANY dogs.breed == %@", "Pug").map(\.name) == ["Ali"])
        #expect(dogs.sorted(byKeyPath: "age").map(\.name) == ["Fido", "Buddy", "Rex"])
        #expect(dogs.filter("walkers.@count == 0").count == 3)
        let jo = try #require(people.where { $0.name == "Jo" }.first)
        #expect(jo.dogs.where { $0.age > 5 }.map(\.name) == ["Rex"])
        #expect(people.where { $0.dogs.contains(jo.dogs[0]) }.map(\.name) == ["Jo"])
    }

    @Test(arguments: Storage.allCases)
    func booksByIndexedTitle(storage: Storage) throws {
        let test = try TestDatabase(storage, [Book.self]), db = test.db
        try db.write {
            for (title, price) in [("Dune", 9.5), ("The Hobbit", 7.5), ("Dune Messiah", 12.0), ("Emma", 3.0)] {
                db.add(Book(value: ["title": title, "price": price]))
            }
        }
        let books = db.objects(Book.self)
        #expect(books.where { $0.title == "Dune" }.map(\.price) == [9.5])
        #expect(books.where { $0.title.in(["Emma", "Dune"]) }.map(\.title) == ["Dune", "Emma"])
        #expect(books.where { $0.title.starts(with: "Dune") }.count == 2)
        #expect(books.filter("title == %@", "The Hobbit").count == 1)
        #expect(books.filter("title BEGINSWITH[c] 'the'").count == 1)
        #expect(books.where { $0.price < 10 }.sorted(by: \.price).map(\.title) == ["Emma", "The Hobbit", "Dune"])
        #expect(books.sum(of: \.price) == 32.0)
        #expect(books.max(ofProperty: "price") == 12.0)
        #expect(books.average(ofProperty: "price") == 8.0)
    }

    @Test(arguments: Storage.allCases)
    func tasksByPersistableEnum(storage: Storage) throws {
        let test = try TestDatabase(storage, [Task.self, AllTypes.self]), db = test.db
        try db.write {
            db.create(Task.self, value: ["name": "Docs", "statusEnum": TaskStatusEnum.complete])
            db.create(Task.self, value: ["name": "Tests", "statusEnum": TaskStatusEnum.inProgress])
            db.create(Task.self, value: ["name": "Bench"])
            db.create(AllTypes.self, value: ["id": 1, "priority": Priority.high, "optPriority": Priority.low])
            db.create(AllTypes.self, value: ["id": 2, "priority": Priority.medium])
        }
        let tasks = db.objects(Task.self)
        #expect(tasks.where { $0.statusEnum == .complete }.map(\.name) == ["Docs"])
        #expect(tasks.where { $0.statusEnum != .complete }.map(\.name) == ["Tests", "Bench"])
        #expect(tasks.where { $0.statusEnum.in([.inProgress, .notStarted]) }.map(\.name) == ["Tests", "Bench"])
        #expect(tasks.filter("statusEnum == %@", TaskStatusEnum.inProgress).map(\.name) == ["Tests"])
        #expect(tasks.filter("statusEnum == 'notStarted'").map(\.name) == ["Bench"], "compared by raw value")
        #expect(tasks.sorted(by: \.statusEnum).map(\.name) == ["Docs", "Tests", "Bench"], "sorted by raw value")
        let all = db.objects(AllTypes.self)
        #expect(all.where { $0.priority > .medium }.map(\.id) == [1], "Int raw values order")
        #expect(all.where { $0.optPriority == .low }.map(\.id) == [1])
        #expect(all.where { $0.optPriority == nil }.map(\.id) == [2])
    }

    @Test(arguments: Storage.allCases)
    func personWithMappedPropertiesByPublicName(storage: Storage) throws {
        let test = try TestDatabase(storage, [Person.self]), db = test.db
        try db.write {
            db.create(Person.self, value: ["firstName": "Grace", "lastName": "Hopper", "age": 85])
            db.create(Person.self, value: ["firstName": "Ada", "lastName": "Lovelace", "age": 36])
            db.create(Person.self, value: ["firstName": "Alan", "lastName": "Turing", "age": 41])
        }
        let people = db.objects(Person.self)
        #expect(people.where { $0.firstName == "Grace" }.map(\.lastName) == ["Hopper"])
        #expect(people.where { $0.firstName.starts(with: "A") && $0.age > 40 }.map(\.lastName) == ["Turing"])
        #expect(people.filter("lastName BEGINSWITH %@", "Lo").map(\.firstName) == ["Ada"])
        #expect(people.sorted(byKeyPath: "firstName").map(\.firstName) == ["Ada", "Alan", "Grace"])
        #expect(people.sorted(by: \.lastName, ascending: false).map(\.firstName) == ["Alan", "Ada", "Grace"])
        #expect(people.distinct(by: ["lastName"]).count == 3)
        #expect(people.min(of: \.age) == 36)
        #expect(people.filter("firstName == 'Ada'").queryDescriptions[0].contains("first_name"))
    }
}

@Suite struct MixedAndSetQueryTests {
    @Test(arguments: Storage.allCases)
    func mixedValuesAndSetsOfObjects(storage: Storage) throws {
        let test = try TestDatabase(storage, Bag.types), db = test.db
        try db.write {
            let rex = Social.Dog(value: ["name": "Rex", "age": 3])
            let fido = Social.Dog(value: ["name": "Fido", "age": 9])
            db.add(Bag(value: ["anything": AnyValue.int(3), "favouriteDogs": [rex, fido], "numbers": [1, 2, 3]]))
            db.add(Bag(value: ["anything": AnyValue.string("three"), "favouriteDogs": [fido]]))
        }
        let bags = db.objects(Bag.self)
        #expect(bags.where { $0.anything == .int(3) }.count == 1)
        #expect(bags.where { $0.anything == .string("three") }.count == 1)
        #expect(bags.where { $0.anything > .int(1) }.count == 1, "only numbers order against a number")
        #expect(bags.filter("anything == %@", "three").count == 1)
        #expect(bags.where { $0.favouriteDogs.name == "Rex" }.count == 1)
        #expect(bags.where { $0.numbers.max == 3 }.count == 1)
        #expect(bags.where { $0.numbers.contains(1...3) }.count == 1, "an empty list has no minimum, so it is in no range")
        let first = try #require(bags.first)
        #expect(first.favouriteDogs.where { $0.age > 5 }.map(\.name) == ["Fido"])
        #expect(first.favouriteDogs.filter("name BEGINSWITH 'R'").map(\.name) == ["Rex"])
        #expect(first.favouriteDogs.sorted(by: \.age, ascending: false).map(\.name) == ["Fido", "Rex"])
    }
}
