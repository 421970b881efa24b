// Decimal128: the 128-bit decimal floating-point type.

internal import CCoffer

/// A 128-bit IEEE 754-2008 decimal floating-point number, as BSON and Realm store it.
///
/// A decimal keeps its precision: `Decimal128(string: "1.0")` and
/// `Decimal128(string: "1.00")` are equal but print differently. Up to 34
/// significant digits are exact.
///
/// ```swift
/// let price: Decimal128 = "19.99"
/// let count = Decimal128(3)
/// ```
///
/// `Decimal128` is a value type and `Sendable`. It compares by value (`==`) but
/// has no arithmetic yet.
public struct Decimal128: Sendable, Equatable, CustomStringConvertible,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
    /// The BID encoding: low and high 64 bits.
    let low: UInt64
    let high: UInt64

    /// Zero (`0`).
    public init() {
        self.init(low: 0, high: 0x3040_0000_0000_0000)
    }

    /// Parses a decimal number: `"1.25"`, `"-3E-7"`, `"NaN"`, `"Inf"`.
    /// - Throws: ``CofferError`` with code `.invalidArgument`, naming the text, if it is
    ///   not a number, has more than 34 significant digits, or its exponent is out of range.
    public init(string: String) throws {
        var raw = coffer_decimal128()
        try CofferError.check(coffer_decimal128_from_string(string, &raw))
        self.init(low: raw.w.0, high: raw.w.1)
    }

    /// The integer exactly.
    public init(_ value: Int) {
        // Every Int has at most 19 digits, so the text always parses.
        try! self.init(string: String(value))
    }

    /// The shortest decimal that reads back as this double (`0.1` gives `0.1`).
    /// Infinities and NaN carry over.
    public init(_ value: Double) {
        // Swift prints the shortest round-tripping form, at most 17 digits.
        try! self.init(string: value.isNaN ? "NaN" : String(value))
    }

    /// An integer literal: `let d: Decimal128 = 5`.
    public init(integerLiteral value: Int) {
        self.init(value)
    }

    /// A float literal: `let d: Decimal128 = 0.1` is exactly 0.1.
    public init(floatLiteral value: Double) {
        self.init(value)
    }

    /// A string literal: `let d: Decimal128 = "19.990"`. An invalid literal stops the program.
    public init(stringLiteral value: String) {
        do {
            try self.init(string: value)
        } catch {
            preconditionFailure("Invalid Decimal128 literal: \(error)")
        }
    }

    init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// The canonical text, keeping trailing zeros: `"1.0"`, `"-3E-7"`, `"NaN"`, `"-Infinity"`.
    public var stringValue: String {
        var raw = cValue
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(COFFER_DECIMAL128_STRING_SIZE)) { buffer in
            coffer_decimal128_to_string(&raw, buffer.baseAddress!)
            return String(cString: buffer.baseAddress!)
        }
    }

    /// Same as ``stringValue``.
    public var description: String { stringValue }

    /// True for NaN.
    public var isNaN: Bool { high & 0x7C00_0000_0000_0000 == 0x7C00_0000_0000_0000 }

    /// Equal by value: `1.0 == 1.00`, `-0 == 0`, and NaN equals NaN.
    public static func == (lhs: Decimal128, rhs: Decimal128) -> Bool {
        var a = coffer_value_decimal128(lhs.low, lhs.high)
        var b = coffer_value_decimal128(rhs.low, rhs.high)
        return coffer_value_equal(&a, &b) == 1
    }

    var cValue: coffer_decimal128 {
        var raw = coffer_decimal128()
        raw.w = (low, high)
        return raw
    }
}
