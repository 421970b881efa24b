// The public schema of classes and databases, as Realm's introspection shows
// it: ObjectSchema, Property and PropertyType, Schema, Object.objectSchema,
// Object.sharedSchema() and Database.schema.

/// The type of a property's values (of its elements, for a collection), as
/// Realm's `PropertyType`.
public enum PropertyType: Sendable, Equatable {
    case int, bool, float, double, string, data, date, objectId, decimal128, UUID
    /// ``AnyValue``.
    case any
    /// A link to an object, or a collection of them.
    case object
    /// ``LinkingObjects``.
    case linkingObjects

    init(_ kind: ValueKind) {
        switch kind {
        case .int: self = .int
        case .bool: self = .bool
        case .float: self = .float
        case .double: self = .double
        case .string: self = .string
        case .data: self = .data
        case .date: self = .date
        case .objectId: self = .objectId
        case .decimal128: self = .decimal128
        case .uuid: self = .UUID
        case .mixed: self = .any
        case .link: self = .object
        case .linkingObjects: self = .linkingObjects
        }
    }
}

/// One property of a class, as Realm's `Property`.
public struct Property: Sendable, Equatable, CustomStringConvertible {
    /// The Swift name code uses.
    public let name: String
    /// The name stored in the file (``Object/propertiesMapping()``), or `name`.
    public let columnName: String
    /// The type of its values, or of its elements.
    public let type: PropertyType
    public let isOptional: Bool
    public let isIndexed: Bool
    /// True for the primary key.
    public let isPrimary: Bool
    public let isArray: Bool
    public let isSet: Bool
    public let isMap: Bool
    /// The class linked to, or the class of linking objects.
    public let objectClassName: String?
    /// The property of ``objectClassName`` that linking objects follow back.
    public let linkOriginPropertyName: String?

    init(_ property: PropertySchema) {
        name = property.name
        columnName = property.persistedName
        type = PropertyType(property.kind)
        isOptional = property.isOptional
        isIndexed = property.isIndexed
        isPrimary = property.isPrimaryKey
        isArray = property.collection == .list
        isSet = property.collection == .set
        isMap = property.collection == .map
        objectClassName = property.objectType?.className()
        linkOriginPropertyName = property.originProperty
    }

    /// `name: int?, indexed`: the property as a line of a schema listing.
    public var description: String {
        var text = "\(name): \(type)\(isOptional ? "?" : "")"
        if isArray { text = "\(name): list<\(type)\(isOptional ? "?" : "")>" }
        if isSet { text = "\(name): set<\(type)\(isOptional ? "?" : "")>" }
        if isMap { text = "\(name): map<\(type)\(isOptional ? "?" : "")>" }
        if let objectClassName { text += " \(objectClassName)" }
        if isPrimary { text += ", primary key" } else if isIndexed { text += ", indexed" }
        return text
    }
}

/// The schema of one class, as Realm's `ObjectSchema`.
public struct ObjectSchema: Sendable, CustomStringConvertible {
    /// The class's name in the database.
    public let className: String
    /// Its properties, superclass properties first, in declaration order.
    public let properties: [Property]
    /// True for a subclass of ``EmbeddedObject``.
    public let isEmbedded: Bool
    /// The Swift class.
    public let objectClass: Object.Type

    init(_ schema: ModelSchema) {
        className = schema.className
        properties = schema.properties.map(Property.init)
        isEmbedded = schema.isEmbedded
        objectClass = schema.objectType
    }

    /// The primary key property, if the class has one.
    public var primaryKeyProperty: Property? {
        properties.first(where: \.isPrimary)
    }

    /// The property named `propertyName` (its Swift name), or nil.
    public subscript(propertyName: String) -> Property? {
        properties.first { $0.name == propertyName }
    }

    /// The class name and one line per property.
    public var description: String {
        "\(className) {\n" + properties.map { "    \($0)\n" }.joined() + "}"
    }
}

/// The classes of a database, as Realm's `Schema`.
public struct Schema: Sendable {
    /// One per class, in the order of ``Database/Configuration/objectTypes``
    /// (or by name for classes found on their own).
    public let objectSchema: [ObjectSchema]

    /// The class named `className`, or nil.
    public subscript(className: String) -> ObjectSchema? {
        objectSchema.first { $0.className == className }
    }
}

extension Object {
    /// The schema of this object's class. An invalid model class stops the
    /// program naming the fault.
    public var objectSchema: ObjectSchema {
        ObjectSchema(ModelSchema.forObject(self))
    }

    /// The schema of this class, or nil if it is not a valid model.
    public class func sharedSchema() -> ObjectSchema? {
        (try? ModelSchema.of(self)).map(ObjectSchema.init)
    }
}

extension Database {
    /// The classes of this database that have a Swift class in this program:
    /// those of ``Configuration/objectTypes`` (or found on their own).
    public var schema: Schema {
        requireThread()
        let listed = configuration.objectTypes ?? []
        let types = listed.isEmpty ? ProgramClasses.all : listed
        var seen = Set<String>()
        var schemas: [ObjectSchema] = []
        for type in types {
            guard let model = try? ModelSchema.of(type), seen.insert(model.className).inserted,
                  !listed.isEmpty || !ProgramSchema.isAmbiguous(model.className) else { continue }
            var classId: UInt32 = 0
            guard classExists(model.className, &classId) else { continue }
            schemas.append(ObjectSchema(model))
        }
        return Schema(objectSchema: listed.isEmpty ? schemas.sorted { $0.className < $1.className } : schemas)
    }
}
