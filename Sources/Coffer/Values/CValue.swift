// Converting between StoredValue and the C core's coffer_value, and the arena
// that keeps converted bytes alive.

import Foundation
internal import CCoffer

extension StoredValue {
    /// Copies a value read from the C core, whose bytes are only borrowed.
    init(copying value: coffer_value) {
        switch value.type {
        case COFFER_TYPE_BOOL: self = .bool(value.u.boolean)
        case COFFER_TYPE_INT: self = .int(value.u.integer)
        case COFFER_TYPE_FLOAT: self = .float(value.u.float_value)
        case COFFER_TYPE_DOUBLE: self = .double(value.u.double_value)
        case COFFER_TYPE_STRING:
            let bytes = UnsafeRawBufferPointer(start: value.u.string.data, count: value.u.string.size)
            self = .string(String(decoding: bytes, as: UTF8.self))
        case COFFER_TYPE_BINARY:
            self = .data(value.u.binary.size == 0 ? Data() : Data(bytes: value.u.binary.data, count: value.u.binary.size))
        case COFFER_TYPE_DATE: self = .date(Date(value.u.date))
        case COFFER_TYPE_OBJECT_ID: self = .objectId(ObjectId(value.u.object_id))
        case COFFER_TYPE_UUID: self = .uuid(UUID(uuid: value.u.uuid.bytes))
        case COFFER_TYPE_DECIMAL128: self = .decimal128(Decimal128(low: value.u.decimal128.w.0, high: value.u.decimal128.w.1))
        default: self = .null
        }
    }
}

extension Date {
    /// Seconds and nanoseconds of the same sign, as the C core and Realm store dates.
    init(_ timestamp: coffer_timestamp) {
        self.init(timeIntervalSince1970: Double(timestamp.seconds) + Double(timestamp.nanoseconds) / 1e9)
    }

    /// nil for dates beyond ±2^63 seconds.
    var cTimestamp: coffer_timestamp? {
        let interval = timeIntervalSince1970
        let whole = interval.rounded(.towardZero)
        var nanoseconds = ((interval - whole) * 1e9).rounded()
        var seconds = whole
        if abs(nanoseconds) >= 1e9 {
            seconds += nanoseconds > 0 ? 1 : -1
            nanoseconds = 0
        }
        guard let s = Int64(exactly: seconds) else { return nil }
        return coffer_timestamp(seconds: s, nanoseconds: Int32(nanoseconds))
    }
}

/// Owns the bytes of strings and binaries passed to the C core for one call.
final class ValueArena {
    private var buffers: [UnsafeMutableRawPointer] = []

    deinit {
        buffers.forEach { $0.deallocate() }
    }

    /// Storage for `count` C values of type `T`, freed with the arena.
    private func allocate<T>(_ type: T.Type, _ count: Int) -> UnsafeMutablePointer<T> {
        let pointer = UnsafeMutablePointer<T>.allocate(capacity: max(count, 1))
        buffers.append(UnsafeMutableRawPointer(pointer))
        return pointer
    }

    private func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        if bytes.count > 0 {
            buffer.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        buffers.append(buffer)
        return UnsafeRawPointer(buffer)
    }

    /// The C form of `value`, valid while the arena lives.
    /// - Throws: ``CofferError`` `.type` for a date the C core cannot represent.
    func cValue(_ value: StoredValue) throws(CofferError) -> coffer_value {
        if let plain = try value.plainCValue() {
            return plain
        }
        switch value {
        case .null, .bool, .int, .float, .double, .date, .objectId, .uuid, .decimal128, .link:
            throw CofferError(.internal, "\(value.summary) has a C form of its own")
        case .string(var v):
            let size = v.utf8.count
            let pointer = v.withUTF8 { copy(UnsafeRawBufferPointer($0)) }
            return coffer_value_string(pointer.assumingMemoryBound(to: CChar.self), size)
        case .data(let v):
            let pointer = v.withUnsafeBytes { copy($0) }
            return coffer_value_binary(pointer, v.count)
        case .object(let v):
            // Database.prepared(_:) turns objects into links first.
            throw CofferError(.internal, "a \(type(of: v).className()) object reached the C core without being resolved to a link")
        case .fields(_, let fields):
            let items = allocate(coffer_field.self, fields.count)
            for (i, field) in fields.enumerated() {
                (items + i).initialize(to: coffer_field(property: field.property, value: try cValue(field.value)))
            }
            return coffer_value_fields(items, fields.count)
        case .list(let elements), .set(let elements):
            let items = allocate(coffer_value.self, elements.count)
            for (i, element) in elements.enumerated() {
                (items + i).initialize(to: try cValue(element))
            }
            return coffer_value_list(items, elements.count)
        case .map(let entries):
            let items = allocate(coffer_map_entry.self, entries.count)
            for (i, entry) in entries.enumerated() {
                var key = entry.key
                let size = key.utf8.count
                let pointer = key.withUTF8 { copy(UnsafeRawBufferPointer($0)) }
                (items + i).initialize(to: coffer_map_entry(key: coffer_bytes(data: pointer, size: size), value: try cValue(entry.value)))
            }
            return coffer_value_map(items, entries.count)
        }
    }
}

extension StoredValue {
    /// The C form of a value that owns no bytes (numbers, dates, ids, links), or
    /// nil for strings, bytes, new objects and collections, which need an arena.
    /// - Throws: ``CofferError`` `.type` for a date the C core cannot represent.
    func plainCValue() throws(CofferError) -> coffer_value? {
        switch self {
        case .null: return coffer_value_null()
        case .bool(let v): return coffer_value_bool(v)
        case .int(let v): return coffer_value_int(v)
        case .float(let v): return coffer_value_float(v)
        case .double(let v): return coffer_value_double(v)
        case .date(let v):
            guard let timestamp = v.cTimestamp else {
                throw CofferError(.type, "the date \(v.timeIntervalSince1970) seconds since 1970 is out of range")
            }
            return coffer_value_date(timestamp.seconds, timestamp.nanoseconds)
        case .objectId(let v):
            var raw = v.cValue
            return withUnsafeBytes(of: &raw.bytes) { coffer_value_object_id($0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        case .uuid(let v):
            var bytes = v.uuid
            return withUnsafeBytes(of: &bytes) { coffer_value_uuid($0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        case .decimal128(let v):
            return coffer_value_decimal128(v.low, v.high)
        case .link(let classId, let key):
            return coffer_value_link(classId, key)
        case .string, .data, .object, .fields, .list, .set, .map:
            return nil
        }
    }

    /// Runs `body` with the C form of the value, for one call into the C core:
    /// strings and bytes are lent rather than copied, and only nested values
    /// go through a ``ValueArena``.
    /// - Throws: what ``ValueArena/cValue(_:)`` throws.
    func withCValue<Result>(_ body: (inout coffer_value) -> Result) throws(CofferError) -> Result {
        if var plain = try plainCValue() {
            return body(&plain)
        }
        switch self {
        case .string(var v):
            let lent: Result? = v.withUTF8 { bytes in
                guard let base = bytes.baseAddress else { return nil }
                var value = coffer_value_string(UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), bytes.count)
                return body(&value)
            }
            if let lent { return lent }
        case .data(let v):
            let lent: Result? = v.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return nil }
                var value = coffer_value_binary(base, bytes.count)
                return body(&value)
            }
            if let lent { return lent }
        default:
            break
        }
        let arena = ValueArena()
        var value = try arena.cValue(self)
        return withExtendedLifetime(arena) { body(&value) }
    }
}
