internal import CCoffer

/// Values between Swift and the C core when links and collections are involved:
/// links read become managed objects, collections are read whole, and objects
/// written become links (adding unmanaged ones) or embedded object descriptions.
extension Database {
    /// The Swift form of `value`, read from a property, list element or map value.
    /// `openList`, `openMap` and `openSet` open the collection `value` stands for.
    func decoded(_ value: coffer_value,
                 openList: () throws(CofferError) -> OpaquePointer,
                 openMap: () throws(CofferError) -> OpaquePointer,
                 openSet: () throws(CofferError) -> OpaquePointer) throws(CofferError) -> StoredValue {
        switch value.type {
        case COFFER_TYPE_LINK:
            return .object(try linkedObject(classId: value.u.link.class_id, key: value.u.link.key))
        case COFFER_TYPE_LIST:
            let list = try openList()
            defer { coffer_list_release(list) }
            return .list(try elements(ofList: list))
        case COFFER_TYPE_MAP:
            let map = try openMap()
            defer { coffer_map_release(map) }
            return .map(try entries(ofMap: map))
        case COFFER_TYPE_SET:
            let set = try openSet()
            defer { coffer_set_release(set) }
            return .set(try elements(ofSet: set))
        default:
            return StoredValue(copying: value)
        }
    }

    func elements(ofList list: OpaquePointer) throws(CofferError) -> [StoredValue] {
        var count: UInt64 = 0
        try CofferError.check(coffer_list_count(list, &count))
        var result: [StoredValue] = []
        for index in 0..<count {
            result.append(try element(ofList: list, at: index))
        }
        return result
    }

    func element(ofList list: OpaquePointer, at index: UInt64) throws(CofferError) -> StoredValue {
        var value = coffer_value()
        try CofferError.check(coffer_list_get(list, index, &value))
        return try decoded(value, openList: { () throws(CofferError) in
            var nested: OpaquePointer?
            try CofferError.check(coffer_list_get_list(list, index, &nested))
            return nested!
        }, openMap: { () throws(CofferError) in
            var nested: OpaquePointer?
            try CofferError.check(coffer_list_get_map(list, index, &nested))
            return nested!
        }, openSet: { () throws(CofferError) in
            throw CofferError(.type, "a list element cannot be a set")
        })
    }

    func elements(ofSet set: OpaquePointer) throws(CofferError) -> [StoredValue] {
        var count: UInt64 = 0
        try CofferError.check(coffer_set_count(set, &count))
        var result: [StoredValue] = []
        for index in 0..<count {
            var value = coffer_value()
            try CofferError.check(coffer_set_get(set, index, &value))
            result.append(try decoded(value, openList: noNested, openMap: noNested, openSet: noNested))
        }
        return result
    }

    func entries(ofMap map: OpaquePointer) throws(CofferError) -> [(key: String, value: StoredValue)] {
        var count: UInt64 = 0
        try CofferError.check(coffer_map_count(map, &count))
        var result: [(key: String, value: StoredValue)] = []
        for index in 0..<count {
            var key = coffer_bytes()
            var value = coffer_value()
            try CofferError.check(coffer_map_get_entry(map, index, &key, &value))
            let name = String(decoding: UnsafeRawBufferPointer(start: key.data, count: key.size), as: UTF8.self)
            result.append((name, try mapValue(map, name, value)))
        }
        return result
    }

    /// The value of `map` under `key`, already read as `value`.
    func mapValue(_ map: OpaquePointer, _ key: String, _ value: coffer_value) throws(CofferError) -> StoredValue {
        try decoded(value, openList: { () throws(CofferError) in
            var nested: OpaquePointer?
            try CofferError.check(coffer_map_get_list(map, key, key.utf8.count, &nested))
            return nested!
        }, openMap: { () throws(CofferError) in
            var nested: OpaquePointer?
            try CofferError.check(coffer_map_get_map(map, key, key.utf8.count, &nested))
            return nested!
        }, openSet: noNested)
    }

    private func noNested() throws(CofferError) -> OpaquePointer {
        throw CofferError(.type, "a set element cannot be a collection")
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
            ?? ObjectSchema.knownType(named: name)
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
        try add(object, update: update)
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
