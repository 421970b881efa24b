// Tests of schema discovery and what reaches the file: indexes, primary keys,
// mappings and invalid models.

import CCoffer
import Coffer
import Foundation
import Testing

final class TwoPrimaryKeys: Object {
    @Persisted(primaryKey: true) var a = 0
    @Persisted(primaryKey: true) var b = 0
}

final class BadMapping: Object {
    @Persisted var name = ""
    override class func propertiesMapping() -> [String: String] { ["nmae": "full_name"] }
}

final class LongPropertyName: Object {
    @Persisted var aPropertyNameThatIsFarTooLongForTheStorageEngineToAcceptAsItIsSeventyCharacters = 0
}

final class RequiredOwner: Object {
    @Persisted var owner: Derived
}

final class RequiredSelfLink: Object {
    @Persisted var next: RequiredSelfLink
}

final class Derived: Object {
    @Persisted var base = ""
}

/// Runs `body` on the stored schema of `className` in the file at `url`, read through the C API.
func withStoredSchema<Result>(_ className: String, in url: URL,
                              _ body: (coffer_class_schema) throws -> Result) throws -> Result {
    var config: OpaquePointer?
    #expect(coffer_config_new(&config) == COFFER_OK)
    defer { coffer_config_free(config) }
    #expect(coffer_config_set_path(config, url.path) == COFFER_OK)
    var db: OpaquePointer?
    let status = coffer_open(config, &db)
    try #require(status == COFFER_OK, "\(String(cString: coffer_last_error()))")
    defer { coffer_close(db) }
    var cls: coffer_class_id = 0
    try #require(coffer_db_find_class(db, className, &cls) == COFFER_OK)
    let schema = try #require(coffer_db_class_schema(db, cls))
    return try body(schema.pointee)
}

/// Reads the stored property names of `className` through the C API.
func storedPropertyNames(_ className: String, in url: URL) throws -> [String] {
    try withStoredSchema(className, in: url) { schema in
        (0..<schema.property_count).map { String(cString: schema.properties[$0].name) }
    }
}

/// The flags (`COFFER_PROPERTY_*`) of each stored property of `className` in the file at `url`.
func storedPropertyFlags(_ className: String, in url: URL) throws -> [String: UInt32] {
    try withStoredSchema(className, in: url) { schema in
        var flags: [String: UInt32] = [:]
        for index in 0..<schema.property_count {
            let property = schema.properties[index]
            flags[String(cString: property.name)] = property.flags
        }
        return flags
    }
}

@Suite struct SchemaTests {
    @Test func indexesAndPrimaryKeysReachTheFile() throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, [Book.self] + Kennel.types, in: dir)
        do { _ = try Database(configuration: config) }
        let indexed = UInt32(COFFER_PROPERTY_INDEXED), primaryKey = UInt32(COFFER_PROPERTY_PRIMARY_KEY)
        let optional = UInt32(COFFER_PROPERTY_OPTIONAL)
        let book = try storedPropertyFlags("Book", in: dir.file("test.coffer"))
        #expect(book["title"] == indexed)
        #expect(book["price"] == 0)
        let dog = try storedPropertyFlags("Dog", in: dir.file("test.coffer"))
        #expect(dog["id"].map { $0 & primaryKey != 0 } == true)
        #expect(dog["name"] == indexed)
        #expect(dog["breed"] == optional)
        #expect(dog["owner"] == optional)
    }

    @Test func propertiesWithoutPersistedAreIgnored() throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, [Dog.self], in: dir)
        do {
            let db = try Database(configuration: config)
            let rex = Dog(value: ["name": "Rex"])
            rex.temporaryNickname = "Rexy"
            try db.write { db.add(rex) }
            #expect(rex.temporaryNickname == "Rexy", "plain Swift storage, untouched by add")
            #expect(db.objects(Dog.self)[0].temporaryNickname == "")
        }
        #expect(try storedPropertyNames("Dog", in: dir.file("test.coffer")) == ["_id", "name", "age", "color", "currentCity", "breed"])
    }

    @Test func propertiesMappingRenamesStoredProperties() throws {
        let dir = TemporaryDirectory()
        do {
            let db = try Database(configuration: configuration(.plain, [Person.self], in: dir))
            try db.write { db.add(Person(value: ["firstName": "Ada", "lastName": "Lovelace", "age": 36])) }
            let ada = try #require(db.objects(Person.self).first)
            #expect(ada.firstName == "Ada")
            #expect(ada.lastName == "Lovelace")
        }
        #expect(try storedPropertyNames("Person", in: dir.file("test.coffer")) == ["first_name", "last_name", "age"])
    }

    @Test func invalidModelsAreRejectedAtOpenNamingTheFault() {
        let dir = TemporaryDirectory()
        expectCofferError(.schema, containing: "TwoPrimaryKeys") {
            _ = try Database(configuration: configuration(.plain, [TwoPrimaryKeys.self], in: dir))
        }
        expectCofferError(.schema, containing: "BadMapping", "nmae") {
            _ = try Database(configuration: configuration(.plain, [BadMapping.self], in: dir))
        }
        expectCofferError(.schema, containing: "aPropertyNameThatIsFarTooLong") {
            _ = try Database(configuration: configuration(.plain, [LongPropertyName.self], in: dir))
        }
        expectCofferError(.schema, containing: "RequiredOwner", "'owner' must be optional", "Derived?") {
            _ = try Database(configuration: configuration(.plain, [RequiredOwner.self, Derived.self], in: dir))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("test.coffer").path))
    }

    @Test func classesOutsideObjectTypesAreNotVisible() throws {
        let dir = TemporaryDirectory()
        do {
            let db = try Database(configuration: configuration(.plain, [Dog.self, Book.self], in: dir))
            try db.write { db.add(Book(value: ["title": "Dune"])) }
        }
        // Opening with a subset keeps the other classes in the file untouched.
        let dogsOnly = try Database(configuration: configuration(.plain, [Dog.self], in: dir))
        expectCofferError(.notFound, containing: "Book", "objectTypes") {
            try dogsOnly.write { try dogsOnly.tryAdd(Book()) }
        }
        #expect(try Database(configuration: configuration(.plain, [Book.self], in: dir)).objects(Book.self).count == 1)
    }

    @Test func objectsOfAnUnknownClassStopsWithAClearMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "unknown-class", objectTypes: [Dog.self]))
            _ = db.objects(Book.self).count
        }
        let message = errorOutput(result)
        #expect(message.contains("class 'Book' is not in this database"))
    }

    @Test func aRequiredLinkToItsOwnClassStopsWithAClearMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RequiredSelfLink()
        }
        #expect(errorOutput(result).contains("a link to RequiredSelfLink must be optional (RequiredSelfLink?)"))
    }
}
