// Values between Swift and the C core where links and collections are involved:
// reading them into stored values, and preparing stored values (links, embedded
// objects) for writing.

internal import CCoffer

/// Values between Swift and the C core when links and collections are involved:
/// links read become managed objects, collections are read whole, and objects
/// written become links (adding unmanaged ones) or embedded object descriptions.
extension Database {
    /// The Swift form of `value`, read from a property, list element or map value;
    /// `open` opens the collection `value` stands for.
    func decoded(_ value: coffer_value, open: CollectionOpener) throws(CofferError) -> StoredValue {
        switch value.type {
        case COFFER_TYPE_LINK:
            return .object(try linkedObject(classId: value.u.link.class_id, key: value.u.link.key))
        case COFFER_TYPE_LIST:
            let list = try open(.list)
            defer { coffer_list_release(list) }
            return .list(try elements(ofList: list))
        case COFFER_TYPE_MAP:
            let map = try open(.map)
            defer { coffer_map_release(map) }
            return .map(try entries(ofMap: map))
        case COFFER_TYPE_SET:
            let set = try open(.set)
            defer { coffer_set_release(set) }
            return .set(try elements(ofSet: set))
        default:
            return StoredValue(copying: value)
        }
    }

    /// ``decoded(_:open:)``, but with `shallow` a nested list or map reads as an
    /// empty one without being opened: the caller reads it as a live view of
    /// its place (a mixed value), not by its contents.
    func decoded(_ value: coffer_value, shallow: Bool, open: CollectionOpener) throws(CofferError) -> StoredValue {
        guard shallow else { return try decoded(value, open: open) }
        switch value.type {
        case COFFER_TYPE_LIST: return .list([])
        case COFFER_TYPE_MAP: return .map([])
        default: return try decoded(value, open: open)
        }
    }

    func elements(ofList list: OpaquePointer) throws(CofferError) -> [StoredValue] {
        try CCollectionReading.elements(ofList: list, decoded)
    }

    /// The element at `index` of `list`; `shallow` as for ``decoded(_:shallow:open:)``.
    func element(ofList list: OpaquePointer, at index: UInt64, shallow: Bool = false) throws(CofferError) -> StoredValue {
        try CCollectionReading.element(ofList: list, at: index) { value, open throws(CofferError) in
            try decoded(value, shallow: shallow, open: open)
        }
    }

    func elements(ofSet set: OpaquePointer) throws(CofferError) -> [StoredValue] {
        try CCollectionReading.elements(ofSet: set, decoded)
    }

    /// Every entry of `map`; `shallow` as for ``decoded(_:shallow:open:)``.
    func entries(ofMap map: OpaquePointer, shallow: Bool = false) throws(CofferError) -> [(key: String, value: StoredValue)] {
        try CCollectionReading.entries(ofMap: map) { value, open throws(CofferError) in
            try decoded(value, shallow: shallow, open: open)
        }
    }

    /// The value of `map` under `key`, already read as `value`; `shallow` as
    /// for ``decoded(_:shallow:open:)``.
    func mapValue(_ map: OpaquePointer, _ key: String, _ value: coffer_value, shallow: Bool = false) throws(CofferError) -> StoredValue {
        try CCollectionReading.value(ofMap: map, key: key, value) { value, open throws(CofferError) in
            try decoded(value, shallow: shallow, open: open)
        }
    }

    /// The managed object a link read from the file points to.
    func linkedObject(classId: UInt32, key: UInt64) throws(CofferError) -> Object {
        guard classId != UInt32.max, let schema = coffer_db_class_schema(handle, classId) else {
            throw CofferError(.notFound, "a link points to a class this Database does not have")
        }
        let name = String(cString: schema.pointee.name)
        // A class bound already, then the configuration's, then any discovered one.
        let type = bindings.values.first { $0.classId == classId }?.schema.objectType
            ?? configuration.objectTypes?.first { $0.className() == name }
            ?? ModelSchema.knownType(named: name)
        guard let type else {
            throw CofferError(.notFound, "a link points to class '\(name)', which no Swift class declares; list it in Database.Configuration.objectTypes")
        }
        return makeObject(type, try binding(for: type), key)
    }

    /// `value` ready for the C core: managed objects become links, unmanaged ones
    /// are added (with `update`) or, when embedded, become descriptions of new objects.
    func prepared(_ value: StoredValue, update: UpdatePolicy) throws -> StoredValue {
        switch value {
        case .object(let object):
            return try link(to: object, update: update)
        case .list(let elements):
            return .list(try elements.map { try prepared($0, update: update) })
        case .set(let elements):
            return .set(try elements.map { try prepared($0, update: update) })
        case .map(let entries):
            return .map(try entries.map { ($0.key, try prepared($0.value, update: update)) })
        default:
            return value
        }
    }

    private func link(to object: Object, update: UpdatePolicy) throws -> StoredValue {
        let className = type(of: object).className()
        if let managed = object.managedState {
            guard managed.database === self else {
                throw CofferError(.misuse, "the \(className) object is managed by another Database; link to an object of this one")
            }
            if object is EmbeddedObject {
                // An embedded object belongs to one parent: store a copy.
                return try embeddedDescription(of: object, update: update)
            }
            return .link(classId: managed.binding.classId, key: managed.key)
        }
        if object is EmbeddedObject {
            return try embeddedDescription(of: object, update: update)
        }
        try tryAdd(object, update: update)
        let managed = object.managedState!
        return .link(classId: managed.binding.classId, key: managed.key)
    }

    private func embeddedDescription(of object: Object, update: UpdatePolicy) throws -> StoredValue {
        let binding = try binding(for: type(of: object))
        let values = FieldValues.storedValues(of: object, schema: binding.schema)
        var fields: [(property: UInt32, value: StoredValue)] = []
        for (index, property) in binding.schema.properties.enumerated() where property.isStored {
            fields.append((binding.propertyIds[index], try prepared(values[index], update: update)))
        }
        return .fields(classId: binding.classId, fields)
    }
}

extension StoredValue {
    /// True if writing the value needs objects resolved to links.
    var holdsObjects: Bool {
        switch self {
        case .object: true
        case .list(let elements), .set(let elements): elements.contains { $0.holdsObjects }
        case .map(let entries): entries.contains { $0.value.holdsObjects }
        default: false
        }
    }
}
