// A client id: the 16 random bytes that name one synced file. Ordered by its
// bytes (memcmp), which breaks ties between stamps with equal clocks.

/// The 16-byte id of a client (one synced file).
public struct ClientID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        precondition(bytes.count == 16, "a client id is 16 bytes")
        self.bytes = bytes
    }

    /// A new random id.
    public static func random() -> ClientID {
        var g = SystemRandomNumberGenerator()
        return ClientID(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) })
    }

    public static func < (a: ClientID, b: ClientID) -> Bool {
        a.bytes.lexicographicallyPrecedes(b.bytes)
    }

    /// Lower-case hex, as the dump and log lines print it.
    public var description: String {
        bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
