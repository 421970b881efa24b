// Splits a query text into tokens, each with its offset so that errors can
// point at the part they are about.

struct QueryToken: Equatable {
    enum Kind: Equatable {
        /// A property name or a keyword (AND, IN, TRUEPREDICATE, true, ...).
        case word(String)
        /// `%user.id`, `%user.roles` (the text after `%`).
        case substitution(String)
        case string(String)
        case number(String)
        /// `==`, `<=`, `(`, `{`, `,`, `[c]`, ...
        case symbol(String)
        /// `oid(...)` or `uuid(...)`: the function name and its raw argument.
        case constructor(String, String)
        case end
    }

    let kind: Kind
    let offset: Int
}

struct QueryLexer {
    private let text: [Character]
    private var position = 0

    init(_ text: String) { self.text = Array(text) }

    static func tokens(of text: String) throws -> [QueryToken] {
        var lexer = QueryLexer(text)
        var tokens: [QueryToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private static let symbols = ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||",
                                  "=", "<", ">", "!", "(", ")", "{", "}", ","]

    private mutating func next() throws -> QueryToken {
        while position < text.count, text[position].isWhitespace { position += 1 }
        let start = position
        guard position < text.count else { return QueryToken(kind: .end, offset: start) }
        let c = text[position]
        if c == "'" || c == "\"" {
            return QueryToken(kind: .string(try quoted(c)), offset: start)
        }
        if c.isNumber || (c == "-" && position + 1 < text.count && text[position + 1].isNumber) {
            position += 1
            while position < text.count, text[position].isNumber || text[position].isLetter
                    || text[position] == "." || ((text[position] == "-" || text[position] == "+")
                                                  && "eE".contains(text[position - 1])) {
                position += 1
            }
            return QueryToken(kind: .number(String(text[start..<position])), offset: start)
        }
        if c == "%" {
            position += 1
            let name = word()
            guard !name.isEmpty else { throw QueryError("a '%' not followed by a name at offset \(start)") }
            return QueryToken(kind: .substitution(name), offset: start)
        }
        if c == "[" {
            guard let close = text[position...].firstIndex(of: "]") else {
                throw QueryError("an unclosed '[' at offset \(start)")
            }
            position = close + 1
            return QueryToken(kind: .symbol(String(text[start..<position])), offset: start)
        }
        if c.isLetter || c == "_" || c == "$" || c == "@" {
            let name = word()
            if (name.lowercased() == "oid" || name.lowercased() == "uuid"),
               position < text.count, text[position] == "(" {
                guard let close = text[position...].firstIndex(of: ")") else {
                    throw QueryError("an unclosed '\(name)(' at offset \(start)")
                }
                let argument = String(text[(position + 1)..<close])
                position = close + 1
                return QueryToken(kind: .constructor(name.lowercased(), argument), offset: start)
            }
            return QueryToken(kind: .word(name), offset: start)
        }
        for symbol in Self.symbols where text[position...].starts(with: symbol) {
            position += symbol.count
            return QueryToken(kind: .symbol(symbol), offset: start)
        }
        throw QueryError("an unexpected '\(c)' at offset \(start)")
    }

    /// A name: letters, digits, '_', '$', '@' and '.' (a key path, refused later).
    private mutating func word() -> String {
        let start = position
        while position < text.count,
              text[position].isLetter || text[position].isNumber || "_$@.".contains(text[position]) {
            position += 1
        }
        return String(text[start..<position])
    }

    private mutating func quoted(_ quote: Character) throws -> String {
        let start = position
        position += 1
        var result = ""
        while position < text.count {
            let c = text[position]
            position += 1
            if c == quote { return result }
            guard c == "\\" else { result.append(c); continue }
            guard position < text.count else { break }
            let escaped = text[position]
            position += 1
            switch escaped {
            case "\\", "'", "\"", "/": result.append(escaped)
            case "n": result.append("\n")
            case "r": result.append("\r")
            case "t": result.append("\t")
            case "b": result.append("\u{8}")
            case "f": result.append("\u{c}")
            case "v": result.append("\u{b}")
            case "0": result.append("\u{0}")
            default: throw QueryError("an unknown escape '\\\(escaped)' in the string at offset \(start)")
            }
        }
        throw QueryError("an unterminated string at offset \(start)")
    }
}
