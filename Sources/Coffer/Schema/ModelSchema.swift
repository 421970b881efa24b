// ModelSchema and PropertySchema: the stored classes and properties discovered
// from Object subclasses, and their C schema descriptions.

import Foundation
internal import CCoffer

/// One stored property of an ``Object`` subclass, as discovered by Mirror.
struct PropertySchema: @unchecked Sendable {
    /// The Swift name, which code and (later) queries use.
    let name: String
    /// The name stored in the database: `propertiesMapping()` or the Swift name.
    let persistedName: String
    let kind: ValueKind
    let isOptional: Bool
    let isPrimaryKey: Bool
    let isIndexed: Bool
    /// The Swift type, for casting values given as `Any`. Metatypes are immutable.
    let valueType: any _Persistable.Type
    var collection: CollectionKind = .none
    /// The linked class of a link, or the origin class of linking objects.
    var objectType: Object.Type? = nil
    /// The stored name of the origin property of linking objects.
    var originProperty: String? = nil

    /// True for properties that hold a value of their own (not backlinks).
    var isStored: Bool { kind != .linkingObjects }

    var cType: coffer_type {
        switch kind {
        case .link: COFFER_TYPE_LINK
        case .mixed: COFFER_TYPE_MIXED
        case .linkingObjects: COFFER_TYPE_LINKING_OBJECTS
        case .bool: COFFER_TYPE_BOOL
        case .int: COFFER_TYPE_INT
        case .float: COFFER_TYPE_FLOAT
        case .double: COFFER_TYPE_DOUBLE
        case .string: COFFER_TYPE_STRING
        case .data: COFFER_TYPE_BINARY
        case .date: COFFER_TYPE_DATE
        case .objectId: COFFER_TYPE_OBJECT_ID
        case .uuid: COFFER_TYPE_UUID
        case .decimal128: COFFER_TYPE_DECIMAL128
        }
    }

    var cFlags: UInt32 {
        var flags: UInt32 = 0
        if isOptional { flags |= UInt32(COFFER_PROPERTY_OPTIONAL) }
        if isPrimaryKey { flags |= UInt32(COFFER_PROPERTY_PRIMARY_KEY) }
        if isIndexed { flags |= UInt32(COFFER_PROPERTY_INDEXED) }
        return flags
    }

    var cCollection: UInt32 {
        switch collection {
        case .none: UInt32(COFFER_COLLECTION_NONE)
        case .list: UInt32(COFFER_COLLECTION_LIST)
        case .set: UInt32(COFFER_COLLECTION_SET)
        case .map: UInt32(COFFER_COLLECTION_MAP)
        }
    }

    /// `"int"`, `"string?"`, `"list<link Dog>"`: the type as error messages show it.
    var typeDescription: String {
        var element = String(cString: coffer_type_name(cType))
        if let objectType { element += " " + objectType.className() }
        element += isOptional ? "?" : ""
        switch collection {
        case .none: return element
        case .list: return "list<\(element)>"
        case .set: return "set<\(element)>"
        case .map: return "map<\(element)>"
        }
    }
}

/// The schema of an ``Object`` subclass: discovered once per class with Mirror on a
/// fresh instance, checked with the C core's own schema validation, then shared by
/// every database. Immutable but for a cache behind a lock.
final class ModelSchema: @unchecked Sendable {
    let objectType: Object.Type
    let className: String
    /// Superclass properties first, then in declaration order.
    let properties: [PropertySchema]
    let primaryKeyIndex: Int?
    /// True for subclasses of ``EmbeddedObject``.
    let isEmbedded: Bool
    /// True if the class declares properties without `@Persisted` that read
    /// through their object (`LinkingObjects(fromType:property:)`,
    /// ``DatabaseProperty``); they are told their object when it becomes managed.
    let hasAttachedProperties: Bool
    /// Where instances keep their properties' boxes; nil if Mirror must find them.
    let layout: ObjectLayout?
    private let indexByName: [String: Int]
    /// Which property a `Persisted` storage key path stands for.
    private let keyPathIndexes = LockedValue<[AnyKeyPath: Int]>([:])

    private static let discovered = LockedValue<[ObjectIdentifier: Result<ModelSchema, CofferError>]>([:])

    private init(objectType: Object.Type, className: String, properties: [PropertySchema], hasAttachedProperties: Bool,
                 layout: ObjectLayout?) {
        self.objectType = objectType
        self.layout = layout
        self.isEmbedded = objectType is EmbeddedObject.Type
        self.hasAttachedProperties = hasAttachedProperties
        self.className = className
        self.properties = properties
        primaryKeyIndex = properties.firstIndex { $0.isPrimaryKey }
        indexByName = Dictionary(properties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The schema of `type`, discovered on first use.
    /// - Throws: ``CofferError`` `.schema` naming the class and the fault.
    static func of(_ type: Object.Type) throws(CofferError) -> ModelSchema {
        let id = ObjectIdentifier(type)
        if let known = discovered.withLock({ $0[id] }) {
            return try known.get()
        }
        register(type)
        // Outside the lock: discovery runs the class's init, which may use Coffer.
        let result: Result<ModelSchema, CofferError>
        do throws(CofferError) {
            result = .success(try discover(type))
        } catch {
            result = .failure(error)
        }
        return try discovered.withLock { cache in
            if let raced = cache[id] { return raced }
            cache[id] = result
            return result
        }.get()
    }

    /// The schema of a managed object's class, which was discovered when it was managed.
    static func forObject(_ object: Object) -> ModelSchema {
        do {
            return try of(type(of: object))
        } catch {
            fatalError("Coffer: \(error)")
        }
    }

    private static let typesByName = LockedValue<[String: Object.Type]>([:])

    /// Remembers `type` under its class name, to find the Swift class of a link read from a file.
    static func register(_ type: Object.Type) {
        typesByName.withLock { $0[type.className()] = type }
    }

    /// A class seen by schema discovery (or as a link target) with this class name.
    static func knownType(named name: String) -> Object.Type? {
        typesByName.withLock { $0[name] }
    }

    func index(ofProperty name: String) -> Int? {
        indexByName[name]
    }

    /// The position of the property whose box is `box`, found once per key path.
    func index(of box: AnyObject, in object: Object, storage: AnyKeyPath) -> Int {
        if let known = keyPathIndexes.withLock({ $0[storage] }) {
            return known
        }
        let identity = ObjectIdentifier(box)
        guard let found = Self.persistedChildren(of: object).firstIndex(where: { $0.property.boxIdentity == identity }) else {
            fatalError("Coffer: a @Persisted property of \(className) is not among its stored properties")
        }
        keyPathIndexes.withLock { $0[storage] = found }
        return found
    }

    /// The boxes of `object`'s properties, in schema order, read through the
    /// layout; nil if the class has none or `object` is of another class.
    private func boxes(of object: Object) -> [AnyPersistedBox]? {
        guard let layout, ObjectIdentifier(type(of: object)) == ObjectIdentifier(objectType) else { return nil }
        return layout.boxOffsets.map { ObjectLayout.box(at: $0, in: object) }
    }

    /// Every property value of unmanaged `object` (of this class), in schema order.
    func unmanagedValues(of object: Object) -> [StoredValue] {
        if let boxes = boxes(of: object) {
            return boxes.map(\.storedValue)
        }
        return Self.persistedChildren(of: object).map { $0.property.storedValue }
    }

    /// Sets properties of unmanaged `object` (of this class) by schema position;
    /// false at the first value that does not fit its property.
    func setUnmanagedValues(_ values: [Int: StoredValue], of object: Object) -> Bool {
        if let boxes = boxes(of: object) {
            return values.allSatisfy { boxes[$0.key].setStoredValue($0.value) }
        }
        let children = Self.persistedChildren(of: object)
        return values.allSatisfy { children[$0.key].property.setStoredValue($0.value) }
    }

    /// Tells the boxes of `object` (of this class) their schema positions, so
    /// that its getters and setters need not look them up.
    func assignIndexes(to object: Object) {
        guard let layout, ObjectIdentifier(type(of: object)) == ObjectIdentifier(objectType) else { return }
        for (index, offset) in layout.boxOffsets.enumerated() {
            ObjectLayout.box(at: offset, in: object).index = index
        }
    }

    /// The `@Persisted` properties of `object`, superclasses first, in declaration order.
    static func persistedChildren(of object: Object) -> [(label: String, property: any PersistedProperty)] {
        var mirrors: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            mirrors.append(current)
            mirror = current.superclassMirror
        }
        var children: [(label: String, property: any PersistedProperty)] = []
        for current in mirrors.reversed() {
            for child in current.children {
                if let property = child.value as? any PersistedProperty {
                    children.append((child.label ?? "", property))
                }
            }
        }
        return children
    }

    private static func discover(_ type: Object.Type) throws(CofferError) -> ModelSchema {
        let className = type.className()
        let mapping = type.propertiesMapping()
        var properties: [PropertySchema] = []
        var hasAttachedProperties = false
        let instance = type.init()
        let children = persistedChildren(of: instance)
        for (label, property) in children {
            // Property wrappers store `name` as `_name`.
            let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
            let valueType = property.valueType
            let kind = valueType._cofferKind
            var schema = PropertySchema(
                name: name,
                persistedName: mapping[name] ?? name,
                kind: kind.kind,
                isOptional: valueType._cofferIsOptional,
                isPrimaryKey: property.isPrimaryKey,
                isIndexed: property.isIndexed,
                valueType: valueType)
            schema.collection = kind.collection
            schema.objectType = kind.objectType
            if let target = kind.objectType {
                register(target)
            }
            if let origin = property.linkOrigin {
                schema.objectType = origin.type
                schema.originProperty = origin.type.propertiesMapping()[origin.property] ?? origin.property
            }
            hasAttachedProperties = hasAttachedProperties || property is any OwnerAttached
            if kind.kind == .link && kind.collection == .none && !schema.isOptional {
                throw CofferError(.schema, "class '\(className)': link property '\(name)' must be optional (\(kind.objectType.map { "\($0)" } ?? "Object")?)")
            }
            properties.append(schema)
        }
        for key in mapping.keys.sorted() where !properties.contains(where: { $0.name == key }) {
            throw CofferError(.schema, "class '\(className)': propertiesMapping() maps '\(key)', which is not a @Persisted property")
        }
        let schema = ModelSchema(objectType: type, className: className, properties: properties,
                                  hasAttachedProperties: hasAttachedProperties,
                                  layout: ObjectLayout(of: instance, children: children))
        // Links and backlinks name other classes; those are checked when the
        // database opens with every class.
        if !properties.contains(where: { $0.objectType != nil }) {
            try CSchema([schema]).validate()
        }
        return schema
    }
}

/// A C copy of Swift schemas, for `coffer_schema_validate` and `coffer_config_set_schema`.
final class CSchema {
    private var strings: [UnsafeMutablePointer<CChar>] = []
    private var propertyArrays: [UnsafeMutableBufferPointer<coffer_property_schema>] = []
    let classes: UnsafeMutableBufferPointer<coffer_class_schema>

    init(_ schemas: [ModelSchema]) {
        count = schemas.count
        classes = .allocate(capacity: max(schemas.count, 1))
        for (i, schema) in schemas.enumerated() {
            let properties = UnsafeMutableBufferPointer<coffer_property_schema>.allocate(capacity: max(schema.properties.count, 1))
            propertyArrays.append(properties)
            for (j, property) in schema.properties.enumerated() {
                var c = coffer_property_schema()
                c.name = UnsafePointer(copy(property.persistedName))
                c.type = property.cType
                c.flags = property.cFlags
                c.collection = property.cCollection
                if let objectType = property.objectType {
                    c.object_class = UnsafePointer(copy(objectType.className()))
                }
                if let origin = property.originProperty {
                    c.link_origin_property = UnsafePointer(copy(origin))
                }
                properties[j] = c
            }
            var c = coffer_class_schema()
            c.name = UnsafePointer(copy(schema.className))
            c.properties = UnsafePointer(properties.baseAddress)
            c.property_count = schema.properties.count
            c.flags = schema.isEmbedded ? UInt32(COFFER_CLASS_EMBEDDED) : 0
            classes[i] = c
        }
    }

    let count: Int

    deinit {
        strings.forEach { free($0) }
        propertyArrays.forEach { $0.deallocate() }
        classes.deallocate()
    }

    private func copy(_ text: String) -> UnsafeMutablePointer<CChar> {
        let pointer = strdup(text)!
        strings.append(pointer)
        return pointer
    }

    func validate() throws(CofferError) {
        try CofferError.check(coffer_schema_validate(classes.baseAddress, count))
    }
}
