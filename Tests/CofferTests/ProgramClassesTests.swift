// Tests of opening without objectTypes: the program's own Object subclasses
// are found from the Swift type metadata and added to the file, as in Realm;
// a class that cannot be added stops with a message saying how to list it.

import Coffer
import Foundation
import Testing

/// Models no other test declares, so that their names are the program's only ones.
final class Shelter: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var gate: ShelterGate?
    @Persisted var residents: List<ShelterResident>
}

final class ShelterGate: EmbeddedObject {
    @Persisted var code = ""
}

final class ShelterResident: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "residents") var kennels: LinkingObjects<Shelter>
}

@Suite struct ProgramClassesTests {
    @Test(arguments: [Storage.plain, .encrypted])
    func classesOfTheProgramAreFoundWithoutObjectTypes(storage: Storage) throws {
        let dir = TemporaryDirectory()
        var config = configuration(storage, [], in: dir)
        config.objectTypes = nil
        do {
            let db = try Database(configuration: config)
            try db.write {
                let kennel = db.create(Shelter.self, value: ["name": "North", "gate": ["code": "1234"]])
                kennel.residents.append(ShelterResident(value: ["name": "Rex"]))
                db.add(Note(value: ["text": "fed"]))
            }
            #expect(db.objects(Shelter.self).first?.gate?.code == "1234")
            #expect(db.objects(ShelterResident.self).first?.kennels.first?.name == "North")
            #expect(db.objects(Note.self).filter("text == %@", "fed").count == 1)
        }
        // Opened again, the objects are there. (Listing only these classes
        // would be refused: the file now holds every model class of the test
        // program, some with mixed properties that can link into them.)
        let db = try Database(configuration: config)
        #expect(db.objects(Shelter.self).count == 1)
        #expect(db.objects(ShelterResident.self).map(\.name) == ["Rex"])
    }

    @Test func aFilesOwnClassesKeepTheirStoredShape() throws {
        let dir = TemporaryDirectory()
        var config = configuration(.plain, [Note.self], in: dir)
        do {
            let db = try Database(configuration: config)
            try db.write { db.add(Note(value: ["text": "kept"])) }
        }
        config.objectTypes = nil
        let db = try Database(configuration: config)
        #expect(db.configuration.schemaVersion == 0)
        #expect(db.objects(Note.self).map(\.text) == ["kept"])
        try db.write { db.add(Shelter(value: ["name": "added"])) }
        #expect(db.objects(Shelter.self).count == 1)
    }

    @Test func aReadOnlyFileIsOpenedWithItsOwnClasses() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dir = TemporaryDirectory()
            var config = Database.Configuration(fileURL: dir.file("read-only.coffer"), objectTypes: [Note.self])
            _ = try Database(configuration: config)
            config.objectTypes = nil
            config.readOnly = true
            let db = try Database(configuration: config)
            #expect(db.objects(Note.self).isEmpty)
            _ = db.objects(Shelter.self).count
        }
        let output = errorOutput(result)
        #expect(output.contains("class 'Shelter' is not in this database"), "\(output)")
        #expect(output.contains("list Shelter.self in Database.Configuration.objectTypes"), "\(output)")
    }

    /// Several classes of the test program are named `Dog` (one per test
    /// model namespace): none can be added on its own, and the message says
    /// how to list the one meant.
    @Test func aClassWhoseNameIsSharedStopsSayingHowToListIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "shared-name"))
            _ = db.objects(Dog.self).count
        }
        let output = errorOutput(result)
        #expect(output.contains("several classes of this program are named 'Dog'"), "\(output)")
        #expect(output.contains("list Dog.self in Database.Configuration.objectTypes"), "\(output)")
    }
}

/// Changes the process-wide default configuration: in the serialized suite
/// that owns it, so that no other test sees it changed.
extension DefaultConfigurationTests {
    @Test func theDefaultConfigurationFindsTheClasses() throws {
        let dir = TemporaryDirectory()
        let saved = Database.Configuration.defaultConfiguration
        defer { Database.Configuration.defaultConfiguration = saved }
        Database.Configuration.defaultConfiguration = Database.Configuration(fileURL: dir.file("default.coffer"))
        let db = try Database()
        try db.write { db.add(StringKeyed(value: ["key": "a", "value": 1])) }
        #expect(db.object(ofType: StringKeyed.self, forPrimaryKey: "a")?.value == 1)
    }
}
