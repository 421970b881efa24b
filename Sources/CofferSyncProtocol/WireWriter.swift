// Appends the protocol's primitive encodings to a byte array: LEB128 varints,
// zigzag signed varints, length-prefixed strings and bytes, fixed-size
// little-endian integers and raw 16-byte ids.

/// Builds an encoding byte by byte.
public struct WireWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public mutating func byte(_ value: UInt8) {
        bytes.append(value)
    }

    public mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    public mutating func varint(_ value: Int) {
        precondition(value >= 0, "a varint is unsigned")
        varint(UInt64(value))
    }

    public mutating func zigzag(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    public mutating func u64le(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    public mutating func u32le(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    public mutating func raw(_ data: [UInt8]) {
        bytes.append(contentsOf: data)
    }

    public mutating func blob(_ data: [UInt8]) {
        varint(data.count)
        bytes.append(contentsOf: data)
    }

    public mutating func string(_ text: String) {
        varint(text.utf8.count)
        bytes.append(contentsOf: text.utf8)
    }
}
