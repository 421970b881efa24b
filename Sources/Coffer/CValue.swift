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
        switch value {
        case .null: return coffer_value_null()
        case .bool(let v): return coffer_value_bool(v)
        case .int(let v): return coffer_value_int(v)
        case .float(let v): return coffer_value_float(v)
        case .double(let v): return coffer_value_double(v)
        case .string(var v):
            let size = v.utf8.count
            let pointer = v.withUTF8 { copy(UnsafeRawBufferPointer($0)) }
            return coffer_value_string(pointer.assumingMemoryBound(to: CChar.self), size)
        case .data(let v):
            let pointer = v.withUnsafeBytes { copy($0) }
            return coffer_value_binary(pointer, v.count)
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
        }
    }
}
