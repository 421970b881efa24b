// The configuration properties Realm's pages set, with Coffer's renames
// (Realm → Database, deleteRealmIfMigrationNeeded → deleteDatabaseIfMigrationNeeded):
// "Encrypt a Realm": https://www.mongodb.com/docs/atlas/device-sdks/sdk/swift/realm-files/encrypt-a-realm/
// "Reduce Realm File Size": https://www.mongodb.com/docs/atlas/device-sdks/sdk/swift/realm-files/compacting/
// "Change an Object Model": https://www.mongodb.com/docs/atlas/device-sdks/sdk/swift/model-data/change-an-object-model/
// and Realm.Configuration's reference (readOnly, maximumNumberOfActiveVersions).

import Coffer
import Foundation
import Testing

/// The page's `Person` before and after its change: both are stored as `Person`.
enum MigrationPage {
    enum V1 {
        class Person: Object {
            @Persisted var firstName = ""
            @Persisted var lastName = ""
            @Persisted var age = 0
        }
    }

    enum V2 {
        class Person: Object {
            @Persisted var fullName = ""
            @Persisted var age = 0
        }
    }
}

@Suite struct ConfigurationPropertyExamples {
    @Test func anEncryptedDatabase() throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        // Generate a random encryption key (the page uses SecRandomCopyBytes,
        // which Linux lacks; the system generator is as random)
        var generator = SystemRandomNumberGenerator()
        let key = Data((0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) })

        // Configure for an encrypted realm
        var config = Database.Configuration(encryptionKey: key)
        config.fileURL = folder.file("encrypted.realm")
        config.objectTypes = [Todo.self]

        do {
            // Open the encrypted realm
            let realm = try Database(configuration: config)
            // ... use the realm as normal ...
            try realm.write { realm.create(Todo.self, value: ["name": "Hide", "owner": "Me", "status": "Open"]) }
        } catch let error as CofferError {
            Issue.record("Error opening realm: \(error.localizedDescription)")
        }
        let bytes = try Data(contentsOf: folder.file("encrypted.realm"))
        #expect(bytes.range(of: Data("Hide".utf8)) == nil)
        var wrong = config
        wrong.encryptionKey = Data(repeating: 7, count: 64)
        #expect(throws: CofferError.self) { try Database(configuration: wrong) }
        wrong.encryptionKey = Data(repeating: 7, count: 32)
        do {
            _ = try Database(configuration: wrong)
            Issue.record("a 32-byte key opened the file")
        } catch {
            #expect(error.localizedDescription.contains("64"), "\(error.localizedDescription)")
        }
        #expect(try Database(configuration: config).objects(Todo.self).first?.name == "Hide")
    }

    @Test func compactOnLaunch() throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        let asked = LockedFlag()
        let config = Database.Configuration(fileURL: folder.file("compact.realm"), shouldCompactOnLaunch: { totalBytes, usedBytes in
            asked.set()
            // totalBytes refers to the size of the file on disk in bytes (data + free space)
            // usedBytes refers to the number of bytes used by data in the file

            // Compact if the file is over 100MB in size and less than 50% 'used'
            let oneHundredMB = 100 * 1024 * 1024
            return (totalBytes > oneHundredMB) && (Double(usedBytes) / Double(totalBytes)) < 0.5
        }, objectTypes: [Todo.self])
        do {
            // Realm is compacted on the first open if the configuration block conditions were met.
            let realm = try Database(configuration: config)
            try realm.write { realm.create(Todo.self, value: ["name": "Tidy", "owner": "Me", "status": "Open"]) }
        } catch {
            Issue.record("handle error compacting or opening Realm: \(error)")
        }
        _ = try Database(configuration: config)
        #expect(asked.isSet)
    }

    @Test func aSchemaVersionAndAMigrationBlock() throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        let url = folder.file("people.realm")
        do {
            let v1 = try Database(configuration: Database.Configuration(fileURL: url, objectTypes: [MigrationPage.V1.Person.self]))
            try v1.write { v1.create(MigrationPage.V1.Person.self, value: ["firstName": "Ada", "lastName": "Lovelace", "age": 36]) }
        }
        let config = Database.Configuration(
            fileURL: url,
            schemaVersion: 2,
            migrationBlock: { migration, oldSchemaVersion in
                if oldSchemaVersion < 2 {
                    // Iterate over every 'Person' object stored in the Realm file to
                    // apply the migration
                    migration.enumerateObjects(ofType: MigrationPage.V2.Person.className()) { oldObject, newObject in
                        // combine name fields into a single field
                        let firstName = oldObject!["firstName"] as! String
                        let lastName = oldObject!["lastName"] as! String
                        newObject!["fullName"] = "\(firstName) \(lastName)"
                    }
                }
            },
            objectTypes: [MigrationPage.V2.Person.self]
        )
        let realm = try Database(configuration: config)
        #expect(realm.objects(MigrationPage.V2.Person.self).map(\.fullName) == ["Ada Lovelace"])
        #expect(try schemaVersionAtURL(url) == 2)
    }

    @Test func deleteTheDatabaseIfMigrationNeeded() throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        let url = folder.file("cache.realm")
        do {
            let v1 = try Database(configuration: Database.Configuration(fileURL: url, objectTypes: [MigrationPage.V1.Person.self]))
            try v1.write { v1.create(MigrationPage.V1.Person.self, value: ["firstName": "Ada"]) }
        }
        let strict = Database.Configuration(fileURL: url, objectTypes: [MigrationPage.V2.Person.self])
        #expect(throws: CofferError.self) { try Database(configuration: strict) }
        let config = Database.Configuration(fileURL: url, deleteDatabaseIfMigrationNeeded: true, objectTypes: [MigrationPage.V2.Person.self])
        let realm = try Database(configuration: config)
        #expect(realm.objects(MigrationPage.V2.Person.self).isEmpty)
    }

    @Test func aReadOnlyDatabase() throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        let url = folder.file("bundle.realm")
        do {
            let writer = try Database(configuration: Database.Configuration(fileURL: url, objectTypes: [Todo.self]))
            try writer.write { writer.create(Todo.self, value: ["name": "Read me", "owner": "Me", "status": "Open"]) }
        }
        let config = Database.Configuration(fileURL: url, readOnly: true, objectTypes: [Todo.self])
        let realm = try Database(configuration: config)
        #expect(realm.objects(Todo.self).first?.name == "Read me")
        #expect(throws: CofferError.self) { try realm.write { try realm.tryAdd(Todo()) } }
        #expect(realm.objects(Todo.self).count == 1)
    }

    @Test func aLimitOnActiveVersions() throws {
        let folder = ExampleFolder()
        defer { folder.remove() }
        let config = Database.Configuration(fileURL: folder.file("versions.realm"), objectTypes: [Todo.self], maximumNumberOfActiveVersions: 2)
        let realm = try Database(configuration: config)
        try realm.write { realm.create(Todo.self, value: ["name": "One", "owner": "Me", "status": "Open"]) }
        let first = realm.freeze()
        try realm.write { realm.create(Todo.self, value: ["name": "Two", "owner": "Me", "status": "Open"]) }
        let second = realm.freeze()
        // Two pinned versions and the next commit would be three.
        do {
            try realm.write { try realm.tryAdd(Todo(value: ["name": "Three", "owner": "Me", "status": "Open"])) }
            Issue.record("a third version was written")
        } catch let error as CofferError {
            #expect(error.code == .limit && error.message.contains("2"), "\(error)")
        }
        #expect(first.objects(Todo.self).count == 1 && second.objects(Todo.self).count == 2)
        #expect(realm.objects(Todo.self).count == 2 && !realm.isInWriteTransaction)
    }
}

/// A flag set from a callback that may run on another thread (compaction,
/// an observation's change handler).
final class LockedFlag: @unchecked Sendable {
    // @unchecked: the one Bool is read and written under `lock` only.
    private let lock = NSLock()
    private var value = false

    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
