// Tests of the everyday local API names Realm code uses: key-value access,
// invalidate, schema versions of files, performMigration, ObjectId's other
// initializers, schema introspection, AnyDatabaseCollection and AnyValue's helpers.

import Coffer
import Foundation
import Testing

@Suite struct RealmLocalAPITests {
    @Test(arguments: [Storage.plain, .inMemory])
    func valueForKeyAndSetValueForKey(storage: Storage) throws {
        let test = try TestDatabase(storage, [Dog.self]), db = test.db
        let unmanaged = Dog()
        unmanaged.setValue("Rex", forKey: "name")
        unmanaged["age"] = 3
        #expect(unmanaged.name == "Rex" && unmanaged.value(forKey: "age") as? Int == 3)
        #expect(unmanaged.value(forKey: "breed") == nil)
        try db.write { db.add(unmanaged) }
        let rex = try #require(db.objects(Dog.self).first)
        #expect(rex.value(forKey: "name") as? String == "Rex")
        #expect(rex["age"] as? Int == 3)
        try db.write {
            rex.setValue("Beagle", forKey: "breed")
            rex["age"] = 4
        }
        #expect(rex.breed == "Beagle" && rex.age == 4)
        try db.write { rex.setValue(nil, forKey: "breed") }
        #expect(rex.breed == nil)
    }

    @Test func anUnknownKeyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Dog().value(forKey: "weight")
        }
        #expect(errorOutput(result).contains("class 'Dog' has no property 'weight'"))
    }

    @Test func invalidateCancelsAWriteAndLetsGoOfTheSnapshot() throws {
        let test = try TestDatabase(.plain, [Dog.self]), db = test.db
        let other = try Database(configuration: test.configuration)
        #expect(db.objects(Dog.self).isEmpty)
        try other.write { other.add(Dog(value: ["name": "Rex"])) }
        #expect(db.objects(Dog.self).isEmpty, "the snapshot is kept")
        db.invalidate()
        #expect(db.objects(Dog.self).count == 1)
        db.beginWrite()
        db.add(Dog(value: ["name": "Fido"]))
        db.invalidate()
        #expect(!db.isInWriteTransaction)
        #expect(db.objects(Dog.self).count == 1, "the write was cancelled")
    }

    @Test func schemaVersionAtURLAndPerformMigration() throws {
        let dir = TemporaryDirectory()
        var config = configuration(.encrypted, [Dog.self], in: dir)
        expectCofferError(.notFound) { _ = try schemaVersionAtURL(config.fileURL!, encryptionKey: testKey) }
        _ = try Database(configuration: config)
        #expect(try schemaVersionAtURL(config.fileURL!, encryptionKey: testKey) == 0)
        expectCofferError(.keyRequired) { _ = try schemaVersionAtURL(config.fileURL!) }
        config.schemaVersion = 3
        config.objectTypes = [Changed.Dog.self]
        try Database.performMigration(for: config)
        #expect(try schemaVersionAtURL(config.fileURL!, encryptionKey: testKey) == 3)
    }

    @Test func objectIdFromPartsAndFromAStringLiteral() throws {
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        let first = ObjectId(timestamp: time, machineId: 0xABCDEF, processId: 0x1234)
        let second = ObjectId(timestamp: time, machineId: 0xABCDEF, processId: 0x1234)
        #expect(first.timestamp == time)
        #expect(first.stringValue.hasPrefix("6553f100abcdef1234"), "\(first)")
        #expect(first != second, "the counter differs")
        #expect(first < second || first > second)
        let literal = ObjectId("6553f100abcdef1234000001")
        #expect(literal == (try ObjectId(string: "6553f100abcdef1234000001")))
    }

    @Test func anInvalidObjectIdLiteralStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ObjectId("not hex")
        }
        #expect(errorOutput(result).contains("not hex"))
    }

    @Test func schemaIntrospection() throws {
        let test = try TestDatabase(.plain, Social.types), db = test.db
        let person = try #require(Social.Person.sharedSchema())
        #expect(person.className == "Person")
        #expect(person.primaryKeyProperty?.name == "_id")
        #expect(person["dogs"]?.isArray == true && person["dogs"]?.type == .object && person["dogs"]?.objectClassName == "Dog")
        #expect(person["birthdate"]?.type == .date && person["birthdate"]?.isOptional == true)
        #expect(person["address"]?.objectClassName == "Address")
        let dog = Social.Dog().objectSchema
        #expect(dog["owners"]?.type == .linkingObjects && dog["owners"]?.linkOriginPropertyName == "dogs")
        #expect(Social.Address.sharedSchema()?.isEmbedded == true)
        #expect(db.schema.objectSchema.map(\.className) == ["Person", "Dog", "Address", "Walker"])
        #expect(db.schema["Dog"]?.objectClass == Social.Dog.self)
        #expect(db.schema["Nope"] == nil)
        let mapped = try #require(Person.sharedSchema()?["firstName"])
        #expect(mapped.columnName == "first_name")
    }

    @Test func anyDatabaseCollectionWrapsResultsListsAndLinkingObjects() throws {
        let test = try TestDatabase(.plain, Social.types), db = test.db
        let ada = try db.write {
            db.create(Social.Person.self, value: ["name": "Ada", "dogs": [["name": "Rex"], ["name": "Fido"]]])
        }
        func names(_ dogs: AnyDatabaseCollection<Social.Dog>) -> [String] { dogs.map(\.name) }
        #expect(names(AnyDatabaseCollection(db.objects(Social.Dog.self))) == ["Rex", "Fido"])
        #expect(names(AnyDatabaseCollection(ada.dogs)) == ["Rex", "Fido"])
        let owners = AnyDatabaseCollection(ada.dogs[0].owners)
        #expect(owners.count == 1 && owners.first?.name == "Ada" && owners.database === db)
        #expect(AnyDatabaseCollection(Social.Person().dogs).database == nil)
        func total<C: DatabaseCollection>(_ values: C) -> Int where C.Element: DatabaseCollectionValue { values.count }
        #expect(total(ada.dogs) == 2)
    }

    @Test func anyValueHelpers() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let bag = try db.write {
            db.create(Bag.self, value: ["anything": AnyValue.fromDictionary(["key": .string("x"), "list": .fromArray([.int(1), .bool(true)])])])
        }
        let dictionary = try #require(bag.anything.dictionaryValue)
        #expect(dictionary["key"]?.stringValue == "x")
        #expect(dictionary["list"]?.listValue.map(Array.init) == [.int(1), .bool(true)])
        #expect(dictionary["list"]?.listValue?[0].intValue == 1)
        #expect(bag.anything.listValue == nil && bag.anything.intValue == nil)
        let rex = try db.write { db.create(Social.Dog.self, value: ["name": "Rex"]) }
        try db.write { bag.anything = .object(rex) }
        #expect(bag.anything.object(Social.Dog.self)?.name == "Rex")
        #expect(bag.anything.object(Social.Person.self) == nil)
        #expect(bag.anything.dynamicObject?.isSameObject(as: rex) == true)
        #expect(AnyValue.double(2.5).doubleValue == 2.5 && AnyValue.float(1).floatValue == 1)
        #expect(AnyValue.decimal128(3).decimal128Value == 3 && AnyValue.objectId(ObjectId()).objectIdValue == ObjectId())
        #expect(AnyValue.data(Data([1])).dataValue == Data([1]) && AnyValue.date(Date(timeIntervalSince1970: 0)).dateValue != nil)
        #expect(AnyValue.uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!).uuidValue != nil)
        #expect(AnyValue.bool(false).boolValue == false && AnyValue.none.boolValue == nil)
    }
}

/// A model written before `@Persisted`: constants of `DatabaseProperty`.
final class Kitten: Object {
    @Persisted var name = ""
    let age = DatabaseProperty<Int?>()
    let lives = DatabaseProperty<Int>()
}

@Suite struct DatabasePropertyTests {
    @Test(arguments: Storage.allCases)
    func databasePropertiesAreStoredAndLive(storage: Storage) throws {
        let test = try TestDatabase(storage, [Kitten.self]), db = test.db
        #expect(Kitten.sharedSchema()?["age"]?.isOptional == true)
        #expect(Kitten.sharedSchema()?["lives"]?.type == .int)
        let tom = Kitten(value: ["name": "Tom", "lives": 9])
        #expect(tom.age.value == nil && tom.lives.value == 9)
        tom.age.value = 2
        try db.write { db.add(tom) }
        let stored = try #require(db.objects(Kitten.self).first)
        #expect(stored.age.value == 2 && stored.lives.value == 9)
        try db.write { stored.age.value = 3 }
        #expect(tom.age.value == 3, "both read the stored object")
        #expect(db.objects(Kitten.self).filter("age == %d AND lives > 8", 3).count == 1)
        try db.write { stored.age.value = nil }
        #expect(db.objects(Kitten.self).filter("age == nil").count == 1)
        #expect(stored.value(forKey: "lives") as? Int == 9)
    }

    @Test func writingOutsideAWriteTransactionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "kitten", objectTypes: [Kitten.self]))
            let tom = try db.write { db.create(Kitten.self, value: ["name": "Tom"]) }
            tom.age.value = 1
        }
        #expect(errorOutput(result).contains("cannot modify Kitten.age outside a write transaction"))
    }
}
