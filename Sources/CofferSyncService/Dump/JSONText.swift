// A small canonical JSON writer for the dump: object keys in the order given
// (callers sort them), numbers as Swift prints them shortest, non-finite
// floating-point values as strings, and no whitespace, so two dumps of equal
// states are equal byte for byte.

indirect enum JSONText {
    case null
    case bool(Bool)
    case int(Int64)
    case number(String)
    case string(String)
    case array([JSONText])
    case object([(String, JSONText)])

    static func double(_ value: Double) -> JSONText {
        value.isFinite ? .number("\(value)") : .string(value.isNaN ? "NaN" : (value < 0 ? "-Infinity" : "Infinity"))
    }

    static func float(_ value: Float) -> JSONText {
        value.isFinite ? .number("\(value)") : .string(value.isNaN ? "NaN" : (value < 0 ? "-Infinity" : "Infinity"))
    }

    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .number(let n): out += n
        case .string(let s): Self.quote(s, into: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                Self.quote(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
