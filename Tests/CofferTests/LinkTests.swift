// Tests of links between objects, cycles, and deleting link targets.

import Coffer
import Foundation
import Testing

/// Links between objects, cycles, and what deleting a target does.
@Suite struct LinkTests {
    @Test(arguments: Storage.allCases)
    func addWritesLinkedObjectsAndCycles(storage: Storage) throws {
        let test = try TestDatabase(storage, Social.types), db = test.db
        let ada = Social.Person(value: ["name": "Ada"])
        let bob = Social.Person(value: ["name": "Bob"])
        ada.bestFriend = bob
        bob.bestFriend = ada
        ada.friends.append(bob)
        bob.friends.append(ada)
        try db.write { db.add(ada) }
        #expect(bob.database === db, "the linked object is managed too, as Realm's add does")
        let people = db.objects(Social.Person.self)
        #expect(people.count == 2)
        let storedAda = try #require(db.object(ofType: Social.Person.self, forPrimaryKey: ada._id))
        #expect(storedAda.bestFriend?.name == "Bob")
        #expect(storedAda.bestFriend?.bestFriend?.name == "Ada")
        #expect(storedAda.friends.map(\.name) == ["Bob"])
        #expect(storedAda.bestFriend?.isSameObject(as: bob) == true)
    }

    @Test(arguments: Storage.allCases)
    func managedLinksChangeAndClear(storage: Storage) throws {
        let test = try TestDatabase(storage, Social.types), db = test.db
        let ada = try db.write { db.create(Social.Person.self, value: ["name": "Ada"]) }
        try db.write { ada.bestFriend = Social.Person(value: ["name": "Cy"]) }
        #expect(ada.bestFriend?.name == "Cy")
        #expect(db.objects(Social.Person.self).count == 2)
        try db.write { ada.bestFriend = nil }
        #expect(ada.bestFriend == nil)
        #expect(db.objects(Social.Person.self).count == 2, "clearing a link deletes nothing")
    }

    @Test(arguments: Storage.allCases)
    func deletingATargetClearsLinksAndListEntries(storage: Storage) throws {
        let test = try TestDatabase(storage, Social.types), db = test.db
        let rex = Social.Dog(value: ["name": "Rex"])
        let ada = Social.Person(value: ["name": "Ada", "dogs": [rex, Social.Dog(value: ["name": "Fido"])]])
        let walker = Walker(value: ["name": "Wes", "bestDog": rex])
        try db.write {
            db.add(ada)
            db.add(walker)
        }
        #expect(ada.dogs.count == 2)
        try db.write { db.delete(rex) }
        #expect(walker.bestDog == nil)
        #expect(ada.dogs.map(\.name) == ["Fido"])
    }

    @Test func createTakesNestedObjectsAndDictionaries() throws {
        let test = try TestDatabase(.plain, Social.types), db = test.db
        let ada = try db.write {
            db.create(Social.Person.self, value: [
                "name": "Ada",
                "address": Social.Address(value: ["city": "London"]),
                "dogs": [Social.Dog(value: ["name": "Rex", "age": 3])],
            ])
        }
        #expect(ada.address?.city == "London")
        #expect(ada.dogs.first?.age == 3)
        expectCofferError(.type, containing: "Person.bestFriend") {
            _ = try db.write { try db.tryCreate(Social.Person.self, value: ["bestFriend": "not a person"]) }
        }
        #expect(db.objects(Social.Person.self).count == 1, "the failed create wrote nothing")
    }

    @Test func aLinkToAnObjectOfAnotherDatabaseIsAnError() throws {
        let dir = TemporaryDirectory()
        let first = try Database(configuration: configuration(.plain, Social.types, in: dir, name: "a.coffer"))
        let second = try Database(configuration: configuration(.plain, Social.types, in: dir, name: "b.coffer"))
        let rex = try first.write { first.create(Social.Dog.self, value: ["name": "Rex"]) }
        expectCofferError(.misuse, containing: "Dog", "another Database") {
            try second.write { try second.tryAdd(Walker(value: ["name": "Wes", "bestDog": rex])) }
        }
        #expect(second.objects(Walker.self).isEmpty, "nothing of the failed add stays")
    }

    @Test func aRequiredLinkIsASchemaError() {
        expectCofferError(.schema, containing: "RequiredLink", "owner", "optional") {
            _ = try Database(configuration: Database.Configuration(inMemoryIdentifier: "required-link", objectTypes: [RequiredLink.self, Social.Dog.self]))
        }
    }

    @Test func aLinkToAClassNotInTheConfigurationIsASchemaError() {
        expectCofferError(.schema, containing: "Walker.bestDog", "Dog") {
            _ = try Database(configuration: Database.Configuration(inMemoryIdentifier: "missing-target", objectTypes: [Walker.self]))
        }
    }
}

final class RequiredLink: Object {
    @Persisted var owner: Social.Dog
}

enum Mislinked {
    /// Stored as "Walker", but its `bestDog` links to people instead of dogs.
    final class Walker: Object {
        @Persisted var name = ""
        @Persisted var bestDog: Social.Person?
    }
}

extension LinkTests {
    @Test func aLinkToAnotherClassThanTheFilesIsASchemaError() throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, Social.types, in: dir)
        _ = try Database(configuration: config)
        var fileOnly = config
        fileOnly.objectTypes = nil
        let db = try Database(configuration: fileOnly)
        expectCofferError(.schema, containing: "Walker", "bestDog", "'Dog' in the database but 'Person' in Swift") {
            _ = try db.write { try db.tryCreate(Mislinked.Walker.self) }
        }
    }
}

extension LinkTests {
    @Test(arguments: Storage.allCases)
    func updatePoliciesReachLinkedObjects(storage: Storage) throws {
        let test = try TestDatabase(storage, Social.types), db = test.db
        let ada = Social.Person(value: ["name": "Ada"])
        try db.write { db.add(ada) }

        let newcomer = Social.Person(value: ["name": "Neo"])
        newcomer.bestFriend = Social.Person(value: ["_id": ada._id, "name": "Ada Lovelace"])
        expectCofferError(.primaryKeyExists, containing: "Person") {
            try db.write { try db.tryAdd(newcomer) }
        }
        #expect(db.objects(Social.Person.self).count == 1, "the cancelled write added nobody")

        let again = Social.Person(value: ["name": "Neo"])
        again.bestFriend = Social.Person(value: ["_id": ada._id, "name": "Ada Lovelace"])
        try db.write { db.add(again, update: .modified) }
        #expect(db.objects(Social.Person.self).count == 2)
        #expect(ada.name == "Ada Lovelace", "the linked object with an existing key was updated")
        #expect(again.bestFriend?.isSameObject(as: ada) == true)
    }
}
