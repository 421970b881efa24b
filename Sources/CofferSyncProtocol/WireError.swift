// The one error the codec throws: what did not decode, and where. Decoding is
// bounds-checked everywhere, so hostile or truncated input ends here and never
// in a trap or an unbounded allocation.

/// A frame, changeset, value or schema that does not decode.
public struct WireError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What was wrong, naming the field ("truncated string at byte 12").
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
