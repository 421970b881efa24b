// "Bundle a Realm File - Swift SDK", the steps without sync, with Coffer's
// renames (Realm → Database):
// https://www.mongodb.com/docs/atlas/device-sdks/sdk/swift/realm-files/bundle-a-realm/
// Write a copy of a database for bundling (deleting an older copy first),
// check the copy, then open a new database seeded from the bundled file and
// write to it as usual.

import Coffer
import Foundation
import Testing

@Suite struct BundleExamples {
    /// A database with the page's one task owned by Daenerys.
    static func sourceDatabase(in folder: ExampleFolder) throws -> Database {
        let realm = try Database(configuration: Database.Configuration(fileURL: folder.file("source.realm"), objectTypes: [Todo.self]))
        try realm.write {
            realm.create(Todo.self, value: ["name": "Take back the Iron Throne", "owner": "Daenerys", "status": "In Progress"])
        }
        return realm
    }

    @Test func copyADatabaseForBundling() throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        let realm = try Self.sourceDatabase(in: folder)
        var config = Database.Configuration(objectTypes: [Todo.self])

        // Verify there is a task object in the realm whose
        // owner's name is "Daenerys". When we open the bundled
        // realm later, we should see the same result.
        let tasks = realm.objects(Todo.self)
        let daenerysTasks = tasks.where { $0.owner == "Daenerys" }
        #expect(daenerysTasks.count == 1)

        // Specify an output directory for the bundled realm
        let outputDir = folder.url

        // Append a file name to complete the path
        let bundleRealmFilePath = outputDir.appendingPathComponent("seed.realm")

        // Update the config file path to the path where you want to save the bundled realm
        config.fileURL = bundleRealmFilePath

        // An older copy is there: it is deleted first.
        try Data("an older seed".utf8).write(to: bundleRealmFilePath)

        // Check to see if there is already a realm at the bundled realm file path. If there
        // is already a realm there, delete it.
        if Database.fileExists(for: config) {
            try Database.deleteFiles(for: config)
        }
        #expect(!FileManager.default.fileExists(atPath: bundleRealmFilePath.path))

        // Write a copy of the realm at the URL we specified
        try realm.writeCopy(configuration: config)

        // Verify that we successfully made a copy of the realm
        #expect(FileManager.default.fileExists(atPath: bundleRealmFilePath.path))

        // Verify that opening the realm at the new file URL works.
        let copiedRealm = try Database(configuration: config)

        // Verify that the copied realm contains the data we expect
        let copiedTasks = copiedRealm.objects(Todo.self)
        let daenerysCopiedTasks = copiedTasks.where { $0.owner == "Daenerys" }
        #expect(daenerysCopiedTasks.count == 1)
    }

    @Test func openADatabaseSeededFromTheBundledFile() throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        let seedURL = folder.file("seed.realm")
        try Self.sourceDatabase(in: folder).writeCopy(toFile: seedURL)

        var newUserConfig = Database.Configuration(fileURL: folder.file("user.realm"), objectTypes: [Todo.self])

        // Find the path of the seed.realm file in your project (here the
        // folder the copy was written to stands for the app's bundle)
        let realmURL: URL? = seedURL

        // When you use the `seedFilePath` parameter, this copies the
        // realm at the specified path for use with the user's config
        newUserConfig.seedFilePath = realmURL

        // Open the realm; it starts with the data of the bundled file.
        let realm = try Database(configuration: newUserConfig)

        // Read and write to the bundled realm as normal
        let tasks = realm.objects(Todo.self)

        // There should be one task whose owner is Daenerys because that's
        // what was in the bundled realm.
        var daenerysTasks = tasks.where { $0.owner == "Daenerys" }
        #expect(daenerysTasks.count == 1)

        // Write as usual to the realm, and see the object count increment
        let task = Todo(value: ["name": "Banish Ser Jorah", "owner": "Daenerys", "status": "In Progress"])
        try realm.write {
            realm.add(task)
        }

        daenerysTasks = tasks.where { $0.owner == "Daenerys" }
        #expect(daenerysTasks.count == 2)
        // The bundled file itself is left as it was.
        let seed = try Database(configuration: Database.Configuration(fileURL: seedURL, readOnly: true, objectTypes: [Todo.self]))
        #expect(seed.objects(Todo.self).count == 1)
    }

    @Test func aMissingSeedFileIsAnError() throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        var config = Database.Configuration(fileURL: folder.file("user.realm"), objectTypes: [Todo.self])
        config.seedFilePath = folder.file("not-bundled.realm")
        do {
            _ = try Database(configuration: config)
            Issue.record("a missing seed file opened")
        } catch {
            #expect(error.localizedDescription.contains("not-bundled.realm"), "\(error.localizedDescription)")
        }
        #expect(!Database.fileExists(for: config))
    }
}
