// The README's Swift blocks, compiled and run by `swift test`. Each stands between
// a line `// readme: NAME` and a line `// readme: end` as a copy of the README's block
// NAME; scripts/check-readme fails when they differ, and `scripts/check-readme
// --write-swift` copies them from the README after it changed.
// readme: swift-models
import Coffer
import Foundation

enum Status: String, PersistableEnum { case open, done }

final class Dog: Object {
    @Persisted(primaryKey: true) var id: ObjectId      // generated for each new Dog
    @Persisted(indexed: true) var name = ""
    @Persisted var breed: String?
    @Persisted var status = Status.open
    var nickname = ""                                  // not stored: no @Persisted
}
// readme: end
import Testing
#if canImport(CofferSyncNIO)
import CofferSyncNIO
#endif

// readme: swift-links-models
final class Address: EmbeddedObject {                  // lives inside its parent
    @Persisted var city: String?
}

final class Person: Object {
    @Persisted var name = ""
    @Persisted var address: Address?                   // embedded
    @Persisted var bestFriend: Person?                 // a link: always optional
    @Persisted var friends: List<Person>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var extra: AnyValue                     // any value, nested lists/dictionaries
    @Persisted(originProperty: "friends") var friendOf: LinkingObjects<Person>
}
// readme: end

// readme: swift-projection-models
final class PersonProjection: Projection<Person> {       // Person of the models above
    @Projected(\Person.name) var firstName                // passed through, renamed
    @Projected(\Person.name.localizedUppercase) var caps  // computed: read-only
    @Projected(\Person.address?.city) var homeCity        // links are optional: `?.`
    @Projected(\Person.friends.projectTo.name) var friendNames: ProjectedCollection<String>
}
// readme: end

// readme: swift-ui-models
import Observation

final class DogList {                                    // a view model
    @ObservedResults(Dog.self, sortDescriptor: SortDescriptor(keyPath: "name")) var dogs
}
// readme: end

// readme: swift-actor
actor DogStore {
    var db: Database!

    func open(_ config: Database.Configuration) async throws {
        db = try await Database(configuration: config, actor: self)  // isolated to this actor
    }

    func add(_ name: String) async throws -> Int {
        try await db.asyncWrite {                      // the actor runs on while it waits
            db.add(Dog(value: ["name": name]))
            return db.objects(Dog.self).count
        }
    }
}
// readme: end

/// Compiled, not run: it needs a running coffer-sync service.
/// Tests/CofferSyncClientTests runs the same calls against one.
@MainActor func syncQuickStart() async throws {
    // readme: swift-sync
    let app = App(baseURL: URL(string: "http://127.0.0.1:7800")!)
    let user = try await app.login(credentials: .anonymous)   // or .emailPassword(email:password:), .jwt(token:)
    var config = user.configuration(partitionValue: "team-1")
    config.objectTypes = [Dog.self]                            // synced classes need a primary key
    let db = try await Database(configuration: config)         // main-actor code: isolated to it
    try db.write { db.add(Dog(value: ["name": "Rex"])) }       // never waits for the network
    try await db.syncSession!.wait(for: .upload, timeout: .seconds(30))  // .timeout, never a hang
    // readme: end
}

/// Compiled, not run: it needs a running coffer-sync service.
/// Tests/CofferSyncClientTests (FlexibleSyncClientTests) runs the same calls against one.
@MainActor func flexibleSyncQuickStart() async throws {
    // readme: swift-flexible-sync
    let app = App(baseURL: URL(string: "http://127.0.0.1:7800")!)
    let user = try await app.login(credentials: .anonymous)
    var config = user.flexibleSyncConfiguration(initialSubscriptions: { subs in
        subs.append(QuerySubscription<Dog>(name: "rexes") { $0.name.starts(with: "Rex") })
    })
    config.objectTypes = [Dog.self]
    let db = try await Database(configuration: config)
    try await db.subscriptions.waitForCompletion(timeout: .seconds(30))   // the file holds the Rexes
    try await db.subscriptions.update {                                    // waits for the new objects
        $0.remove(named: "rexes")
        $0.append(QuerySubscription<Dog>(name: "open") { $0.status == .open })
    }
    // readme: end
}

#if canImport(CofferSyncNIO)
/// Compiled, not run: it needs a service with TLS. Tests/CofferSyncClientTests
/// (TLSSyncTests) syncs over wss:// with a CA made for the test.
@MainActor func syncTLSQuickStart() async throws {
    // readme: swift-sync-tls
    let app = App(baseURL: URL(string: "https://sync.example.com")!)   // the session's URL: wss://sync.example.com/sync/v1
    let user = try await app.login(credentials: .anonymous)
    var config = user.configuration(partitionValue: "team-1")
    config.syncConfiguration?.transport = NIOWebSocketTransport()        // or (trustingCertificateAt: "ca.pem")
    config.objectTypes = [Dog.self]
    let db = try await Database(configuration: config)
    // readme: end
    _ = db
}
#endif

/// Models for the migration block: version 2 of a Person that had first and last names.
enum MigrationModels {
    final class Person: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""
        @Persisted var fullName = ""
    }
}

/// Version 1 of the migration block's Person.
enum MigrationModelsVersion1 {
    final class Person: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""
    }
}

/// Each README block of statements runs in a test of its own, in a fresh folder.
@Suite final class ReadmeTests {
    let dir: Foundation.URL

    init() throws {
        dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("coffer-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: dir)
    }

    /// The README's relative paths name files in the folder a program runs in: here,
    /// the test's own folder.
    func URL(fileURLWithPath path: String) -> Foundation.URL {
        dir.appendingPathComponent(path)
    }

    /// A database with every model of the README, for the blocks that use `db`.
    func openAll() throws -> Database {
        var config = Database.Configuration(fileURL: URL(fileURLWithPath: "all.coffer"))
        config.objectTypes = [Dog.self, Person.self, Address.self]
        return try Database(configuration: config)
    }

    @Test func quickStart() throws {
        // readme: swift-quickstart
        var config = Database.Configuration(fileURL: URL(fileURLWithPath: "dogs-swift.coffer"))
        config.objectTypes = [Dog.self]                        // the classes the file stores
        let db = try Database(configuration: config)

        let rex = Dog(value: ["name": "Rex", "breed": "Beagle"])
        try db.write {
            db.add(rex)                                        // rex is now managed and live
        }
        try db.write { rex.status = .done }                    // writes need a transaction

        let dogs = db.objects(Dog.self)                        // a lazy, live collection
        print(dogs.count, dogs.first?.name ?? "")
        let same = db.object(ofType: Dog.self, forPrimaryKey: rex.id)
        // readme: end
        #expect(dogs.count == 1 && dogs.first?.name == "Rex")
        #expect(same?.status == .done && same?.breed == "Beagle")
    }

    @Test func actorIsolatedDatabase() async throws {
        var config = Database.Configuration(fileURL: URL(fileURLWithPath: "actor.coffer"))
        config.objectTypes = [Dog.self]
        let store = DogStore()
        try await store.open(config)
        #expect(try await store.add("Rex") == 1)
        #expect(try await store.add("Fido") == 2)
    }

    @MainActor @Test func frozenViewsAndReferences() async throws {
        let config = Database.Configuration(fileURL: URL(fileURLWithPath: "threads.coffer"), objectTypes: [Dog.self])
        let db = try await Database(configuration: config)
        // readme: swift-threads
        try db.write { db.add(Dog(value: ["name": "Rex"])) }

        let open = Frozen(db.objects(Dog.self).where { $0.status == .open })  // Sendable
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { open.value.count } }           // any task reads it
            var total = 0
            for await count in group { total += count }
            return total
        }

        let reference = ThreadSafeReference(to: db.objects(Dog.self).first!)
        try await Task.detached {
            let other = try await Database(configuration: config)   // confined to this thread
            guard let rex = other.resolve(reference) else { return } // nil if deleted meanwhile
            try other.write { rex.status = .done }
        }.value
        // readme: end
        #expect(counts == 4)
        db.refresh()
        #expect(db.objects(Dog.self).first?.status == .done)
    }

    @Test func observingChanges() throws {
        let db = try openAll()
        // readme: swift-observe
        let dogs = db.objects(Dog.self).sorted(by: \.name)
        var log: [String] = []
        let token = dogs.observe { change in                     // CollectionChange<Results<Dog>>
            switch change {
            case .initial(let dogs): log.append("\(dogs.count) dogs")
            case .update(_, let deletions, let insertions, let modifications):
                log.append("-\(deletions) +\(insertions) ~\(modifications)")
            case .error(let error): log.append("\(error)")
            }
        }
        db.refresh()                                             // calls it here: "0 dogs"
        let ace = Dog(value: ["name": "Ace"])
        try db.write { db.add(ace) }
        db.refresh()                                             // "-[] +[0] ~[]"
        let aceToken = ace.observe(keyPaths: ["name"]) { change in   // ObjectChange<Dog>
            if case .change(_, let properties) = change {
                log += properties.map { "\($0.name): \($0.oldValue ?? "") -> \($0.newValue ?? "")" }
            }
        }
        try db.write { ace.name = "Abe" }
        db.refresh()                                             // "-[] +[] ~[0]", "name: Ace -> Abe"
        token.invalidate()                                       // or let the token go
        aceToken.invalidate()
        // readme: end
        #expect(log.prefix(2) == ["0 dogs", "-[] +[0] ~[]"])
        #expect(Set(log.dropFirst(2)) == ["-[] +[] ~[0]", "name: Ace -> Abe"] && log.count == 4, "\(log)")
    }

    @Test func observingInAUserInterface() throws {
        let db = try openAll()
        // readme: swift-ui-observe
        let list = DatabaseEnvironment.$configuration.withValue(db.configuration) { DogList() }
        withObservationTracking {
            print(list.dogs.map(\.name))                         // a render reads what it shows
        } onChange: {
            print("dogs changed: render again")                  // once per commit that changed them
        }
        list.$dogs.append(Dog(value: ["name": "Rex"]))           // written in a transaction
        list.$dogs.database.refresh()                            // "dogs changed: render again"
        // readme: end
        db.refresh()
        #expect(db.objects(Dog.self).contains { $0.name == "Rex" })
        #expect(list.dogs.contains { $0.name == "Rex" })
    }

    @Test func linksAndCollections() throws {
        let db = try openAll()
        // readme: swift-links
        let ada = Person(value: ["name": "Ada", "address": ["city": "London"]])
        let bob = Person(value: ["name": "Bob"])
        ada.friends.append(bob)                                // unmanaged: kept in memory
        bob.bestFriend = ada
        try db.write { db.add(ada) }                           // writes ada, her address and bob
        try db.write {
            ada.tags.insert("math")                            // managed: live views
            ada.scores["chess"] = 3
            ada.extra = .dictionary(["languages": .list([.string("en")])])
        }
        try db.write {                                         // a nested List or Map is live too
            ada.extra.dictionaryValue?["languages"]?.listValue?.append(.string("fr"))
        }
        print(bob.friendOf.map(\.name))                        // ["Ada"]
        // readme: end
        #expect(bob.friendOf.map(\.name) == ["Ada"])
        #expect(ada.tags.contains("math") && ada.scores["chess"] == 3)
        #expect(ada.extra == .dictionary(["languages": .list([.string("en"), .string("fr")])]))
        #expect(ada.address?.city == "London" && db.objects(Person.self).count == 2)
    }

    @Test func queries() throws {
        let db = try openAll()
        try db.write {
            db.add(Dog(value: ["name": "rover", "breed": "Pug"]))
            db.add(Dog(value: ["name": "Rex", "breed": "Beagle", "status": Status.done]))
            db.add(Person(value: ["name": "Ada", "address": ["city": "London"],
                                  "friends": [["name": "Bob"]], "scores": ["chess": 3]]))
        }
        // readme: swift-query
        let dogs = db.objects(Dog.self)                          // the models above
        let open = dogs.where { $0.status == .open && $0.name.starts(with: "r", options: .caseInsensitive) }
        let found = dogs.filter("name BEGINSWITH %@ AND breed IN %@", "R", ["Beagle", "Pug"])  // or $0, $1
        let byName = open.sorted(by: \.name)                     // or sorted(byKeyPath: "name")
        let people = db.objects(Person.self)
        let social = people.where { $0.friends.count > 0 || $0.address.city == "London" }
        let chess = people.where { $0.scores["chess"] >= 3 && $0.friends.name.contains("Bo") }
        let friendOfAda = people.filter("ANY friendOf.name == %@", "Ada")
        // readme: end
        #expect(open.map(\.name) == ["rover"] && byName.count == 1)
        #expect(found.count == 1 && found.first?.name == "Rex")
        #expect(social.map(\.name) == ["Ada"] && chess.map(\.name) == ["Ada"])
        #expect(friendOfAda.map(\.name) == ["Bob"])
    }

    @Test func projections() throws {
        let db = try openAll()
        try db.write { db.add(Person(value: ["name": "Ada", "address": ["city": "London"]])) }
        // readme: swift-projection
        let people = db.objects(PersonProjection.self).where { $0.homeCity == "London" }.sorted(by: \.firstName)
        try db.write { people.first?.firstName = "Augusta" }     // writes the Person
        // readme: end
        #expect(db.objects(Person.self).first?.name == "Augusta")
        #expect(people.first?.caps == "AUGUSTA")
    }

    @Test func migration() throws {
        typealias Person = MigrationModels.Person
        let url = URL(fileURLWithPath: "people.coffer")
        let backupURL = URL(fileURLWithPath: "backup.coffer")
        let key = Data((0..<64).map { UInt8($0) })
        do {
            let version1 = Database.Configuration(
                fileURL: url, schemaVersion: 1, objectTypes: [MigrationModelsVersion1.Person.self])
            let old = try Database(configuration: version1)
            try old.write {
                old.add(MigrationModelsVersion1.Person(value: ["firstName": "Ada", "lastName": "Lovelace"]))
            }
        }
        // readme: swift-migration
        var config = Database.Configuration(fileURL: url, schemaVersion: 2, objectTypes: [Person.self])
        config.migrationBlock = { migration, oldSchemaVersion in
            migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
                newObject!["fullName"] = "\(oldObject!["firstName"]!) \(oldObject!["lastName"]!)"
            }
        }
        config.shouldCompactOnLaunch = { totalBytes, usedBytes in totalBytes > 2 * usedBytes }
        config.maximumNumberOfActiveVersions = 8
        let db = try Database(configuration: config)
        try db.writeCopy(configuration: Database.Configuration(fileURL: backupURL, encryptionKey: key))
        // readme: end
        #expect(db.objects(Person.self).first?.fullName == "Ada Lovelace")
        var copied = Database.Configuration(fileURL: backupURL, encryptionKey: key, objectTypes: [Person.self])
        copied.schemaVersion = 2
        let backup = try Database(configuration: copied)
        #expect(backup.objects(Person.self).first?.fullName == "Ada Lovelace")
    }
}
