// Tests of schema migrations: the model at several versions, renames, failures
// and the migration API.

import Coffer
import Foundation
import Testing

/// The same classes at three schema versions.
enum SchemaV1 {
    final class Person: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""
        @Persisted var age = 0
    }

    final class Pet: Object {
        @Persisted var name = ""
    }
}

enum SchemaV2 {
    final class Person: Object {
        @Persisted var fullName = ""
        @Persisted var age = 0
        @Persisted var weight = 0.0
    }
}

enum SchemaRenamed {
    final class Person: Object {
        @Persisted var firstName = ""
        @Persisted var surname = ""
        @Persisted var age = 0
    }
}

enum SchemaWithDog {
    final class Person: Object {
        @Persisted var fullName = ""
        @Persisted var age = 0
        @Persisted var weight = 0.0
        @Persisted var dog: Dog?
    }

    final class Dog: Object {
        @Persisted var name = ""
    }
}

/// An error a migration block throws.
struct MigrationAborted: Error, Equatable {
    let reason: String
}

@Suite struct MigrationTests {
    /// A file at version 1 with two people and a pet.
    private func makeVersion1(_ storage: Storage, in dir: TemporaryDirectory) throws -> Database.Configuration {
        var config = configuration(storage, [SchemaV1.Person.self, SchemaV1.Pet.self], in: dir)
        config.schemaVersion = 1
        let db = try Database(configuration: config)
        try db.write {
            db.add(SchemaV1.Person(value: ["firstName": "Ada", "lastName": "Lovelace", "age": 36]))
            db.add(SchemaV1.Person(value: ["firstName": "Alan", "lastName": "Turing", "age": 41]))
            db.add(SchemaV1.Pet(value: ["name": "Rex"]))
        }
        return config
    }

    /// `old` at schema version 2 with `types`.
    private func version2(of old: Database.Configuration, _ types: [Object.Type]) -> Database.Configuration {
        var config = old
        config.objectTypes = types
        config.schemaVersion = 2
        return config
    }

    /// Opens `config` with the version-1 classes and checks the data is untouched.
    private func expectUntouchedVersion1(_ config: Database.Configuration, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let db = try Database(configuration: config)
        let people = db.objects(SchemaV1.Person.self)
        #expect(people.map(\.lastName) == ["Lovelace", "Turing"], sourceLocation: sourceLocation)
        #expect(people.map(\.age) == [36, 41], sourceLocation: sourceLocation)
        #expect(db.objects(SchemaV1.Pet.self).count == 1, sourceLocation: sourceLocation)
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func migrationReadsOldValuesAndWritesNewOnes(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let old = try makeVersion1(storage, in: dir)
        let seenVersion = ResultSlot<UInt64>()
        var config = version2(of: old, [SchemaV2.Person.self, SchemaV1.Pet.self])
        config.migrationBlock = { migration, oldSchemaVersion in
            seenVersion.value = oldSchemaVersion
            migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
                let first = oldObject!["firstName"] as! String
                let last = oldObject!["lastName"] as! String
                newObject!["fullName"] = "\(first) \(last)"
                // An integer for a Double property.
                newObject!["weight"] = (oldObject!["age"] as! Int) * 2
            }
        }
        let db = try Database(configuration: config)
        #expect(seenVersion.value == 1)
        let people = db.objects(SchemaV2.Person.self)
        #expect(people.map(\.fullName) == ["Ada Lovelace", "Alan Turing"])
        #expect(people.map(\.age) == [36, 41])
        #expect(people.map(\.weight) == [72, 82])
        #expect(db.objects(SchemaV1.Pet.self).first?.name == "Rex")
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func renamedPropertyKeepsItsData(storage: Storage) throws {
        let dir = TemporaryDirectory()
        var config = try version2(of: makeVersion1(storage, in: dir), [SchemaRenamed.Person.self, SchemaV1.Pet.self])
        config.migrationBlock = { migration, _ in
            migration.renameProperty(onType: "Person", from: "lastName", to: "surname")
            migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
                // The old object still reads the old name, the new one the new name.
                #expect(oldObject!["lastName"] as? String == newObject!["surname"] as? String)
            }
        }
        let db = try Database(configuration: config)
        #expect(db.objects(SchemaRenamed.Person.self).map(\.surname) == ["Lovelace", "Turing"])
        #expect(db.objects(SchemaRenamed.Person.self).map(\.firstName) == ["Ada", "Alan"])
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func thrownErrorAbortsAndLeavesTheFileAtTheOldVersion(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let old = try makeVersion1(storage, in: dir)
        var config = version2(of: old, [SchemaV2.Person.self, SchemaV1.Pet.self])
        config.migrationBlock = { migration, _ in
            try migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
                newObject!["fullName"] = "written, then rolled back"
                if oldObject!["firstName"] as? String == "Alan" {
                    throw MigrationAborted(reason: "no Alan")
                }
            }
        }
        #expect(throws: MigrationAborted(reason: "no Alan")) { _ = try Database(configuration: config) }
        // Still version 1 with the old classes: a version-1 open would fail on a version-2 file.
        try expectUntouchedVersion1(old)

        // The same migration without the failure succeeds afterwards.
        config.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Person") { _, newObject in newObject!["fullName"] = "done" }
        }
        let db = try Database(configuration: config)
        #expect(db.objects(SchemaV2.Person.self).map(\.fullName) == ["done", "done"])
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func failedCallAbortsWithItsErrorAndStopsLaterCalls(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let old = try makeVersion1(storage, in: dir)
        var config = version2(of: old, [SchemaV2.Person.self, SchemaV1.Pet.self])
        let visits = ResultSlot<Int>()
        let errorSeen = ResultSlot<Coffer.Error>()
        config.migrationBlock = { migration, _ in
            visits.value = 0
            migration.enumerateObjects(ofType: "Person") { _, newObject in
                visits.value! += 1
                newObject!["nickname"] = "x"
            }
            errorSeen.value = migration.error
            // Ignored after the failure.
            migration.create("Pet", value: ["name": "Ghost"])
        }
        expectCofferError(.notFound, containing: "Person", "nickname") { _ = try Database(configuration: config) }
        #expect(visits.value == 1)
        #expect(errorSeen.value?.code == .notFound)
        try expectUntouchedVersion1(old)
    }

    @Test func wrongValueTypeAndOldObjectWritesFail() throws {
        let dir = TemporaryDirectory()
        let old = try makeVersion1(.plain, in: dir)
        var config = version2(of: old, [SchemaV2.Person.self, SchemaV1.Pet.self])
        config.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Person") { _, newObject in newObject!["age"] = "old" }
        }
        expectCofferError(.type, containing: "Person", "age") { _ = try Database(configuration: config) }
        config.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Person") { oldObject, _ in oldObject!["age"] = 1 }
        }
        expectCofferError(.readOnly, containing: "Person.age") { _ = try Database(configuration: config) }
        config.migrationBlock = { migration, _ in
            migration.renameProperty(onType: "Person", from: "lastName", to: "age")
        }
        expectCofferError(.schema, containing: "lastName", "age") { _ = try Database(configuration: config) }
        try expectUntouchedVersion1(old)
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func createDeleteAndDeleteData(storage: Storage) throws {
        let dir = TemporaryDirectory()
        var config = try makeVersion1(storage, in: dir)
        // Pet is dropped from the schema; Dog is new.
        config.objectTypes = [SchemaWithDog.Person.self, SchemaWithDog.Dog.self]
        config.schemaVersion = 3
        let deleted = ResultSlot<[Bool]>()
        config.migrationBlock = { migration, _ in
            var petNames: [String] = []
            migration.enumerateObjects(ofType: "Pet") { oldObject, newObject in
                #expect(newObject == nil)
                petNames.append(oldObject!["name"] as! String)
            }
            deleted.value = [migration.deleteData(forType: "Pet"), migration.deleteData(forType: "Unicorn")]
            let dog = migration.create("Dog", value: ["name": petNames.first!])
            #expect(dog["name"] as? String == "Rex")
            migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
                if oldObject!["firstName"] as? String == "Alan" {
                    migration.delete(newObject!)
                } else {
                    newObject!["dog"] = dog
                    #expect((newObject!["dog"] as? MigrationObject)?["name"] as? String == "Rex")
                }
            }
            #expect(migration.error == nil)
        }
        let db = try Database(configuration: config)
        #expect(deleted.value == [true, false])
        let people = db.objects(SchemaWithDog.Person.self)
        #expect(people.count == 1)
        #expect(people.first?.dog?.name == "Rex")
        #expect(db.objects(SchemaWithDog.Dog.self).count == 1)
    }

    @Test func noBlockWithoutAVersionChangeOrForANewFile() throws {
        let dir = TemporaryDirectory()
        let calls = ResultSlot<Int>()
        calls.value = 0
        var config = configuration(.plain, [SchemaV1.Person.self], in: dir)
        config.schemaVersion = 4
        config.migrationBlock = { _, _ in calls.value! += 1 }
        _ = try Database(configuration: config)
        _ = try Database(configuration: config)
        #expect(calls.value == 0)
    }
}

extension MigrationTests {
    @MainActor @Test(arguments: [Storage.plain, .encrypted])
    func asyncOpenMigratesThenOpensOnTheCallersActor(storage: Storage) async throws {
        let dir = TemporaryDirectory()
        var config = version2(of: try makeVersion1(storage, in: dir), [SchemaV2.Person.self, SchemaV1.Pet.self])
        let migrations = ResultSlot<Int>()
        config.migrationBlock = { migration, _ in
            migrations.value = (migrations.value ?? 0) + 1
            migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
                newObject!["fullName"] = oldObject!["firstName"] as! String
            }
        }
        let db = try await Database.asyncOpen(configuration: config)
        await _Concurrency.Task.yield()
        #expect(db.objects(SchemaV2.Person.self).map(\.fullName) == ["Ada", "Alan"], "usable on the actor across await")
        #expect(migrations.value == 1, "the migration ran once, before the database was opened on the actor")
    }

    @Test func asyncOpenOfAnInMemoryDatabaseKeepsItsData() async throws {
        let config = Database.Configuration(inMemoryIdentifier: "async-open-\(UUID().uuidString)", objectTypes: [SchemaV1.Pet.self])
        let keeper = try Self.openWithRex(config)
        let names = try await Self.petNames(config)
        #expect(names == ["Rex"])
        _ = keeper
    }

    /// An in-memory database with one pet, kept open by the caller.
    private static func openWithRex(_ config: Database.Configuration) throws -> Database {
        let db = try Database(configuration: config)
        try db.write { db.add(SchemaV1.Pet(value: ["name": "Rex"])) }
        return db
    }

    @MainActor private static func petNames(_ config: Database.Configuration) async throws -> [String] {
        try await Database.asyncOpen(configuration: config).objects(SchemaV1.Pet.self).map(\.name)
    }
}
