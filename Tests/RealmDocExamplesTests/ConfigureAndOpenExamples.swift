// "Configure & Open a Realm - Swift SDK", with Coffer's renames (Realm →
// Database): https://www.mongodb.com/docs/atlas/device-sdks/sdk/swift/realm-files/configure-and-open-a-realm/
// The default database, a file URL derived from the default configuration,
// an in-memory database, a subset of classes, and errors when opening.

import Coffer
import Foundation
import Testing

/// The page's model for a subset of classes (the page calls it `Task`, which
/// Swift concurrency's `Task` would shadow here).
class Todo: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name: String
    @Persisted var owner: String
    @Persisted var status: String
}

@Suite struct ConfigureAndOpenExamples {
    @Test func openTheDefaultDatabaseOrOneAtAFileURL() async {
        await #expect(processExitsWith: .success) {
            DefaultDatabase.moveToNewFolder()

            // Open the default realm
            let defaultRealm = try! Database()

            // Open the realm with a specific file URL, for example a username
            let username = "GordonCole"
            var config = Database.Configuration.defaultConfiguration
            config.fileURL!.deleteLastPathComponent()
            config.fileURL!.appendPathComponent(username)
            config.fileURL!.appendPathExtension("realm")
            let realm = try! Database(configuration: config)

            require(realm.configuration.fileURL?.lastPathComponent == "GordonCole.realm", "\(String(describing: realm.configuration.fileURL))")
            require(realm.configuration.fileURL?.deletingLastPathComponent() == defaultRealm.configuration.fileURL?.deletingLastPathComponent(),
                    "the file is not next to the default one")
            try! realm.write { realm.create(Todo.self, value: ["name": "Find Laura's killer", "owner": "Cole", "status": "Open"]) }
            require(defaultRealm.objects(Todo.self).isEmpty && realm.objects(Todo.self).count == 1, "the two files are not separate")
            require(FileManager.default.fileExists(atPath: realm.configuration.fileURL!.path), "no file")
        }
    }

    @Test func openAnInMemoryDatabase() throws {
        // Open the realm with a specific in-memory identifier.
        let identifier = "MyRealm"
        let config = Database.Configuration(
            inMemoryIdentifier: identifier)
        // Open the realm
        let realm = try! Database(configuration: config)

        try realm.write { realm.create(Todo.self, value: ["name": "Remember", "owner": "Me", "status": "Open"]) }
        // Another database with the identifier sees the same objects while one is open.
        let again = try Database(configuration: config)
        #expect(again.objects(Todo.self).count == 1)
        #expect(realm.configuration.fileURL == nil && realm.configuration.inMemoryIdentifier == "MyRealm")
    }

    @Test func provideASubsetOfClasses() throws {
        var config = Database.Configuration.defaultConfiguration
        config.inMemoryIdentifier = "subset-of-classes"

        // Limit the realm to only the Todo object. All other
        // Object- and EmbeddedObject-derived classes are not added.
        config.objectTypes = [Todo.self]

        let realm = try! Database(configuration: config)
        #expect(realm.schema.objectSchema.map(\.className) == ["Todo"])
    }

    @Test func handleErrorsWhenOpening() throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        let key = Data((0..<64).map { _ in UInt8.random(in: 0...255) })
        let encrypted = Database.Configuration(fileURL: folder.file("secret.realm"), encryptionKey: key, objectTypes: [Todo.self])
        do {
            let created = try Database(configuration: encrypted)
            try created.write { created.create(Todo.self, value: ["name": "Keep", "owner": "Me", "status": "Open"]) }
        }
        var config = encrypted
        config.encryptionKey = Data(key.reversed())

        var caught: NSError?
        do {
            let realm = try Database(configuration: config)
            Issue.record("opened \(realm) with the wrong key")
        } catch {
            // The page writes `catch let error as NSError`; on Linux that
            // pattern matches only NSError instances (there is no Objective-C
            // bridging of other errors), so the error is converted explicitly.
            let error = error as NSError
            // Handle error
            caught = error
        }
        let error = try #require(caught)
        #expect(error.localizedDescription.contains("secret.realm"), "\(error.localizedDescription)")
        // Nothing committed is lost: the right key still opens the file.
        #expect(try Database(configuration: encrypted).objects(Todo.self).count == 1)
    }
}
