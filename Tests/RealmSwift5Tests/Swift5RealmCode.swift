// Realm Swift code as most of it is written today, in the Swift 5 language
// mode: queues instead of tasks, frozen objects and thread-safe references
// handed between them, an actor with asyncWrite. Only its import differs
// from Realm's (CofferRealmCompat instead of RealmSwift).

import CofferRealmCompat
import Foundation

class Swift5Dog: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var age = 0
}

class Swift5Owner: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<Swift5Dog>
    @Persisted var notes: AnyRealmValue
}

/// A Realm-style store working on one queue and handing data to others.
final class Swift5DogStore {
    let configuration: Realm.Configuration
    let realm: Realm

    init(identifier: String) throws {
        configuration = Realm.Configuration(inMemoryIdentifier: identifier, objectTypes: [Swift5Dog.self, Swift5Owner.self])
        realm = try Realm(configuration: configuration)
    }

    func addOwner(_ name: String, dogs: [(String, Int)]) throws -> Swift5Owner {
        let owner = Swift5Owner()
        owner.name = name
        for (dogName, age) in dogs {
            let dog = Swift5Dog()
            dog.name = dogName
            dog.age = age
            owner.dogs.append(dog)
        }
        try realm.write {
            realm.add(owner)
        }
        return owner
    }

    /// The names of the frozen dogs older than `age`, read on a background
    /// queue. Frozen results cross to the queue in `Frozen`, which is Sendable
    /// (Results, frozen or live, is not: only a frozen one may be shared).
    func frozenNames(olderThan age: Int, completion: @escaping ([String]) -> Void) {
        let frozen = Frozen(realm.objects(Swift5Dog.self).filter("age > %d", age).sorted(byKeyPath: "name"))
        DispatchQueue.global().async {
            completion(frozen.value.map { $0.name })
        }
    }

    /// Adds `text` to the owner's notes, a list nested in a mixed property,
    /// changed in place once it exists.
    func addNote(_ text: String, to owner: Swift5Owner) throws {
        try realm.write {
            if case let .list(notes) = owner.notes {
                notes.append(.string(text))
            } else {
                owner.notes = AnyRealmValue.fromArray([.string(text)])
            }
        }
    }

    /// The owner's dogs as they are now, for another thread.
    func frozenDogs(of owner: Swift5Owner) -> List<Swift5Dog> {
        owner.dogs.freeze()
    }

    /// Renames `dog` on a background queue through a thread-safe reference.
    func rename(_ dog: Swift5Dog, to name: String, completion: @escaping (String?) -> Void) {
        let reference = ThreadSafeReference(to: dog)
        let configuration = self.configuration
        DispatchQueue.global().async {
            let realm = try! Realm(configuration: configuration)
            guard let dog = realm.resolve(reference) else {
                completion(nil)
                return
            }
            try! realm.write {
                dog.name = name
            }
            completion(dog.name)
        }
    }
}

/// An actor of the app with a realm isolated to it.
actor Swift5DogActor {
    var realm: Realm!

    func setUp(configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func addDog(named name: String, age: Int) async throws {
        try await realm.asyncWrite {
            realm.create(Swift5Dog.self, value: ["name": name, "age": age])
        }
    }

    func frozenDogs() -> Results<Swift5Dog> {
        realm.objects(Swift5Dog.self).sorted(byKeyPath: "age").freeze()
    }
}
