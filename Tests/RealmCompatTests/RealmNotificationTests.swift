// Notifications written as Realm Swift's documentation writes them, with only
// the import changed: RealmCollectionChange, RealmMapChange, Realm.Notification
// and commitWrite(withoutNotifying:).

import CofferRealmCompat
import Foundation
import Testing

@Suite struct RealmNotificationTests {
    @Test func collectionMapAndRealmNotificationsUseRealmsNames() throws {
        var config = Realm.Configuration(objectTypes: [Owner.self, Dog.self, Address.self])
        config.inMemoryIdentifier = "realm-notifications-\(UUID().uuidString)"
        let realm = try Realm(configuration: config)
        let owner = Owner(name: "Ann")
        try realm.write { realm.add(owner) }

        var collectionCalls: [String] = []
        let dogsToken = realm.objects(Dog.self).observe { (changes: RealmCollectionChange<Results<Dog>>) in
            switch changes {
            case .initial(let dogs): collectionCalls.append("initial \(dogs.count)")
            case .update(_, let deletions, let insertions, let modifications):
                collectionCalls.append("update \(deletions) \(insertions) \(modifications)")
            case .error(let error): collectionCalls.append("error \(error)")
            }
        }
        var mapCalls: [String] = []
        let scoresToken = owner.scores.observe { (changes: RealmMapChange<Map<String, Int>>) in
            if case .update(_, _, let insertions, _) = changes { mapCalls.append("\(insertions)") }
        }
        var realmCalls: [Realm.Notification] = []
        let realmToken = realm.observe { notification, _ in realmCalls.append(notification) }
        defer { [dogsToken, scoresToken, realmToken].forEach { $0.invalidate() } }
        realm.refresh()

        realm.beginWrite()
        realm.add(Dog(value: ["name": "Rex"]))
        owner.scores["walks"] = 2
        try realm.commitWrite(withoutNotifying: [])
        realm.refresh()

        #expect(collectionCalls == ["initial 0", "update [] [0] []"])
        #expect(mapCalls == ["[\"walks\"]"])
        #expect(realmCalls.contains(.didChange))
    }
}
