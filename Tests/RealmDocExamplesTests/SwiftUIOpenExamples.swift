// "Configure and Open a Realm - SwiftUI", the examples on local databases,
// with Coffer's renames (Realm → Database) and Swift's Observation framework
// standing in for SwiftUI, which Linux lacks:
// https://www.mongodb.com/docs/atlas/device-sdks/sdk/swift/swiftui/configure-and-open-realm/
// The page hands a configuration down the view hierarchy
// (`.environment(\.realmConfiguration, config)`) and lets the view open the
// database; here an observable view model gets the configuration, opens the
// database asynchronously on the main actor, and its observers are told when
// what the view shows changes, or when opening failed.

import Coffer
import Foundation
import Observation
import Testing

class ItemGroup: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var items: List<Item>
}

class Item: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = "\(randomAdjectives.randomElement()!) \(randomNouns.randomElement()!)"
    @Persisted var isFavorite = false
    @Persisted(originProperty: "items") var group: LinkingObjects<ItemGroup>
}

let randomAdjectives = ["fluffy", "classy", "bumpy", "bizarre", "wiggly", "quick", "sudden"]
let randomNouns = ["floor", "monitor", "hair tie", "puddle", "hair brush", "bread", "cinder block"]

/// What a `LocalOnlyContentView` shows, as an observable model.
@MainActor
@Observable
final class LocalOnlyContentModel {
    enum State {
        case opening
        case open
        case failed(String)
    }

    /// What the page's `.environment(\.realmConfiguration, ...)` passes down.
    let configuration: Database.Configuration
    private(set) var state = State.opening
    private(set) var itemNames: [String] = []
    @ObservationIgnored private var realm: Database?

    init(configuration: Database.Configuration) {
        self.configuration = configuration
    }

    /// Opens the database without blocking the main actor, as the view's
    /// `@AsyncOpen`-style open does.
    func open() async {
        do {
            realm = try await Database(configuration: configuration)
            state = .open
            reload()
        } catch {
            state = .failed(error.localizedDescription)
        }
    }

    /// The page's "add item" button.
    func addItem() throws {
        guard let realm else { return }
        try realm.write {
            let group = realm.objects(ItemGroup.self).first ?? realm.create(ItemGroup.self)
            group.items.append(Item())
        }
        reload()
    }

    private func reload() {
        itemNames = realm?.objects(ItemGroup.self).first?.items.map(\.name) ?? []
    }
}

@MainActor
@Suite struct SwiftUIOpenExamples {
    @Test func aViewModelOpensWithTheConfigurationItIsGiven() async throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        let model = LocalOnlyContentModel(configuration: Database.Configuration(
            fileURL: folder.file("items.realm"), objectTypes: [ItemGroup.self, Item.self]))
        await model.open()
        guard case .open = model.state else {
            Issue.record("state is \(model.state)")
            return
        }
        let changed = LockedFlag()
        withObservationTracking {
            _ = model.itemNames
        } onChange: {
            changed.set()
        }
        try model.addItem()
        #expect(changed.isSet && model.itemNames.count == 1)
        try model.addItem()
        #expect(model.itemNames.count == 2)
        let name = try #require(model.itemNames.first)
        #expect(randomAdjectives.contains { name.hasPrefix($0) })
    }

    @Test func aFailedOpenIsAState() async throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        let url = folder.file("locked.realm")
        _ = try await Database(configuration: Database.Configuration(fileURL: url, encryptionKey: Data(repeating: 1, count: 64),
                                                                     objectTypes: [ItemGroup.self, Item.self]))
        let model = LocalOnlyContentModel(configuration: Database.Configuration(fileURL: url, objectTypes: [ItemGroup.self, Item.self]))
        await model.open()
        guard case .failed(let message) = model.state else {
            Issue.record("state is \(model.state)")
            return
        }
        #expect(message.contains("locked.realm"), "\(message)")
        #expect(model.itemNames.isEmpty)
    }
}
