// ObjectId: the 12-byte identifier type.

import Foundation
internal import CCoffer

/// A 12-byte identifier, as used by MongoDB and Realm: four bytes of seconds since
/// 1970 (big-endian), five random bytes per process and a three-byte counter.
///
/// A `@Persisted var id: ObjectId` without an initial value gets a freshly
/// generated id, so it can serve as a primary key directly:
///
/// ```swift
/// final class Dog: Object {
///     @Persisted(primaryKey: true) var id: ObjectId
///     @Persisted var name = ""
/// }
/// ```
///
/// `ObjectId` is a value type and `Sendable`. Ids compare and sort by their bytes,
/// so generated ids sort by creation time.
public struct ObjectId: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// Bytes 0..<8 and 8..<12, big-endian, so that tuple order is byte order.
    private let head: UInt64
    private let tail: UInt32

    /// The all-zero id, `000000000000000000000000`. Use ``generate()`` for a new unique id.
    public init() {
        head = 0
        tail = 0
    }

    /// An id made of these 12 bytes. `nil` unless `bytes` has exactly 12 elements.
    public init?<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
        guard bytes.count == 12 else { return nil }
        var head: UInt64 = 0
        var tail: UInt32 = 0
        for (i, byte) in bytes.enumerated() {
            if i < 8 {
                head = head << 8 | UInt64(byte)
            } else {
                tail = tail << 8 | UInt32(byte)
            }
        }
        self.head = head
        self.tail = tail
    }

    /// Parses 24 hexadecimal digits.
    /// - Throws: ``CofferError`` with code `.invalidArgument` naming the text otherwise.
    public init(string: String) throws {
        var raw = coffer_object_id()
        try CofferError.check(coffer_object_id_from_string(string, &raw))
        self.init(raw)
    }

    /// A new unique id: the current time, this process's random bytes and a counter.
    public static func generate() -> ObjectId {
        var raw = coffer_object_id()
        let status = coffer_object_id_generate(&raw)
        precondition(status == COFFER_OK, "Coffer could not generate an ObjectId: \(CofferError.last(status))")
        return ObjectId(raw)
    }

    /// The 12 bytes of the id.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: head >> (56 - 8 * $0)) }
            + (0..<4).map { UInt8(truncatingIfNeeded: tail >> (24 - 8 * $0)) }
    }

    /// The 24 lowercase hexadecimal digits of the id.
    public var stringValue: String {
        var raw = cValue
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(COFFER_OBJECT_ID_STRING_SIZE)) { buffer in
            coffer_object_id_to_string(&raw, buffer.baseAddress!)
            return String(cString: buffer.baseAddress!)
        }
    }

    /// The time stored in the first four bytes, to the second.
    public var timestamp: Date {
        Date(timeIntervalSince1970: TimeInterval(head >> 32))
    }

    /// Same as ``stringValue``.
    public var description: String { stringValue }

    /// Byte order, which for generated ids is creation order.
    public static func < (lhs: ObjectId, rhs: ObjectId) -> Bool {
        (lhs.head, lhs.tail) < (rhs.head, rhs.tail)
    }

    /// Encodes the id as its 24-digit string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }

    /// Decodes an id from its 24-digit string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        try self.init(string: container.decode(String.self))
    }

    init(_ raw: coffer_object_id) {
        let bytes = withUnsafeBytes(of: raw.bytes) { Array($0) }
        self.init(bytes: bytes)!
    }

    var cValue: coffer_object_id {
        var raw = coffer_object_id()
        let all = bytes
        withUnsafeMutableBytes(of: &raw.bytes) { $0.copyBytes(from: all) }
        return raw
    }
}
