// @ObservedRealmObject and @ObservedResults written as Realm's SwiftUI
// documentation writes them, outside SwiftUI: bindings write in a
// transaction, and Observation reports the commits.

import CofferRealmCompat
import Foundation
import Observation
import Testing

/// A view model as a Realm SwiftUI view would hold its state.
final class OwnerEditor {
    @ObservedRealmObject var owner: Owner
    @ObservedResults(Dog.self) var dogs

    init(_ owner: Owner, configuration: Realm.Configuration) {
        _owner = ObservedRealmObject(wrappedValue: owner)
        _dogs = ObservedResults(Dog.self, configuration: configuration)
    }
}

/// Whether Observation reported a change of what was read.
final class Flag: @unchecked Sendable {  // set by onChange, which runs synchronously on the test's thread
    var raised = false
}

@Suite struct RealmObservedObjectTests {
    @Test func observedRealmObjectBindingsWriteAndReport() throws {
        var config = Realm.Configuration(objectTypes: [Owner.self, Dog.self, Address.self])
        config.inMemoryIdentifier = "realm-observed-\(UUID().uuidString)"
        let realm = try Realm(configuration: config)
        let owner = Owner(name: "Ann")
        try realm.write { realm.add(owner) }
        let editor = OwnerEditor(owner, configuration: config)

        let renamed = Flag()
        withObservationTracking { _ = editor.owner.name } onChange: { renamed.raised = true }
        editor.$owner.name.wrappedValue = "Bea"
        realm.refresh()
        #expect(renamed.raised)
        #expect(realm.objects(Owner.self).first?.name == "Bea")

        editor.$owner.dogs.append(Dog(value: ["name": "Rex"]))
        #expect(owner.dogs.map(\.name) == ["Rex"])
        editor.$dogs.database.refresh()
        #expect(editor.dogs.map(\.name) == ["Rex"])
        editor.$dogs.remove(atOffsets: IndexSet([0]))
        realm.refresh()
        #expect(realm.objects(Dog.self).isEmpty)
    }
}
