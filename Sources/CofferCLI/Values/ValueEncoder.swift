// Reading objects of any class into JSON, by the types the stored schema
// gives: for export (links as object keys, mixed values tagged with their
// type so that import restores it) and for display (links shown by primary
// key, mixed values plain).

import CCoffer
import Foundation

/// The tags of mixed values that JSON cannot tell apart by itself. Map keys
/// can never start with '$', so a tagged object is never a map.
enum MixedTag {
    static let float = "$float", double = "$double", binary = "$binary", date = "$date"
    static let objectId = "$objectId", uuid = "$uuid", decimal128 = "$decimal128", link = "$link"
    /// Members of an exported object line: its class and its key in the file.
    static let objectClass = "$class", objectKey = "$key"
}

struct ValueEncoder {
    enum Mode { case export, display }

    let txn: Transaction
    let mode: Mode
    var schema: SchemaInfo { txn.db.schema }

    /// The object's properties (without linking objects in an export), in
    /// schema order; an export line also carries "$class" and "$key".
    func object(_ obj: OpaquePointer, of cls: ClassInfo, withKey: Bool) throws -> JSON {
        var members: [(key: String, value: JSON)] = []
        if withKey {
            members.append((MixedTag.objectClass, .string(cls.name)))
            members.append((MixedTag.objectKey, .number(String(coffer_object_key_of(obj)))))
        }
        for (i, p) in cls.properties.enumerated() where !(p.isBacklinks && mode == .export) {
            members.append((p.name, try property(obj, cls: cls, index: i)))
        }
        return .object(members)
    }

    func property(_ obj: OpaquePointer, cls: ClassInfo, index: Int) throws -> JSON {
        let p = cls.properties[index]
        let prop = coffer_property_id(index)
        let where_ = "\(cls.name).\(p.name)"
        var v = coffer_value()
        try check(coffer_object_get_value(obj, prop, &v), where_)
        if p.isBacklinks { return .int(Int64(v.u.list.count)) }
        let mixed = p.type == COFFER_TYPE_MIXED
        let kind = p.collection == UInt32(COFFER_COLLECTION_LIST) ? COFFER_TYPE_LIST
            : p.collection == UInt32(COFFER_COLLECTION_MAP) ? COFFER_TYPE_MAP : mixed ? v.type : COFFER_TYPE_NULL
        if let nested = try collection(kind, element: p, where_,
                                       list: { coffer_object_get_list(obj, prop, &$0) },
                                       map: { coffer_object_get_map(obj, prop, &$0) }) {
            return nested
        }
        if p.collection == UInt32(COFFER_COLLECTION_SET) {
            var set: OpaquePointer?
            try check(coffer_object_get_set(obj, prop, &set), where_)
            defer { coffer_set_release(set) }
            var n: UInt64 = 0
            try check(coffer_set_count(set, &n), where_)
            return .array(try (0..<n).map { i in
                var e = coffer_value()
                try check(coffer_set_get(set, i, &e), where_)
                return try scalar(e, property: p)
            })
        }
        return try scalar(v, property: p)
    }

    /// The list or map (by `type`) that `openList` or `openMap` opens, or nil
    /// when `type` is neither.
    private func collection(_ type: coffer_type, element p: PropertyInfo, _ where_: String,
                            list openList: (inout OpaquePointer?) -> coffer_status,
                            map openMap: (inout OpaquePointer?) -> coffer_status) throws -> JSON?
    {
        var handle: OpaquePointer?
        switch type {
        case COFFER_TYPE_LIST:
            try check(openList(&handle), where_)
            defer { coffer_list_release(handle) }
            return try list(handle!, element: p, where_)
        case COFFER_TYPE_MAP:
            try check(openMap(&handle), where_)
            defer { coffer_map_release(handle) }
            return try map(handle!, element: p, where_)
        default:
            return nil
        }
    }

    private func list(_ list: OpaquePointer, element p: PropertyInfo, _ where_: String) throws -> JSON {
        var n: UInt64 = 0
        try check(coffer_list_count(list, &n), where_)
        return .array(try (0..<n).map { i in
            var e = coffer_value()
            try check(coffer_list_get(list, i, &e), where_)
            return try collection(e.type, element: p, where_,
                                  list: { coffer_list_get_list(list, i, &$0) },
                                  map: { coffer_list_get_map(list, i, &$0) }) ?? scalar(e, property: p)
        })
    }

    private func map(_ map: OpaquePointer, element p: PropertyInfo, _ where_: String) throws -> JSON {
        var n: UInt64 = 0
        try check(coffer_map_count(map, &n), where_)
        return .object(try (0..<n).map { i in
            var key = coffer_bytes()
            var e = coffer_value()
            try check(coffer_map_get_entry(map, i, &key, &e), where_)
            let name = String(decoding: UnsafeRawBufferPointer(start: key.data, count: key.size), as: UTF8.self)
            let size = name.utf8.count
            let value = try collection(e.type, element: p, where_,
                                       list: { coffer_map_get_list(map, name, size, &$0) },
                                       map: { coffer_map_get_map(map, name, size, &$0) }) ?? scalar(e, property: p)
            return (name, value)
        })
    }

    /// One value that is not a collection; tagged when it sits in a mixed
    /// property of an export.
    func scalar(_ v: coffer_value, property p: PropertyInfo) throws -> JSON {
        let tag = mode == .export && p.type == COFFER_TYPE_MIXED
        func tagged(_ name: String, _ value: JSON) -> JSON { tag ? .object([(name, value)]) : value }
        switch v.type {
        case COFFER_TYPE_NULL: return .null
        case COFFER_TYPE_BOOL: return .bool(v.u.boolean)
        case COFFER_TYPE_INT: return .int(v.u.integer)
        case COFFER_TYPE_FLOAT: return tagged(MixedTag.float, .float(v.u.float_value))
        case COFFER_TYPE_DOUBLE: return tagged(MixedTag.double, .double(v.u.double_value))
        case COFFER_TYPE_STRING:
            return .string(String(decoding: UnsafeRawBufferPointer(start: v.u.string.data, count: v.u.string.size), as: UTF8.self))
        case COFFER_TYPE_BINARY:
            let data = v.u.binary.size == 0 ? Data() : Data(bytes: v.u.binary.data, count: v.u.binary.size)
            return tagged(MixedTag.binary, .string(data.base64EncodedString()))
        case COFFER_TYPE_DATE: return tagged(MixedTag.date, .string(DateText.format(v.u.date)))
        case COFFER_TYPE_OBJECT_ID: return tagged(MixedTag.objectId, .string(ScalarText.objectId(v.u.object_id)))
        case COFFER_TYPE_UUID: return tagged(MixedTag.uuid, .string(ScalarText.uuid(v.u.uuid)))
        case COFFER_TYPE_DECIMAL128: return tagged(MixedTag.decimal128, .string(ScalarText.decimal(v.u.decimal128)))
        case COFFER_TYPE_LINK: return try link(v.u.link, inMixed: p.type == COFFER_TYPE_MIXED)
        default:
            throw CLIError("a value of type \(String(cString: coffer_type_name(v.type))) cannot be shown")
        }
    }

    /// An embedded object inline; any other object by its key (export) or its
    /// primary key (display).
    private func link(_ l: coffer_link, inMixed: Bool) throws -> JSON {
        guard Int(l.class_id) < schema.classes.count else { return .null }
        let target = schema.classes[Int(l.class_id)]
        if target.isEmbedded || mode == .display {
            var obj: OpaquePointer?
            try check(coffer_object_get(txn.handle, l.class_id, l.key, &obj), target.name)
            defer { coffer_object_release(obj) }
            if target.isEmbedded { return try object(obj!, of: target, withKey: false) }
            guard let pk = target.primaryKey else { return .string("\(target.name)#\(l.key)") }
            let value = try property(obj!, cls: target, index: pk)
            return inMixed ? .string("\(target.name)(\(value.text))") : value
        }
        guard inMixed else { return .number(String(l.key)) }
        return .object([(MixedTag.link, .object([("class", .string(target.name)), ("key", .number(String(l.key)))]))])
    }
}

/// Text forms of ObjectIds, UUIDs and decimals, shared by output and input.
enum ScalarText {
    static func objectId(_ oid: coffer_object_id) -> String {
        var buf = [CChar](repeating: 0, count: Int(COFFER_OBJECT_ID_STRING_SIZE))
        withUnsafePointer(to: oid) { coffer_object_id_to_string($0, &buf) }
        return buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    static func uuid(_ u: coffer_uuid) -> String {
        UUID(uuid: u.bytes).uuidString.lowercased()
    }

    static func decimal(_ d: coffer_decimal128) -> String {
        var buf = [CChar](repeating: 0, count: Int(COFFER_DECIMAL128_STRING_SIZE))
        withUnsafePointer(to: d) { coffer_decimal128_to_string($0, &buf) }
        return buf.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
