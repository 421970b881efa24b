// The schema of an open file as plain Swift values (read from the C core's
// class schemas), its JSON form (used by `schema --json` and by the header
// line of an export), and the C arrays that create it again on import.

import CCoffer
import Foundation

/// One property of a stored class.
struct PropertyInfo {
    var name: String
    var type: coffer_type
    var flags: UInt32 = 0
    var collection: UInt32 = UInt32(COFFER_COLLECTION_NONE)
    var objectClass: String?
    var linkOriginProperty: String?

    var isOptional: Bool { flags & UInt32(COFFER_PROPERTY_OPTIONAL) != 0 }
    var isPrimaryKey: Bool { flags & UInt32(COFFER_PROPERTY_PRIMARY_KEY) != 0 }
    var isIndexed: Bool { flags & UInt32(COFFER_PROPERTY_INDEXED) != 0 }
    var isBacklinks: Bool { type == COFFER_TYPE_LINKING_OBJECTS }
    var typeName: String { String(cString: coffer_type_name(type)) }

    /// "list", "set", "map" or nil.
    var collectionName: String? { PropertyInfo.collectionNames[Int(collection)] }
    static let collectionNames: [Int: String] = [
        Int(COFFER_COLLECTION_LIST): "list", Int(COFFER_COLLECTION_SET): "set", Int(COFFER_COLLECTION_MAP): "map",
    ]

    /// The type as a reader writes it: "string?", "list<int>", "map<Dog?>",
    /// "linkingObjects<Dog.owner>".
    var displayType: String {
        if isBacklinks { return "linkingObjects<\(objectClass ?? "?").\(linkOriginProperty ?? "?")>" }
        var element = type == COFFER_TYPE_LINK ? (objectClass ?? "?") : typeName
        if isOptional { element += "?" }
        if let collectionName { return "\(collectionName)<\(element)>" }
        return element
    }
}

/// One stored class, with its id in the open handle.
struct ClassInfo {
    var id: coffer_class_id
    var name: String
    var isEmbedded: Bool
    var properties: [PropertyInfo]

    var primaryKey: Int? { properties.firstIndex { $0.isPrimaryKey } }

    func property(named name: String) -> Int? { properties.firstIndex { $0.name == name } }
}

/// Every class of a file and its schema version.
struct SchemaInfo {
    var version: UInt64
    var classes: [ClassInfo]

    func named(_ name: String) -> ClassInfo? { classes.first { $0.name == name } }

    /// The class called `name`, or a ``CLIError`` naming it and the file.
    func require(_ name: String, in file: String) throws -> ClassInfo {
        guard let found = named(name) else {
            let known = classes.map(\.name).joined(separator: ", ")
            throw CLIError("no class '\(name)' in \(file) (classes: \(known.isEmpty ? "none" : known))")
        }
        return found
    }

    /// Reads the schema an open handle sees.
    init(db: OpaquePointer) {
        version = coffer_db_schema_version(db)
        classes = (0..<coffer_db_class_count(db)).compactMap { i -> ClassInfo? in
            guard let c = coffer_db_class_schema(db, coffer_class_id(i))?.pointee else { return nil }
            let properties = (0..<c.property_count).map { j -> PropertyInfo in
                let p = c.properties[j]
                return PropertyInfo(
                    name: String(cString: p.name), type: p.type, flags: p.flags, collection: p.collection,
                    objectClass: p.object_class.map { String(cString: $0) },
                    linkOriginProperty: p.link_origin_property.map { String(cString: $0) })
            }
            return ClassInfo(id: coffer_class_id(i), name: String(cString: c.name),
                             isEmbedded: c.flags & UInt32(COFFER_CLASS_EMBEDDED) != 0, properties: properties)
        }
    }

    init(version: UInt64, classes: [ClassInfo]) {
        self.version = version
        self.classes = classes
    }
}

// MARK: - JSON form

extension SchemaInfo {
    var json: JSON {
        .object([("schemaVersion", .number(String(version))), ("classes", .array(classes.map(\.json)))])
    }

    /// Reads the JSON form back, checking what the C core cannot: names and
    /// types are known.
    init(json: JSON) throws {
        guard case .number(let v)? = json["schemaVersion"], let version = UInt64(v) else {
            throw CLIError("the schema has no schemaVersion")
        }
        guard case .array(let items)? = json["classes"] else { throw CLIError("the schema has no classes") }
        self.init(version: version, classes: try items.enumerated().map { try ClassInfo(json: $1, id: coffer_class_id($0)) })
    }
}

extension ClassInfo {
    var json: JSON {
        .object([("name", .string(name)), ("embedded", .bool(isEmbedded)), ("properties", .array(properties.map(\.json)))])
    }

    init(json: JSON, id: coffer_class_id) throws {
        guard case .string(let name)? = json["name"] else { throw CLIError("a class of the schema has no name") }
        guard case .array(let items)? = json["properties"] else { throw CLIError("class \(name) has no properties") }
        var embedded = false
        if case .bool(let e)? = json["embedded"] { embedded = e }
        self.init(id: id, name: name, isEmbedded: embedded,
                  properties: try items.map { try PropertyInfo(json: $0, className: name) })
    }
}

extension PropertyInfo {
    var json: JSON {
        var members: [(key: String, value: JSON)] = [("name", .string(name)), ("type", .string(typeName))]
        if let collectionName { members.append(("collection", .string(collectionName))) }
        if isOptional { members.append(("optional", .bool(true))) }
        if isPrimaryKey { members.append(("primaryKey", .bool(true))) }
        if isIndexed { members.append(("indexed", .bool(true))) }
        if let objectClass { members.append(("objectClass", .string(objectClass))) }
        if let linkOriginProperty { members.append(("linkOriginProperty", .string(linkOriginProperty))) }
        return .object(members)
    }

    init(json: JSON, className: String) throws {
        guard case .string(let name)? = json["name"] else { throw CLIError("a property of class \(className) has no name") }
        guard case .string(let typeName)? = json["type"], let type = PropertyInfo.type(named: typeName) else {
            throw CLIError("property \(className).\(name) has no known type")
        }
        self.init(name: name, type: type)
        func flag(_ key: String, _ bit: Int) {
            if case .bool(true)? = json[key] { flags |= UInt32(bit) }
        }
        flag("optional", Int(COFFER_PROPERTY_OPTIONAL))
        flag("primaryKey", Int(COFFER_PROPERTY_PRIMARY_KEY))
        flag("indexed", Int(COFFER_PROPERTY_INDEXED))
        if case .string(let kind)? = json["collection"] {
            guard let found = PropertyInfo.collectionNames.first(where: { $0.value == kind }) else {
                throw CLIError("property \(className).\(name) has an unknown collection '\(kind)'")
            }
            collection = UInt32(found.key)
        }
        if case .string(let c)? = json["objectClass"] { objectClass = c }
        if case .string(let o)? = json["linkOriginProperty"] { linkOriginProperty = o }
    }

    /// The type whose schema name is `name` ("int", "objectId", ...).
    static func type(named name: String) -> coffer_type? {
        (0...COFFER_TYPE_LINKING_OBJECTS.rawValue).map { coffer_type(rawValue: $0) }
            .first { String(cString: coffer_type_name($0)) == name }
    }
}

// MARK: - C arrays

extension SchemaInfo {
    /// Calls `body` with the schema as the C core's static arrays, which live
    /// for the duration of the call.
    func withCSchema<R>(_ body: (UnsafePointer<coffer_class_schema>, Int) throws -> R) rethrows -> R {
        var strings: [UnsafeMutablePointer<CChar>] = []
        var propertyArrays: [UnsafeMutablePointer<coffer_property_schema>] = []
        defer {
            strings.forEach { free($0) }
            propertyArrays.forEach { $0.deallocate() }
        }
        func c(_ s: String?) -> UnsafePointer<CChar>? {
            guard let s, let copy = strdup(s) else { return nil }
            strings.append(copy)
            return UnsafePointer(copy)
        }
        var cClasses = [coffer_class_schema]()
        for cls in classes {
            let props = UnsafeMutablePointer<coffer_property_schema>.allocate(capacity: max(cls.properties.count, 1))
            propertyArrays.append(props)
            for (i, p) in cls.properties.enumerated() {
                var cp = coffer_property_schema()
                cp.name = c(p.name)
                cp.type = p.type
                cp.flags = p.flags
                cp.collection = p.collection
                cp.object_class = c(p.objectClass)
                cp.link_origin_property = c(p.linkOriginProperty)
                (props + i).initialize(to: cp)
            }
            var cc = coffer_class_schema()
            cc.name = c(cls.name)
            cc.properties = UnsafePointer(props)
            cc.property_count = cls.properties.count
            cc.flags = cls.isEmbedded ? UInt32(COFFER_CLASS_EMBEDDED) : 0
            cClasses.append(cc)
        }
        return try cClasses.withUnsafeBufferPointer { try body($0.baseAddress!, $0.count) }
    }
}
