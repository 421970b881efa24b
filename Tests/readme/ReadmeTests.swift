// The README's Swift blocks, compiled and run by `swift test`. This file is
// written by scripts/check-readme from README.md and Tests/readme/ReadmeTests.swift:
// edit those, then run `scripts/check-readme --write-swift`.
// readme: swift-models
import Testing

// readme: swift-links-models

// readme: swift-projection-models

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
        #expect(dogs.count == 1 && dogs.first?.name == "Rex")
        #expect(same?.status == .done && same?.breed == "Beagle")
    }

    @Test func linksAndCollections() throws {
        let db = try openAll()
        // readme: swift-links
        #expect(bob.friendOf.map(\.name) == ["Ada"])
        #expect(ada.tags.contains("math") && ada.scores["chess"] == 3)
        #expect(ada.address?.city == "London" && db.objects(Person.self).count == 2)
    }

    @Test func queries() throws {
        let db = try openAll()
        try db.write {
            try db.add(Dog(value: ["name": "rover", "breed": "Pug"]))
            try db.add(Dog(value: ["name": "Rex", "breed": "Beagle", "status": Status.done]))
            try db.add(Person(value: ["name": "Ada", "address": ["city": "London"],
                                      "friends": [["name": "Bob"]], "scores": ["chess": 3]]))
        }
        // readme: swift-query
        #expect(open.map(\.name) == ["rover"] && byName.count == 1)
        #expect(found.count == 1 && found.first?.name == "Rex")
        #expect(social.map(\.name) == ["Ada"] && chess.map(\.name) == ["Ada"])
        #expect(friendOfAda.map(\.name) == ["Bob"])
    }

    @Test func projections() throws {
        let db = try openAll()
        try db.write { try db.add(Person(value: ["name": "Ada", "address": ["city": "London"]])) }
        // readme: swift-projection
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
                try old.add(MigrationModelsVersion1.Person(value: ["firstName": "Ada", "lastName": "Lovelace"]))
            }
        }
        // readme: swift-migration
        #expect(db.objects(Person.self).first?.fullName == "Ada Lovelace")
        var copied = Database.Configuration(fileURL: backupURL, encryptionKey: key, objectTypes: [Person.self])
        copied.schemaVersion = 2
        let backup = try Database(configuration: copied)
        #expect(backup.objects(Person.self).first?.fullName == "Ada Lovelace")
    }
}
