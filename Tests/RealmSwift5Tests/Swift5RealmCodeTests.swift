// Runs the Swift 5 language mode Realm code of Swift5RealmCode.swift: the
// stores are confined to the test's thread, which waits for the queues.

import CofferRealmCompat
import Foundation
import Testing

@Suite struct Swift5RealmCodeTests {
    @Test func frozenResultsAreReadOnABackgroundQueue() throws {
        let store = try Swift5DogStore(identifier: "swift5-frozen-\(UUID().uuidString)")
        _ = try store.addOwner("Ada", dogs: [("Rex", 3), ("Fido", 7), ("Pip", 1)])
        let names = waitForCompletion { done in store.frozenNames(olderThan: 2, completion: done) }
        #expect(names == ["Fido", "Rex"])
    }

    @Test func aReferenceIsResolvedOnABackgroundQueue() throws {
        let store = try Swift5DogStore(identifier: "swift5-reference-\(UUID().uuidString)")
        let owner = try store.addOwner("Ada", dogs: [("Rex", 3)])
        let renamed = waitForCompletion { done in store.rename(owner.dogs[0], to: "Max", completion: done) }
        #expect(renamed == "Max")
        let frozenDogs = store.frozenDogs(of: owner)
        #expect(frozenDogs.isFrozen && frozenDogs.thaw()?.isFrozen == false)
        store.realm.refresh()
        #expect(owner.dogs[0].name == "Max")
    }

    @Test func notesGrowInAListNestedInAMixedProperty() throws {
        let store = try Swift5DogStore(identifier: "swift5-notes-\(UUID().uuidString)")
        let owner = try store.addOwner("Ada", dogs: [])
        try store.addNote("first", to: owner)
        let notes = try #require(owner.notes.listValue)
        try store.addNote("second", to: owner)
        #expect(Array(notes) == [.string("first"), .string("second")])
        #expect(owner.freeze().notes.listValue?.isFrozen == true)
    }

    @Test func anActorWritesAndHandsOutFrozenResults() async throws {
        let dogs = Swift5DogActor()
        try await dogs.setUp(configuration: Realm.Configuration(inMemoryIdentifier: "swift5-actor-\(UUID().uuidString)",
                                                                objectTypes: [Swift5Dog.self, Swift5Owner.self]))
        try await dogs.addDog(named: "Rex", age: 3)
        try await dogs.addDog(named: "Pip", age: 1)
        let frozen = await dogs.frozenDogs()
        #expect(frozen.isFrozen)
        #expect(frozen.map { $0.name } == ["Pip", "Rex"])
    }
}

/// What `start` passes to its completion handler, waited for on this thread.
private func waitForCompletion<Value>(_ start: (@escaping (Value) -> Void) -> Void) -> Value {
    let done = DispatchSemaphore(value: 0)
    var result: Value?
    start { value in
        result = value
        done.signal()
    }
    done.wait()
    return result!
}
