// "Define a Realm Object Model - Swift SDK", with Coffer's renames (Realm →
// Database, RealmCollection → DatabaseCollection):
// https://www.mongodb.com/docs/atlas/device-sdks/sdk/swift/model-data/define-model/object-models/
// A model with a primary key, optional and required properties, an index,
// ignored properties, enums, mapped property names, and generic code over
// collections. The page's class names are shared by other test targets of
// this package, so its models live in an enum; their stored names are the
// page's (`Dog`, `Person`, ...).

import Coffer
import Foundation
import Testing

enum ObjectModelPage {
    // A dog has an _id primary key, a string name, an optional
    // string breed, and a date of birth.
    class Dog: Object {
        @Persisted(primaryKey: true) var _id: ObjectId
        @Persisted var name = ""
        @Persisted var breed: String?
        @Persisted var dateOfBirth = Date()
    }

    class Person: Object {
        // Required string property
        @Persisted var name = ""

        // Optional string property
        @Persisted var address: String?

        // Required numeric property
        @Persisted var ageYears = 0

        // Optional numeric property
        @Persisted var heightCm: Float?
    }

    class Project: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
    }

    class Book: Object {
        @Persisted var priceCents = 0
        @Persisted(indexed: true) var title = ""
    }

    class Member: Object {
        // If some properties are marked as @Persisted, any properties
        // that do not have the @Persisted annotation are automatically ignored.
        var tmpId = 0

        // The @Persisted properties are managed
        @Persisted var firstName = ""
        @Persisted var lastName = ""

        // Read-only properties are automatically ignored
        var name: String {
            return "\(firstName) \(lastName)"
        }
    }

    // Define the enum
    enum TaskStatusEnum: String, PersistableEnum {
        case notStarted
        case inProgress
        case complete
    }

    // To use the enum:
    class Task: Object {
        @Persisted var name: String = ""
        @Persisted var owner: String?

        // Required enum property
        @Persisted var status = TaskStatusEnum.notStarted

        // Optional enum property
        @Persisted var optionalTaskStatusEnumProperty: TaskStatusEnum?
    }

    class Contact: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""

        override class public func propertiesMapping() -> [String: String] {
            ["firstName": "first_name",
             "lastName": "last_name"]
        }
    }

    static let types: [Object.Type] = [Dog.self, Person.self, Project.self, Book.self, Member.self, Task.self, Contact.self]

    // Collection could be either Results or List
    static func operateOn<C: DatabaseCollection>(collection: C) -> String {
        "operating on collection containing \(collection.count) objects"
    }

    class ViewController {
        let collection: AnyDatabaseCollection<Dog>

        init<C: DatabaseCollection>(collection: C) where C.ElementType == Dog {
            self.collection = AnyDatabaseCollection(collection)
        }
    }

    class Kennel: Object {
        @Persisted var dogs: List<Dog>
    }
}

@Suite struct ObjectModelExamples {
    @Test func theModelsAreStoredAsThePageDescribes() throws {
        let realm = try Database(configuration: Database.Configuration(
            inMemoryIdentifier: "object-models", objectTypes: ObjectModelPage.types))
        let schema = realm.schema
        #expect(schema["Dog"]?.primaryKeyProperty?.name == "_id")
        #expect(schema["Dog"]?["breed"]?.isOptional == true && schema["Dog"]?["name"]?.isOptional == false)
        #expect(schema["Person"]?["heightCm"]?.isOptional == true && schema["Person"]?["ageYears"]?.isOptional == false)
        #expect(schema["Project"]?.primaryKeyProperty?.name == "id")
        #expect(schema["Book"]?["title"]?.isIndexed == true && schema["Book"]?["priceCents"]?.isIndexed == false)
        #expect(schema["Member"]?.properties.map(\.name) == ["firstName", "lastName"])
        #expect(schema["Contact"]?["firstName"]?.columnName == "first_name")

        let todo = try realm.write {
            realm.create(ObjectModelPage.Task.self, value: ["name": "Write docs", "status": ObjectModelPage.TaskStatusEnum.inProgress])
        }
        #expect(todo.status == .inProgress && todo.optionalTaskStatusEnumProperty == nil)
        #expect(realm.objects(ObjectModelPage.Task.self).filter("status == %@", "inProgress").count == 1)

        let member = ObjectModelPage.Member(value: ["firstName": "Ada", "lastName": "Lovelace"])
        member.tmpId = 7
        try realm.write { realm.add(member) }
        #expect(member.name == "Ada Lovelace")

        let project = try realm.write { realm.create(ObjectModelPage.Project.self, value: ["id": 1, "name": "Docs"]) }
        #expect(realm.object(ofType: ObjectModelPage.Project.self, forPrimaryKey: 1)?.isSameObject(as: project) == true)
    }

    @Test func aSecondObjectWithTheSamePrimaryKeyIsRefused() throws {
        let realm = try Database(configuration: Database.Configuration(
            inMemoryIdentifier: "object-models-keys", objectTypes: ObjectModelPage.types))
        try realm.write { realm.create(ObjectModelPage.Project.self, value: ["id": 1, "name": "Docs"]) }
        #expect(throws: CofferError.self) {
            try realm.write { try realm.tryAdd(ObjectModelPage.Project(value: ["id": 1, "name": "Again"])) }
        }
        #expect(realm.objects(ObjectModelPage.Project.self).map(\.name) == ["Docs"])
    }

    @Test func genericCodeTakesResultsAndLists() throws {
        let realm = try Database(configuration: Database.Configuration(
            inMemoryIdentifier: "object-models-collections", objectTypes: ObjectModelPage.types + [ObjectModelPage.Kennel.self]))
        let kennel = try realm.write {
            realm.create(ObjectModelPage.Kennel.self, value: ["dogs": [["name": "Rex"], ["name": "Fido"]]])
        }
        let dogs = realm.objects(ObjectModelPage.Dog.self)
        #expect(ObjectModelPage.operateOn(collection: dogs) == "operating on collection containing 2 objects")
        #expect(ObjectModelPage.operateOn(collection: kennel.dogs.filter("name == 'Rex'")) == "operating on collection containing 1 objects")
        let controllers = [ObjectModelPage.ViewController(collection: dogs), ObjectModelPage.ViewController(collection: kennel.dogs)]
        #expect(controllers.map { $0.collection.map(\.name) } == [["Rex", "Fido"], ["Rex", "Fido"]])
    }
}
