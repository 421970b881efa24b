// ObjectId's other initializers from Realm: from a hex string literal that
// must be valid, and from a timestamp, machine id and process id.

import Foundation

extension ObjectId {
    /// Parses 24 hexadecimal digits written in the program, as Realm's
    /// `ObjectId("...")`: an invalid string stops the program naming it. Use
    /// ``init(string:)`` for text that comes from users.
    public init(_ string: StaticString) {
        do {
            try self.init(string: "\(string)")
        } catch {
            fatalError("Coffer: \(error)")
        }
    }

    /// An id made of a timestamp (whole seconds since 1970, big-endian), the low
    /// three bytes of `machineId`, the low two bytes of `processId` and a
    /// counter, as BSON and Realm lay them out.
    public init(timestamp: Date, machineId: Int, processId: Int) {
        let seconds = UInt32(truncatingIfNeeded: Int64(timestamp.timeIntervalSince1970.rounded(.down)))
        let counter = ObjectIdCounter.next()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(12)
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: seconds >> UInt32(shift))) }
        for shift in stride(from: 16, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: machineId >> shift)) }
        for shift in stride(from: 8, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: processId >> shift)) }
        for shift in stride(from: 16, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: counter >> UInt32(shift))) }
        self.init(bytes: bytes)!
    }
}

/// The three-byte counter of ids made from parts, starting at a random value.
private enum ObjectIdCounter {
    private static let value = LockedValue(UInt32.random(in: 0...0xFF_FFFF))

    static func next() -> UInt32 {
        value.withLock { current in
            current = (current &+ 1) & 0xFF_FFFF
            return current
        }
    }
}
