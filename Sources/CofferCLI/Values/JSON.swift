// A small JSON value with an exact reader and writer. Numbers keep their
// text, so that an int64, a float and a double each read back exactly as
// written (Foundation's reader goes through Double), and objects keep the
// order of their members, so that exported lines read in schema order.

/// A JSON value. `number` holds the number's text as written.
enum JSON {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSON])
    case object([(key: String, value: JSON)])

    static func int(_ value: Int64) -> JSON { .number(String(value)) }

    /// A finite double as its shortest text that reads back the same; NaN and
    /// infinities, which JSON has no numbers for, as strings.
    static func double(_ value: Double) -> JSON {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value < 0 ? "-Infinity" : "Infinity") }
        return .number(value.description)
    }

    static func float(_ value: Float) -> JSON {
        if value.isNaN { return .string("NaN") }
        if value.isInfinite { return .string(value < 0 ? "-Infinity" : "Infinity") }
        return .number(value.description)
    }

    /// The member `key` of an object, or nil.
    subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// A short name of the value's kind, for error messages.
    var kind: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

// MARK: - Writing

extension JSON {
    /// Compact JSON text on one line.
    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): JSON.writeString(s, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, member) in members.enumerated() {
                if i > 0 { out += "," }
                JSON.writeString(member.key, to: &out)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

// MARK: - Reading

/// A JSON syntax error at a 1-based character offset.
struct JSONSyntaxError: Error, CustomStringConvertible {
    let offset: Int
    let reason: String
    var description: String { "invalid JSON at character \(offset): \(reason)" }
}

extension JSON {
    /// Parses one JSON value that fills `text` (white space around it allowed).
    static func parse(_ text: String) throws(JSONSyntaxError) -> JSON {
        var reader = JSONReader(bytes: Array(text.utf8))
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.atEnd else { throw reader.error("unexpected text after the value") }
        return value
    }
}

private struct JSONReader {
    static let maxDepth = 512
    let bytes: [UInt8]
    var pos = 0

    var atEnd: Bool { pos >= bytes.count }

    func error(_ reason: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: pos + 1, reason: reason)
    }

    mutating func skipSpace() {
        while pos < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[pos]) { pos += 1 }
    }

    mutating func value(depth: Int) throws(JSONSyntaxError) -> JSON {
        guard depth < JSONReader.maxDepth else { throw error("nested too deeply") }
        guard pos < bytes.count else { throw error("expected a value, found the end") }
        switch bytes[pos] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("expected a value")
        }
    }

    mutating func literal(_ word: String) throws(JSONSyntaxError) {
        let w = Array(word.utf8)
        guard pos + w.count <= bytes.count, Array(bytes[pos..<pos + w.count]) == w else {
            throw error("expected a value")
        }
        pos += w.count
    }

    mutating func number() throws(JSONSyntaxError) -> JSON {
        let start = pos
        if bytes[pos] == UInt8(ascii: "-") { pos += 1 }
        func digits(_ r: inout JSONReader) -> Int {
            let s = r.pos
            while r.pos < r.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(r.bytes[r.pos]) { r.pos += 1 }
            return r.pos - s
        }
        guard digits(&self) > 0 else { throw error("expected a digit") }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
            pos += 1
            guard digits(&self) > 0 else { throw error("expected a digit after '.'") }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard digits(&self) > 0 else { throw error("expected a digit in the exponent") }
        }
        return .number(String(decoding: bytes[start..<pos], as: UTF8.self))
    }

    mutating func string() throws(JSONSyntaxError) -> String {
        pos += 1
        var out = [UInt8]()
        while true {
            guard pos < bytes.count else { throw error("unterminated string") }
            let c = bytes[pos]
            if c == UInt8(ascii: "\"") {
                pos += 1
                break
            }
            if c < 0x20 { throw error("control character in a string") }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                pos += 1
                continue
            }
            pos += 1
            guard pos < bytes.count else { throw error("unterminated string") }
            let e = bytes[pos]
            pos += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u") else {
                        throw error("unpaired surrogate")
                    }
                    pos += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(code) {
                    throw error("unpaired surrogate")
                }
                out.append(contentsOf: Array(String(Character(Unicode.Scalar(code)!)).utf8))
            default: throw error("unknown escape")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw error("string is not valid UTF-8") }
        return s
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard pos + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[pos..<pos + 4], as: UTF8.self), radix: 16) else {
            throw error("expected 4 hex digits after \\u")
        }
        pos += 4
        return v
    }

    mutating func array(depth: Int) throws(JSONSyntaxError) -> JSON {
        pos += 1
        var items = [JSON]()
        skipSpace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") {
            pos += 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard pos < bytes.count else { throw error("unterminated array") }
            if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
            if bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(items) }
            throw error("expected ',' or ']'")
        }
    }

    mutating func object(depth: Int) throws(JSONSyntaxError) -> JSON {
        pos += 1
        var members = [(key: String, value: JSON)]()
        skipSpace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") {
            pos += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try string()
            skipSpace()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else { throw error("expected ':'") }
            pos += 1
            skipSpace()
            members.append((key, try value(depth: depth + 1)))
            skipSpace()
            guard pos < bytes.count else { throw error("unterminated object") }
            if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
            if bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(members) }
            throw error("expected ',' or '}'")
        }
    }
}
