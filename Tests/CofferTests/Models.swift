// The shared test models from Realm's documented examples: Dog, Book, Task and
// Person.

import Coffer
import Foundation

// Realm's documented examples, written against Coffer.

/// Not final: `Changed.Dog` adds a property to it, to change a file's schema.
class Dog: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var color = ""
    @Persisted var currentCity = ""
    @Persisted var breed: String?
    /// Not stored: no @Persisted.
    var temporaryNickname = ""
}

final class Book: Object {
    @Persisted(indexed: true) var title = ""
    @Persisted var price = 9.99
}

enum TaskStatusEnum: String, PersistableEnum {
    case notStarted
    case inProgress
    case complete
}

final class Task: Object {
    @Persisted var name = ""
    @Persisted var owner: String?
    @Persisted var status = ""
    @Persisted var statusEnum = TaskStatusEnum.notStarted
}

final class Person: Object {
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var age = 0

    override class func propertiesMapping() -> [String: String] {
        ["firstName": "first_name", "lastName": "last_name"]
    }
}

// Every scalar type, required and optional.

enum Priority: Int, PersistableEnum {
    case low = 1, medium = 5, high = 10
}

final class AllTypes: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double = 0.0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var objectId = ObjectId()
    @Persisted var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Persisted var decimal = Decimal128()
    @Persisted var priority = Priority.low

    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optInt8: Int8?
    @Persisted var optInt16: Int16?
    @Persisted var optInt32: Int32?
    @Persisted var optInt64: Int64?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optDate: Date?
    @Persisted var optObjectId: ObjectId?
    @Persisted var optUUID: UUID?
    @Persisted var optDecimal: Decimal128?
    @Persisted var optPriority: Priority?
}

/// Primary keys of the other key types.
final class StringKeyed: Object {
    @Persisted(primaryKey: true) var key = ""
    @Persisted var value = 0
}

final class UUIDKeyed: Object {
    @Persisted(primaryKey: true) var key: UUID
    @Persisted var value = ""
}

final class OptionalIntKeyed: Object {
    @Persisted(primaryKey: true) var key: Int?
    @Persisted var value = ""
}

/// No primary key.
final class Note: Object {
    @Persisted var text = ""
    @Persisted(indexed: true) var tag: String?
}
