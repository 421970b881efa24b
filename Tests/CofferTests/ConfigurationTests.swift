// Tests of Database.Configuration: defaults, file and in-memory databases,
// deleting files, schema changes and the default configuration.

import Coffer
import Foundation
import Testing

/// Classes stored under the same names as `Dog` and `Book`, with other properties,
/// to change a file's schema.
enum Changed {
    /// `Dog` with one more property.
    final class Dog: CofferTests.Dog {
        @Persisted var weight = 0.0
    }

    final class Book: Object {
        @Persisted(indexed: true) var title = ""
        @Persisted var price = "free"
    }
}

@Suite struct ConfigurationTests {
    @Test func fileURLAndInMemoryIdentifierClearEachOther() {
        var config = Database.Configuration()
        #expect(config.fileURL?.lastPathComponent == "default.coffer")
        #expect(config.inMemoryIdentifier == nil)
        config.inMemoryIdentifier = "cache"
        #expect(config.fileURL == nil)
        #expect(config.inMemoryIdentifier == "cache")
        config.fileURL = URL(fileURLWithPath: "/tmp/a.coffer")
        #expect(config.inMemoryIdentifier == nil)
        #expect(config.fileURL?.path == "/tmp/a.coffer")
        config.inMemoryIdentifier = "cache"
        config.inMemoryIdentifier = nil
        #expect(config.fileURL?.lastPathComponent == "default.coffer")
        #expect(Database.Configuration(fileURL: URL(fileURLWithPath: "/tmp/b"), inMemoryIdentifier: "m").fileURL == nil)
    }

    @Test func fileExistsAndDeleteFiles() throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, [Dog.self], in: dir)
        #expect(!Database.fileExists(for: config))
        #expect(try Database.deleteFiles(for: config) == false)
        do {
            let db = try Database(configuration: config)
            try db.write { db.add(Dog(value: ["name": "Rex"])) }
            #expect(Database.fileExists(for: config))
            expectCofferError(.busy, containing: "test.coffer", "open") { try Database.deleteFiles(for: config) }
        }
        #expect(try Database.deleteFiles(for: config) == true)
        #expect(!Database.fileExists(for: config))
        #expect(!FileManager.default.fileExists(atPath: dir.file("test.coffer-lock").path))
        let reopened = try Database(configuration: config)
        #expect(reopened.objects(Dog.self).isEmpty)
    }

    @Test func inMemoryDatabasesShareDataByIdentifierAndLeaveNoFile() throws {
        let dir = TemporaryDirectory()
        let config = configuration(.inMemory, [Dog.self], in: dir)
        #expect(!Database.fileExists(for: config))
        #expect(try Database.deleteFiles(for: config) == false)
        do {
            let first = try Database(configuration: config)
            try first.write { first.add(Dog(value: ["name": "Rex"])) }
            let second = try Database(configuration: config)
            #expect(second.objects(Dog.self).first?.name == "Rex")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).isEmpty)
        // The last handle closed, so the data went with it.
        let again = try Database(configuration: config)
        #expect(again.objects(Dog.self).isEmpty)
    }

    @Test func badLocationsAreClearErrors() {
        var config = Database.Configuration(objectTypes: [Dog.self])
        config.inMemoryIdentifier = ""
        expectCofferError(.invalidArgument) { _ = try Database(configuration: config) }
        config.fileURL = URL(string: "https://example.com/db.coffer")!
        expectCofferError(.invalidArgument, containing: "https://example.com/db.coffer", "not a file URL") {
            _ = try Database(configuration: config)
        }
    }

    @Test func encryptionKeyErrors() throws {
        let dir = TemporaryDirectory()
        var config = configuration(.plain, [Dog.self], in: dir)
        config.encryptionKey = Data(count: 32)
        expectCofferError(.invalidArgument, containing: "32") { _ = try Database(configuration: config) }
        config.encryptionKey = Data()
        expectCofferError(.invalidArgument, containing: "64") { _ = try Database(configuration: config) }
        #expect(!Database.fileExists(for: config), "a rejected key creates no file")

        config.encryptionKey = testKey
        do {
            let db = try Database(configuration: config)
            try db.write { db.add(Dog(value: ["name": "Secret"])) }
        }
        var wrong = config
        wrong.encryptionKey = Data(repeating: 7, count: 64)
        expectCofferError(.wrongKey) { _ = try Database(configuration: wrong) }
        var missing = config
        missing.encryptionKey = nil
        expectCofferError(.keyRequired) { _ = try Database(configuration: missing) }
        let contents = try Data(contentsOf: dir.file("test.coffer"))
        #expect(contents.range(of: Data("Secret".utf8)) == nil, "the value is not in the file in clear")

        let plain = configuration(.plain, [Dog.self], in: dir, name: "plain.coffer")
        _ = try Database(configuration: plain)
        var keyed = plain
        keyed.encryptionKey = testKey
        expectCofferError(.notEncrypted) { _ = try Database(configuration: keyed) }
        #expect(try Database(configuration: config).objects(Dog.self).first?.name == "Secret")
    }

    @Test func readOnly() throws {
        let dir = TemporaryDirectory()
        var config = configuration(.plain, [Dog.self], in: dir)
        config.readOnly = true
        expectCofferError(.notFound) { _ = try Database(configuration: config) }
        #expect(!Database.fileExists(for: config))
        config.readOnly = false
        do {
            let db = try Database(configuration: config)
            try db.write { db.add(Dog(value: ["name": "Rex"])) }
        }
        config.readOnly = true
        let db = try Database(configuration: config)
        #expect(db.objects(Dog.self).first?.name == "Rex")
        expectCofferError(.readOnly) { try db.write {} }
        #expect(!db.isInWriteTransaction)
        config.deleteDatabaseIfMigrationNeeded = true
        expectCofferError(.invalidArgument, containing: "readOnly", "deleteDatabaseIfMigrationNeeded") {
            _ = try Database(configuration: config)
        }
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func schemaVersionsAndMigrationErrors(storage: Storage) throws {
        let dir = TemporaryDirectory()
        var config = configuration(storage, [Dog.self, Book.self], in: dir)
        config.schemaVersion = 1
        do {
            let db = try Database(configuration: config)
            try db.write {
                db.add(Dog(value: ["name": "Rex", "age": 3]))
                db.add(Book(value: ["title": "Dune"]))
            }
        }
        var changed = config
        changed.objectTypes = [Changed.Dog.self, Book.self]
        expectCofferError(.migrationRequired, containing: "Dog.weight") { _ = try Database(configuration: changed) }
        changed.schemaVersion = 0
        expectCofferError(.schemaVersion, containing: "0", "1") { _ = try Database(configuration: changed) }

        // A higher version applies the added property; the data stays.
        changed.schemaVersion = 2
        let db = try Database(configuration: changed)
        let rex = try #require(db.objects(Changed.Dog.self).first)
        #expect(rex.name == "Rex")
        #expect(rex.age == 3)
        #expect(rex.weight == 0)
        #expect(db.objects(Book.self).first?.title == "Dune")
    }

    @Test func deleteDatabaseIfMigrationNeeded() throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, [Book.self], in: dir)
        do {
            let db = try Database(configuration: config)
            try db.write { db.add(Book(value: ["title": "Dune"])) }
        }
        var changed = config
        changed.objectTypes = [Changed.Book.self]
        changed.deleteDatabaseIfMigrationNeeded = true
        do {
            // Never deletes a file that is open in this process.
            let holder = try Database(configuration: config)
            expectCofferError(.busy, containing: "price") { _ = try Database(configuration: changed) }
            #expect(holder.objects(Book.self).count == 1)
        }
        let db = try Database(configuration: changed)
        #expect(db.objects(Changed.Book.self).isEmpty)
        try db.write { db.add(Changed.Book(value: ["title": "Emma", "price": "3"])) }
        #expect(db.objects(Changed.Book.self).first?.price == "3")
    }

    @Test func seedFileIsCopiedWhenTheFileIsMissing() throws {
        let dir = TemporaryDirectory()
        let seed = configuration(.plain, [Book.self], in: dir, name: "seed.coffer")
        do {
            let db = try Database(configuration: seed)
            try db.write { db.add(Book(value: ["title": "Seeded"])) }
        }
        var config = configuration(.plain, [Book.self], in: dir)
        config.seedFilePath = seed.fileURL
        let db = try Database(configuration: config)
        #expect(db.objects(Book.self).map(\.title) == ["Seeded"])
        try db.write { db.add(Book(value: ["title": "Mine"])) }
        #expect(try Database(configuration: seed).objects(Book.self).count == 1, "the seed itself is unchanged")

        var missing = configuration(.plain, [Book.self], in: dir, name: "other.coffer")
        missing.seedFilePath = dir.file("no-such-seed.coffer")
        expectCofferError(.notFound, containing: "no-such-seed.coffer") { _ = try Database(configuration: missing) }
    }

    @Test func configurationIsSendable() async throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, [Book.self], in: dir)
        // Each task opens its own Database from the shared configuration.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<4 {
                group.addTask {
                    let db = try Database(configuration: config)
                    try db.write { db.add(Book(value: ["title": "Book \(i)"])) }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await Database(configuration: config).objects(Book.self).count == 4)
    }
}

/// The process-wide default configuration, changed only by this serialized suite.
@Suite(.serialized) struct DefaultConfigurationTests {
    @Test func databaseOpensTheDefaultConfiguration() throws {
        let dir = TemporaryDirectory()
        let saved = Database.Configuration.defaultConfiguration
        defer { Database.Configuration.defaultConfiguration = saved }
        Database.Configuration.defaultConfiguration = configuration(.plain, [Dog.self], in: dir)

        let db = try Database()
        try db.write { db.add(Dog(value: ["name": "Rex"])) }
        #expect(db.configuration.fileURL == dir.file("test.coffer"))
        #expect(try Database().objects(Dog.self).count == 1)
    }

    @Test func fileURLInitUsesTheStoredSchema() throws {
        let dir = TemporaryDirectory()
        do {
            let db = try Database(configuration: configuration(.plain, [Dog.self], in: dir))
            try db.write { db.add(Dog(value: ["name": "Rex", "age": 5])) }
        }
        // The default configuration lists no classes: the file's schema is used.
        let db = try Database(fileURL: dir.file("test.coffer"))
        #expect(db.configuration.objectTypes == nil)
        #expect(db.objects(Dog.self).first?.age == 5)
        try db.write { db.add(Dog(value: ["name": "Fido"])) }
        #expect(db.objects(Dog.self).count == 2)
        // A class whose properties differ from the stored ones is refused by name.
        expectCofferError(.schema, containing: "Dog", "weight") {
            try db.write { try db.tryAdd(Changed.Dog()) }
        }
        // A class the file does not have, whose name no other class of the
        // program has, was added to the file when it was opened.
        try db.write { db.add(Note(value: ["text": "added"])) }
        #expect(db.objects(Note.self).count == 1)
    }
}
