// Reads the protocol's primitive encodings with a bounds check on every read.
// Lengths and counts are checked against the bytes that remain before
// anything is allocated, so a hostile count cannot make the reader reserve
// memory the input does not back.

/// Consumes an encoding from the front; every read throws `WireError` instead
/// of reading past the end.
public struct WireReader {
    private let bytes: [UInt8]
    public private(set) var offset: Int

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    public var remaining: Int { bytes.count - offset }
    public var isAtEnd: Bool { offset == bytes.count }

    public mutating func byte(_ what: String) throws -> UInt8 {
        guard offset < bytes.count else { throw WireError("truncated \(what) at byte \(offset)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func varint(_ what: String) throws -> UInt64 {
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count else { throw WireError("truncated \(what) at byte \(start)") }
            let b = bytes[offset]
            offset += 1
            if shift == 63 && b > 1 {
                throw WireError("\(what) at byte \(start) overflows 64 bits")
            }
            result |= UInt64(b & 0x7f) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw WireError("\(what) at byte \(start) overflows 64 bits") }
        }
    }

    /// A varint that counts items of at least `minimumItemBytes` each: it may
    /// not promise more items than the remaining bytes can hold.
    public mutating func count(_ what: String, minimumItemBytes: Int = 1) throws -> Int {
        let start = offset
        let value = try varint(what)
        guard value <= UInt64(remaining / max(minimumItemBytes, 1)) else {
            throw WireError("\(what) \(value) at byte \(start) is more than the \(remaining) bytes left can hold")
        }
        return Int(value)
    }

    public mutating func zigzag(_ what: String) throws -> Int64 {
        let v = try varint(what)
        return Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1)))
    }

    public mutating func raw(_ length: Int, _ what: String) throws -> [UInt8] {
        guard length <= remaining else {
            throw WireError("truncated \(what) at byte \(offset): \(length) bytes needed, \(remaining) left")
        }
        defer { offset += length }
        return Array(bytes[offset..<offset + length])
    }

    public mutating func u64le(_ what: String) throws -> UInt64 {
        let b = try raw(8, what)
        var v: UInt64 = 0
        for i in (0..<8).reversed() { v = (v << 8) | UInt64(b[i]) }
        return v
    }

    public mutating func u32le(_ what: String) throws -> UInt32 {
        let b = try raw(4, what)
        var v: UInt32 = 0
        for i in (0..<4).reversed() { v = (v << 8) | UInt32(b[i]) }
        return v
    }

    public mutating func blob(_ what: String) throws -> [UInt8] {
        let length = try count("\(what) length")
        return try raw(length, what)
    }

    public mutating func string(_ what: String) throws -> String {
        let start = offset
        let data = try blob(what)
        guard let text = String(validating: data, as: UTF8.self) else {
            throw WireError("\(what) at byte \(start) is not valid UTF-8")
        }
        return text
    }

    public mutating func id16(_ what: String) throws -> ClientID {
        ClientID(bytes: try raw(16, what))
    }

    /// Throws unless every byte was read: trailing bytes are an encoding error.
    public func expectEnd(_ what: String) throws {
        guard isAtEnd else { throw WireError("\(remaining) unexpected bytes after \(what) at byte \(offset)") }
    }
}
