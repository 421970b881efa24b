// A small Realm Swift app, written as Realm's documentation writes one, with
// only `import RealmSwift` changed to `import CofferRealmCompat`: models with
// primary keys, indexes, backlinks, embedded objects, lists, sets, maps and
// mixed values; writes, queries, aggregates and a migration.

import CofferRealmCompat
import Foundation

// MARK: Models

class Owner: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted(indexed: true) var name = ""
    @Persisted var address: Address?
    @Persisted var dogs: List<Dog>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var extra: AnyRealmValue

    convenience init(name: String) {
        self.init()
        self.name = name
    }
}

class Address: EmbeddedObject {
    @Persisted var street: String?
    @Persisted var city: String?
}

enum Mood: String, PersistableEnum {
    case happy, sleepy
}

class Dog: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var mood = Mood.happy
    @Persisted var weight: Double?
    let chipNumber = RealmProperty<Int?>()
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Owner>
}

// MARK: App logic

/// What an actor of the app does with a realm isolated to it.
actor DogActor {
    var realm: Realm!

    func setUp(configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func addDog(named name: String, age: Int) async throws {
        try await realm.asyncWrite {
            realm.add(Dog(value: ["name": name, "age": age]))
        }
    }

    var dogNames: [String] { realm.objects(Dog.self).sorted(byKeyPath: "age").map(\.name) }
}

/// What a view model of the app does with its realm.
final class KennelStore {
    let realm: Realm

    init(configuration: Realm.Configuration) throws {
        realm = try Realm(configuration: configuration)
    }

    @discardableResult
    func addOwner(named name: String, city: String, dogs: [(String, Int)]) throws -> Owner {
        let owner = Owner(name: name)
        owner.address = Address()
        owner.address?.city = city
        for (dogName, age) in dogs {
            let dog = Dog()
            dog.name = dogName
            dog.age = age
            owner.dogs.append(dog)
        }
        owner.tags.insert("new")
        owner.scores["visits"] = 1
        owner.extra = AnyRealmValue.fromDictionary(["vip": .bool(false), "notes": .fromArray([.string("first visit")])])
        try realm.write {
            realm.add(owner)
        }
        return owner
    }

    func upsertDog(id: ObjectId, name: String, age: Int) throws -> Dog {
        try realm.write {
            realm.create(Dog.self, value: ["_id": id, "name": name, "age": age], update: .modified)
        }
    }

    func dogs(olderThan age: Int) -> Results<Dog> {
        realm.objects(Dog.self).filter("age > %d", age).sorted(byKeyPath: "age", ascending: false)
    }

    func sleepyDogs() -> Results<Dog> {
        realm.objects(Dog.self).where { $0.mood == .sleepy }
    }

    func owners(in city: String) -> Results<Owner> {
        realm.objects(Owner.self).filter("address.city == %@", city)
    }

    func averageAge() -> Double? {
        realm.objects(Dog.self).average(ofProperty: "age")
    }

    func birthday(_ dog: Dog) throws {
        try realm.write {
            dog.age += 1
            dog.mood = .sleepy
        }
    }

    func remove(dogsOf owner: Owner) throws {
        try realm.write {
            realm.delete(owner.dogs)
        }
    }

    func reset() {
        realm.beginWrite()
        realm.deleteAll()
        try! realm.commitWrite()
    }
}

// MARK: Generic code over RealmCollection

/// Realm code written once for Results, List, LinkingObjects and
/// AnyRealmCollection: queries, sorts, aggregates, positions and key-value reads.
enum DogStatistics {
    static func grownNames<C: RealmCollection>(_ dogs: C) -> [String] where C.Element == Dog {
        dogs.filter("age >= %d", 2).sorted(byKeyPath: "name").map(\.name)
    }

    static func oldestAge<C: RealmCollection>(_ dogs: C) -> Int? where C.Element == Dog {
        dogs.max(ofProperty: "age")
    }

    static func totalAge<C: RealmCollection>(_ dogs: C) -> Int where C.Element == Dog {
        dogs.sum(ofProperty: "age")
    }

    static func firstSleepy(_ dogs: AnyRealmCollection<Dog>) -> Int? {
        dogs.index(matching: { $0.mood == .sleepy })
    }

    static func names<C: RealmCollection>(_ dogs: C) -> [String] where C.Element == Dog {
        dogs.value(forKey: "name") as? [String] ?? []
    }

    static func isLive<C: RealmCollection>(_ collection: C) -> Bool {
        collection.realm != nil && !collection.isFrozen && !collection.isInvalidated
    }
}

// MARK: Migration

/// Version 1 of a model, as an app shipped it.
enum Version1 {
    class Person: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""
    }
}

/// Version 2: the two names become one.
enum Version2 {
    class Person: Object {
        @Persisted var fullName = ""
    }
}

func migratedConfiguration(fileURL: URL) -> Realm.Configuration {
    Realm.Configuration(
        fileURL: fileURL,
        schemaVersion: 2,
        migrationBlock: { migration, oldSchemaVersion in
            if oldSchemaVersion < 2 {
                migration.enumerateObjects(ofType: Version2.Person.className()) { oldObject, newObject in
                    let first = oldObject!["firstName"] as! String
                    let last = oldObject!["lastName"] as! String
                    newObject!["fullName"] = "\(first) \(last)"
                }
            }
        },
        objectTypes: [Version2.Person.self]
    )
}

/// A cache of people: thrown away whenever its model changes.
func cacheConfiguration(fileURL: URL) -> Realm.Configuration {
    var configuration = Realm.Configuration(fileURL: fileURL, deleteRealmIfMigrationNeeded: true)
    configuration.objectTypes = [Version2.Person.self]
    return configuration
}
