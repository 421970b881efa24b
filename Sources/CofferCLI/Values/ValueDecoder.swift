// Turning the JSON that `export` writes back into the C core's values, by
// the property types of the schema: typed scalars from their text forms,
// tagged mixed values, nested embedded objects, collections, and links
// whose exported keys are mapped to the keys of the objects just imported.

import CCoffer
import Foundation

/// Owns the C memory of the values built for one call into the core.
final class CArena {
    private var buffers: [UnsafeMutableRawPointer] = []

    deinit {
        buffers.forEach { $0.deallocate() }
    }

    func array<T>(_ items: [T]) -> UnsafePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: max(items.count, 1))
        pointer.initialize(from: items, count: items.count)
        buffers.append(UnsafeMutableRawPointer(pointer))
        return UnsafePointer(pointer)
    }

    func bytes(_ data: [UInt8]) -> UnsafeRawPointer {
        UnsafeRawPointer(array(data))
    }

    func string(_ s: String) -> coffer_bytes {
        let utf8 = Array(s.utf8)
        return coffer_bytes(data: bytes(utf8), size: utf8.count)
    }
}

struct ValueDecoder {
    let schema: SchemaInfo
    let arena: CArena
    /// The key in this file of the object exported with `key` of `cls`.
    let resolveLink: (ClassInfo, UInt64) throws -> UInt64

    /// The fields of `json` (an object) for class `cls`, of the properties
    /// `include` accepts; "$"-members and linking objects are skipped.
    func fields(_ json: JSON, of cls: ClassInfo, include: (PropertyInfo) -> Bool) throws -> [coffer_field] {
        guard case .object(let members) = json else {
            throw CLIError("expected an object of class \(cls.name), found \(json.kind)")
        }
        var fields: [coffer_field] = []
        for member in members where !member.key.hasPrefix("$") {
            guard let index = cls.property(named: member.key) else {
                throw CLIError("class \(cls.name) has no property '\(member.key)'")
            }
            let p = cls.properties[index]
            guard !p.isBacklinks, include(p) else { continue }
            let value = try self.value(member.value, property: p, where: "\(cls.name).\(p.name)")
            fields.append(coffer_field(property: coffer_property_id(index), value: value))
        }
        return fields
    }

    /// A whole property value: a collection, or one element.
    func value(_ json: JSON, property p: PropertyInfo, where place: String) throws -> coffer_value {
        switch Int(p.collection) {
        case Int(COFFER_COLLECTION_LIST), Int(COFFER_COLLECTION_SET):
            guard case .array(let items) = json else { throw mismatch(place, "an array", json) }
            let values = try items.map { try element($0, property: p, where: place) }
            return coffer_value_list(arena.array(values), values.count)
        case Int(COFFER_COLLECTION_MAP):
            guard case .object(let members) = json else { throw mismatch(place, "an object", json) }
            return try map(members) { try element($0, property: p, where: place) }
        default:
            return try element(json, property: p, where: place)
        }
    }

    private func map(_ members: [(key: String, value: JSON)], _ element: (JSON) throws -> coffer_value) throws
        -> coffer_value
    {
        let entries = try members.map { coffer_map_entry(key: arena.string($0.key), value: try element($0.value)) }
        return coffer_value_map(arena.array(entries), entries.count)
    }

    private func mismatch(_ place: String, _ expected: String, _ json: JSON) -> CLIError {
        CLIError("\(place): expected \(expected), found \(json.kind) \(json.text.prefix(40))")
    }

    /// One element of the property's type.
    func element(_ json: JSON, property p: PropertyInfo, where place: String) throws -> coffer_value {
        if case .null = json { return coffer_value_null() }
        if p.type == COFFER_TYPE_MIXED { return try mixed(json, where: place) }
        if p.type == COFFER_TYPE_LINK {
            guard let target = p.objectClass.flatMap(schema.named) else {
                throw CLIError("\(place): the link's target class \(p.objectClass ?? "?") is not in the file")
            }
            if target.isEmbedded { return try embedded(json, of: target) }
            guard case .number(let text) = json, let key = UInt64(text) else { throw mismatch(place, "an object key", json) }
            return coffer_value_link(target.id, try resolveLink(target, key))
        }
        return try scalar(json, type: p.type, where: place)
    }

    private func embedded(_ json: JSON, of cls: ClassInfo) throws -> coffer_value {
        let fields = try self.fields(json, of: cls) { _ in true }
        return coffer_value_fields(arena.array(fields), fields.count)
    }

    /// A scalar of a known type from its text form.
    func scalar(_ json: JSON, type: coffer_type, where place: String) throws -> coffer_value {
        let name = String(cString: coffer_type_name(type))
        let bad = mismatch(place, "a value of type \(name)", json)
        switch (type, json) {
        case (COFFER_TYPE_BOOL, .bool(let b)): return coffer_value_bool(b)
        case (COFFER_TYPE_INT, .number(let t)):
            guard let i = Int64(t) else { throw bad }
            return coffer_value_int(i)
        case (COFFER_TYPE_FLOAT, .number(let t)), (COFFER_TYPE_FLOAT, .string(let t)):
            guard let f = Float(t), t != "nan", t != "inf" else { throw bad }
            return coffer_value_float(f)
        case (COFFER_TYPE_DOUBLE, .number(let t)), (COFFER_TYPE_DOUBLE, .string(let t)):
            guard let d = Double(t), t != "nan", t != "inf" else { throw bad }
            return coffer_value_double(d)
        case (COFFER_TYPE_STRING, .string(let s)):
            let b = arena.string(s)
            return coffer_value_string(b.data.assumingMemoryBound(to: CChar.self), b.size)
        case (COFFER_TYPE_BINARY, .string(let s)):
            guard let data = Data(base64Encoded: s) else { throw bad }
            return coffer_value_binary(arena.bytes([UInt8](data)), data.count)
        case (COFFER_TYPE_DATE, .string(let s)):
            guard let t = DateText.parse(s) else { throw bad }
            return coffer_value_date(t.seconds, t.nanoseconds)
        case (COFFER_TYPE_OBJECT_ID, .string(let s)):
            var oid = coffer_object_id()
            guard coffer_object_id_from_string(s, &oid) == COFFER_OK else { throw bad }
            return withUnsafeBytes(of: oid.bytes) { coffer_value_object_id($0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        case (COFFER_TYPE_UUID, .string(let s)):
            guard let u = UUID(uuidString: s) else { throw bad }
            return withUnsafeBytes(of: u.uuid) { coffer_value_uuid($0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        case (COFFER_TYPE_DECIMAL128, .string(let t)), (COFFER_TYPE_DECIMAL128, .number(let t)):
            var d = coffer_decimal128()
            guard coffer_decimal128_from_string(t, &d) == COFFER_OK else { throw bad }
            return coffer_value_decimal128(d.w.0, d.w.1)
        default:
            throw bad
        }
    }

    /// A mixed value: JSON's own kinds, a tagged value, or nested lists and
    /// maps of mixed values.
    func mixed(_ json: JSON, where place: String) throws -> coffer_value {
        switch json {
        case .null: return coffer_value_null()
        case .bool(let b): return coffer_value_bool(b)
        case .number(let t):
            if let i = Int64(t) { return coffer_value_int(i) }
            return try scalar(json, type: COFFER_TYPE_DOUBLE, where: place)
        case .string: return try scalar(json, type: COFFER_TYPE_STRING, where: place)
        case .array(let items):
            let values = try items.map { try mixed($0, where: place) }
            return coffer_value_list(arena.array(values), values.count)
        case .object(let members):
            if members.count == 1, members[0].key.hasPrefix("$") {
                return try tagged(members[0].key, members[0].value, where: place)
            }
            return try map(members) { try mixed($0, where: place) }
        }
    }

    private static let tagTypes: [String: coffer_type] = [
        MixedTag.float: COFFER_TYPE_FLOAT, MixedTag.double: COFFER_TYPE_DOUBLE, MixedTag.binary: COFFER_TYPE_BINARY,
        MixedTag.date: COFFER_TYPE_DATE, MixedTag.objectId: COFFER_TYPE_OBJECT_ID, MixedTag.uuid: COFFER_TYPE_UUID,
        MixedTag.decimal128: COFFER_TYPE_DECIMAL128,
    ]

    private func tagged(_ tag: String, _ json: JSON, where place: String) throws -> coffer_value {
        if let type = ValueDecoder.tagTypes[tag] { return try scalar(json, type: type, where: place) }
        guard tag == MixedTag.link else { throw CLIError("\(place): unknown tag '\(tag)' in a mixed value") }
        guard case .string(let className)? = json["class"], case .number(let text)? = json["key"], let key = UInt64(text) else {
            throw mismatch(place, "{\"class\": NAME, \"key\": KEY} after $link", json)
        }
        guard let target = schema.named(className) else {
            throw CLIError("\(place): a link to class \(className), which is not in the file")
        }
        return coffer_value_link(target.id, try resolveLink(target, key))
    }
}
