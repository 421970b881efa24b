// Runs the Realm Swift app of RealmApp.swift on Coffer, through
// CofferRealmCompat's names only.

import CofferRealmCompat
import Foundation
import Testing

@Suite struct RealmAppTests {
    private static func temporaryFile(_ name: String) -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("coffer-realm-app-\(UUID().uuidString)", isDirectory: true)
            .appendingPathComponent(name)
    }

    private static func prepare(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    }

    @Test func anActorWritesWithoutBlocking() async throws {
        let url = Self.temporaryFile("actor.realm")
        try Self.prepare(url)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let dogs = DogActor()
        try await dogs.setUp(configuration: Realm.Configuration(fileURL: url, objectTypes: [Owner.self, Address.self, Dog.self]))
        try await dogs.addDog(named: "Rex", age: 3)
        try await dogs.addDog(named: "Pip", age: 1)
        #expect(await dogs.dogNames == ["Pip", "Rex"])
    }

    @Test func theAppWritesQueriesAndDeletes() throws {
        let url = Self.temporaryFile("kennel.realm")
        try Self.prepare(url)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let store = try KennelStore(configuration: Realm.Configuration(fileURL: url, objectTypes: [Owner.self, Address.self, Dog.self]))
        let ada = try store.addOwner(named: "Ada", city: "London", dogs: [("Rex", 3), ("Fido", 7)])
        try store.addOwner(named: "Bob", city: "Paris", dogs: [("Pip", 1)])
        #expect(ada.realm === store.realm)
        #expect(ada.dogs.realm === store.realm)
        #expect(store.realm.objects(Dog.self).realm === store.realm)

        #expect(store.dogs(olderThan: 2).map(\.name) == ["Fido", "Rex"])
        #expect(store.owners(in: "London").first?.name == "Ada")
        #expect(store.averageAge() == (3.0 + 7.0 + 1.0) / 3.0)
        let rex = try #require(store.realm.objects(Dog.self).filter("name == %@", "Rex").first)
        #expect(rex.owners.first?.name == "Ada")
        try store.birthday(rex)
        #expect(store.sleepyDogs().map(\.name) == ["Rex"])
        #expect(rex.age == 4)
        try store.realm.write { rex.chipNumber.value = 1234 }
        #expect(store.realm.objects(Dog.self).filter("chipNumber == %d", 1234).first?.name == "Rex")

        let updated = try store.upsertDog(id: rex._id, name: "Rex", age: 10)
        #expect(updated.isSameObject(as: rex) && rex.age == 10)
        #expect(store.realm.object(ofType: Dog.self, forPrimaryKey: rex._id)?.age == 10)

        guard case let .dictionary(extra) = ada.extra, case let .list(notes)? = extra["notes"] else {
            Issue.record("extra is \(ada.extra)")
            return
        }
        #expect(Array(notes) == [.string("first visit")])
        #expect(ada.extra.dictionaryValue?["vip"] == .bool(false))
        #expect(ada.tags.contains("new") && ada.scores["visits"] == 1)

        let collections: [AnyRealmCollection<Dog>] = [AnyRealmCollection(ada.dogs), AnyRealmCollection(store.realm.objects(Dog.self))]
        #expect(collections.map(\.count) == [2, 3])
        let allDogs = store.realm.objects(Dog.self)
        #expect(DogStatistics.grownNames(allDogs) == ["Fido", "Rex"] && DogStatistics.grownNames(ada.dogs) == ["Fido", "Rex"])
        #expect(DogStatistics.oldestAge(allDogs) == 10 && DogStatistics.oldestAge(ada.dogs.first!.owners.first!.dogs) == 10)
        #expect(DogStatistics.totalAge(allDogs.where { $0.age < 10 }) == 8)
        #expect(DogStatistics.firstSleepy(AnyRealmCollection(ada.dogs)) == 0 && DogStatistics.firstSleepy(AnyRealmCollection(allDogs)) == 0)
        #expect(DogStatistics.names(allDogs.sorted(byKeyPath: "age")) == ["Pip", "Fido", "Rex"])
        #expect(DogStatistics.isLive(allDogs) && DogStatistics.isLive(rex.owners) && !DogStatistics.isLive(allDogs.freeze()))

        try store.remove(dogsOf: ada)
        #expect(ada.dogs.isEmpty && store.realm.objects(Dog.self).count == 1)
        store.reset()
        #expect(store.realm.isEmpty)
    }

    @Test func theAppsMigrationRuns() throws {
        let url = Self.temporaryFile("people.realm")
        try Self.prepare(url)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, schemaVersion: 1, objectTypes: [Version1.Person.self]))
            try realm.write {
                realm.add(Version1.Person(value: ["firstName": "Ada", "lastName": "Lovelace"]))
            }
        }
        #expect(try schemaVersionAtURL(url) == 1)
        let realm = try Realm(configuration: migratedConfiguration(fileURL: url))
        #expect(realm.objects(Version2.Person.self).map(\.fullName) == ["Ada Lovelace"])
        #expect(try schemaVersionAtURL(url) == 2)
    }

    @Test func aCacheIsDeletedWhenItsSchemaChanges() throws {
        let url = Self.temporaryFile("cache.realm")
        try Self.prepare(url)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [Version1.Person.self]))
            try realm.write { realm.add(Version1.Person()) }
        }
        let configuration = cacheConfiguration(fileURL: url)
        #expect(configuration.deleteRealmIfMigrationNeeded)
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Version2.Person.self).isEmpty, "the old cache was deleted")
        #expect(Realm.fileExists(for: configuration))
    }

    @Test func realmErrorsAreCofferErrors() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "realm-errors", objectTypes: [Dog.self, Owner.self, Address.self]))
        do {
            _ = try realm.objects(Dog.self).tryFilter("age >")
            Issue.record("no error")
        } catch let error as Realm.Error {
            #expect(error.code == .query)
        }
    }
}
