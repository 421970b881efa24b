// Translating a query string as Swift code writes it into the text the C core
// compiles: stored names, placeholders and arguments.

import Foundation

/// Turns a query string as Swift code writes it into the text the C core
/// compiles: property names as Swift declares them become the names they are
/// stored under (``Object/propertiesMapping()``), following links, SUBQUERY
/// variables and `@links`; NSPredicate-style placeholders (`%@`, and the
/// format specifiers `%d`, `%i`, `%ld`, `%lld`, `%u`, `%f`, `%lf`, `%s`, `%c`, ...
/// that NSPredicate accepts) become `$0`, `$1`, ... and `%K` inserts a key path
/// argument. Everything else, including
/// string literals, is copied unchanged for the C core to check.
struct QueryText {
    /// Words of the query language that are never property names here.
    private static let reserved: Set<String> = [
        "and", "or", "not", "in", "between", "beginswith", "endswith", "contains", "like",
        "truepredicate", "falsepredicate", "sort", "distinct", "limit", "subquery", "any", "some",
        "all", "none", "asc", "ascending", "desc", "descending", "true", "false", "null", "nil",
        "first", "last", "inf", "infinity", "nan", "oid", "uuid", "b64",
    ]

    private let bytes: [UInt8]
    private var position = 0
    private var output: [UInt8] = []
    /// For each byte of `output`, the byte of the original text it comes from.
    private var origins: [Int] = []
    private var tokenStart = 0
    private let root: ModelSchema
    private let given: [Any]
    private var nextPlaceholder = 0
    private(set) var arguments: [Any] = []
    private var usesNumberedArguments = false
    private var variables: [String: ModelSchema?] = [:]
    /// Set after SUBQUERY: the next key path is its collection.
    private var expectingSubqueryCollection = false
    /// The class of the collection of the SUBQUERY being read, for its variable.
    private var subqueryElement: ModelSchema??

    private init(_ text: String, root: ModelSchema, arguments: [Any]) {
        bytes = Array(text.utf8)
        self.root = root
        given = arguments
    }

    /// The C core's text for `text` over class `root`, and the arguments it
    /// uses in the order of its `$n`.
    /// - Throws: ``CofferError`` `.query` when `%@` placeholders and `$n`
    ///   arguments are mixed, when there are more placeholders than arguments,
    ///   or when a `%K` argument is not a string.
    static func translate(_ text: String, root: ModelSchema, arguments: [Any]) throws(CofferError) -> (text: String, arguments: [Any], offsets: OffsetMap) {
        var translator = QueryText(text, root: root, arguments: arguments)
        try translator.run()
        if translator.usesNumberedArguments && translator.nextPlaceholder > 0 {
            throw CofferError(.query, "query '\(text)' mixes %@ placeholders with $n arguments; use one style")
        }
        let arguments = translator.usesNumberedArguments ? arguments : translator.arguments
        let offsets = OffsetMap(translated: translator.output, original: translator.bytes, origins: translator.origins)
        return (String(decoding: translator.output, as: UTF8.self), arguments, offsets)
    }

    /// The C core's key path for a key path with Swift names, such as `owner.firstName`.
    static func storedKeyPath(_ keyPath: String, root: ModelSchema) -> String {
        var translator = QueryText(keyPath, root: root, arguments: [])
        while translator.position < translator.bytes.count {
            translator.keyPath(from: root)
            if translator.position < translator.bytes.count {
                translator.copy(1)
            }
        }
        return String(decoding: translator.output, as: UTF8.self)
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private func byte(at offset: Int) -> UInt8? {
        position + offset < bytes.count ? bytes[position + offset] : nil
    }

    private static func isIdentifierStart(_ c: UInt8?) -> Bool {
        guard let c else { return false }
        return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c == 95 || c >= 0x80
    }

    private static func isIdentifierPart(_ c: UInt8?) -> Bool {
        guard let c else { return false }
        return isIdentifierStart(c) || (c >= 48 && c <= 57)
    }

    private static func isDigit(_ c: UInt8?) -> Bool {
        guard let c else { return false }
        return c >= 48 && c <= 57
    }

    private mutating func copy(_ count: Int) {
        let end = min(position + count, bytes.count)
        output.append(contentsOf: bytes[position..<end])
        origins.append(contentsOf: position..<end)
        position += count
    }

    /// Writes `text` in place of the token that starts at `tokenStart`.
    private mutating func emit(_ text: String) {
        output.append(contentsOf: Array(text.utf8))
        origins.append(contentsOf: repeatElement(tokenStart, count: text.utf8.count))
    }

    private mutating func identifier() -> String {
        let start = position
        tokenStart = start
        while Self.isIdentifierPart(current) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private mutating func run() throws(CofferError) {
        while let c = current {
            switch c {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                stringLiteral()
            case UInt8(ascii: "%") where Self.placeholderLength(at: position, in: bytes) != nil:
                tokenStart = position
                position += Self.placeholderLength(at: position, in: bytes)!
                emit("$\(arguments.count)")
                arguments.append(try placeholderArgument())
            case UInt8(ascii: "%") where byte(at: 1) == UInt8(ascii: "K"):
                tokenStart = position
                position += 2
                let index = nextPlaceholder
                guard let keyPath = try placeholderArgument() as? String else {
                    throw CofferError(.query, "the %K placeholder takes a key path string, but argument \(index) is not a string")
                }
                emit(Self.storedKeyPath(keyPath, root: root))
            case UInt8(ascii: "$") where Self.isDigit(byte(at: 1)):
                usesNumberedArguments = true
                copy(1)
                while Self.isDigit(current) { copy(1) }
            case UInt8(ascii: "$") where Self.isIdentifierStart(byte(at: 1)):
                position += 1
                let name = identifier()
                if variables[name] == nil, let element = subqueryElement {
                    variables[name] = element
                    subqueryElement = nil
                }
                emit("$" + name)
                keyPathRest(in: variables[name] ?? nil)
            case UInt8(ascii: "@"):
                keyPath(from: root)
            case _ where Self.isDigit(c):
                // Numbers and the digits of dates: letters in them (1e5, 0x1F) are not names.
                while Self.isIdentifierPart(current) || current == UInt8(ascii: ".") { copy(1) }
            case _ where Self.isIdentifierStart(c):
                let start = position
                let word = identifier()
                if Self.reserved.contains(word.lowercased()) {
                    emit(word)
                    if word.lowercased() == "subquery" { expectingSubqueryCollection = true }
                } else {
                    position = start
                    keyPath(from: root)
                }
            default:
                copy(1)
            }
        }
    }

    /// Length modifiers of C format specifiers, longest first.
    private static let lengthModifiers: [[UInt8]] = ["hh", "ll", "h", "l", "q", "L", "z", "t", "j"].map { Array($0.utf8) }
    /// Conversions NSPredicate takes an argument for: `%@` objects, and the C
    /// format specifiers of numbers, characters and strings.
    private static let conversions = Set("@dDiouUxXfFeEgGaAcCsSp".utf8)

    /// The length of a value placeholder (`%@`, `%d`, `%lld`, `%lf`, ...) at
    /// `start`, or nil if none starts there (`%K` is a key path, not a value).
    static func placeholderLength(at start: Int, in bytes: [UInt8]) -> Int? {
        var end = start + 1
        if let modifier = lengthModifiers.first(where: { bytes[end...].starts(with: $0) }) {
            end += modifier.count
        }
        guard end < bytes.count, conversions.contains(bytes[end]) else { return nil }
        return end + 1 - start
    }

    private mutating func placeholderArgument() throws(CofferError) -> Any {
        guard nextPlaceholder < given.count else {
            throw CofferError(.query, "the query has more %@ placeholders than the \(given.count) argument\(given.count == 1 ? "" : "s") given")
        }
        defer { nextPlaceholder += 1 }
        return given[nextPlaceholder]
    }

    private mutating func stringLiteral() {
        let quote = current
        copy(1)
        while let c = current, c != quote {
            copy(c == UInt8(ascii: "\\") ? 2 : 1)
        }
        copy(1)
    }

    /// A key path starting here: a property of `schema` or `@links.Class.property`.
    private mutating func keyPath(from schema: ModelSchema) {
        if current == UInt8(ascii: "@") {
            keyPathRest(in: schema, startsWithOperation: true)
        } else {
            keyPathRest(in: translateProperty(in: schema))
        }
    }

    /// The rest of a key path, whose elements so far end at class `schema` (nil when unknown).
    private mutating func keyPathRest(in start: ModelSchema?, startsWithOperation: Bool = false) {
        var schema = start
        var atOperation = startsWithOperation
        while true {
            if atOperation {
                atOperation = false
                copy(1)  // @
                let operation = identifier()
                emit(operation)
                switch operation.lowercased() {
                case "links":
                    schema = linksTarget()
                case "sum", "avg", "min", "max", "values":
                    break  // the next property is one of the objects' own
                default:
                    schema = nil
                }
            } else if current == UInt8(ascii: "."), byte(at: 1) == UInt8(ascii: "@") {
                copy(1)
                atOperation = true
            } else if current == UInt8(ascii: "."), Self.isIdentifierStart(byte(at: 1)) {
                copy(1)
                if let known = schema {
                    schema = translateProperty(in: known)
                } else {
                    emit(identifier())
                }
            } else if current == UInt8(ascii: "[") {
                while let c = current, c != UInt8(ascii: "]") {
                    if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") { stringLiteral() } else { copy(1) }
                }
                copy(1)
            } else {
                break
            }
        }
        if expectingSubqueryCollection {
            expectingSubqueryCollection = false
            subqueryElement = .some(schema)
        }
    }

    /// After `@links`: `.Class.property` (the property translated with Class's names), or `.@count`.
    private mutating func linksTarget() -> ModelSchema? {
        guard current == UInt8(ascii: "."), Self.isIdentifierStart(byte(at: 1)) else { return nil }
        copy(1)
        let className = identifier()
        emit(className)
        let origin = ModelSchema.knownType(named: className).flatMap { try? ModelSchema.of($0) }
        guard current == UInt8(ascii: "."), Self.isIdentifierStart(byte(at: 1)) else { return origin }
        copy(1)
        if let origin {
            _ = translateProperty(in: origin)
        } else {
            emit(identifier())
        }
        return origin
    }

    /// Reads a property name, writes its stored name, and returns the class it
    /// leads to (for links and collections of objects), else nil.
    private mutating func translateProperty(in schema: ModelSchema) -> ModelSchema? {
        let name = identifier()
        guard let index = schema.index(ofProperty: name) ?? schema.properties.firstIndex(where: { $0.persistedName == name }) else {
            emit(name)  // a mistake the C core reports
            return nil
        }
        let property = schema.properties[index]
        emit(property.persistedName)
        return property.objectType.flatMap { try? ModelSchema.of($0) }
    }
}

/// Maps the offsets in the C core's messages about translated query text back
/// to the text the caller wrote.
struct OffsetMap {
    let translated: [UInt8]
    let original: [UInt8]
    let origins: [Int]

    /// `message` with its "at offset N" (1-based characters of the translated
    /// text) naming the same place in the original text.
    func remap(_ message: String) -> String {
        guard let range = message.range(of: #"at offset [0-9]+"#, options: .regularExpression),
              let offset = Int(message[range].dropFirst("at offset ".count)) else {
            return message
        }
        // The byte of the offset-th character in the translated text.
        var characters = 1
        var byte = 0
        while byte < translated.count && characters < offset {
            byte += 1
            if byte < translated.count && translated[byte] & 0xC0 != 0x80 { characters += 1 }
        }
        let source = byte < origins.count ? origins[byte] : original.count
        let originalCharacters = 1 + original[..<source].filter { $0 & 0xC0 != 0x80 }.count
        return message.replacingCharacters(in: range, with: "at offset \(originalCharacters)")
    }
}
