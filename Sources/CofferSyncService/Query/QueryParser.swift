// Parses the subset of the query language the service evaluates: comparisons
// of top-level properties (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH,
// CONTAINS, IN {...}) with literals, %user.id and %user.roles; AND, OR, NOT,
// parentheses, TRUEPREDICATE and FALSEPREDICATE. NOT binds tighter than AND,
// AND tighter than OR, as in docs/QUERY.md. Anything else is a QueryError
// naming the part and its offset.
import CofferSyncProtocol
import Foundation

struct QueryParser {
    static let supported = "==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, IN {...}, AND, OR, NOT, "
        + "parentheses, TRUEPREDICATE and FALSEPREDICATE over top-level properties"

    private let tokens: [QueryToken]
    private var index = 0

    static func parse(_ text: String) throws -> QueryPredicate {
        var parser = QueryParser(tokens: try QueryLexer.tokens(of: text))
        let predicate = try parser.disjunction()
        guard parser.current.kind == .end else {
            throw parser.unsupported(parser.current, "after a complete predicate")
        }
        return predicate
    }

    private init(tokens: [QueryToken]) { self.tokens = tokens }

    private var current: QueryToken { tokens[index] }

    private mutating func advance() -> QueryToken {
        defer { if index < tokens.count - 1 { index += 1 } }
        return tokens[index]
    }

    private func isKeyword(_ token: QueryToken, _ keyword: String) -> Bool {
        if case .word(let word) = token.kind { return word.uppercased() == keyword }
        return false
    }

    private func isSymbol(_ token: QueryToken, _ symbols: String...) -> Bool {
        if case .symbol(let symbol) = token.kind { return symbols.contains(symbol) }
        return false
    }

    private mutating func disjunction() throws -> QueryPredicate {
        try chain("OR", "||", QueryPredicate.or) { try $0.conjunction() }
    }

    private mutating func conjunction() throws -> QueryPredicate {
        try chain("AND", "&&", QueryPredicate.and) { try $0.negation() }
    }

    /// `operand (KEYWORD operand)*`, joined from the left.
    private mutating func chain(_ keyword: String, _ symbol: String,
                                _ join: (QueryPredicate, QueryPredicate) -> QueryPredicate,
                                _ operand: (inout QueryParser) throws -> QueryPredicate) throws -> QueryPredicate {
        var result = try operand(&self)
        while isKeyword(current, keyword) || isSymbol(current, symbol) {
            _ = advance()
            result = join(result, try operand(&self))
        }
        return result
    }

    private mutating func negation() throws -> QueryPredicate {
        if isKeyword(current, "NOT") || isSymbol(current, "!") {
            _ = advance()
            return .not(try negation())
        }
        return try primary()
    }

    private mutating func primary() throws -> QueryPredicate {
        if isSymbol(current, "(") {
            let open = advance()
            let inner = try disjunction()
            guard isSymbol(current, ")") else {
                throw QueryError("the '(' at offset \(open.offset) is not closed (found \(describe(current)))")
            }
            _ = advance()
            return inner
        }
        if isKeyword(current, "TRUEPREDICATE") { _ = advance(); return .constant(true) }
        if isKeyword(current, "FALSEPREDICATE") { _ = advance(); return .constant(false) }
        return try comparison()
    }

    private enum Side: Equatable {
        case property(String)
        case operand(QueryOperand)
    }

    private mutating func comparison() throws -> QueryPredicate {
        let leftToken = current
        let left = try side()
        let opToken = advance()
        if isKeyword(opToken, "IN") {
            let list = try inList()
            switch left {
            case .property(let name):
                return .isIn(property: name, list)
            case .operand(.value(.string(let role))) where list == [.userRoles]:
                return .userHasRole(role)
            case .operand:
                throw QueryError("'IN' at offset \(opToken.offset) needs a property on its left, or a string and %user.roles")
            }
        }
        let op = try comparisonOperator(opToken)
        let rightToken = current
        let right = try side()
        switch (left, right) {
        case (.property(let name), .operand(let operand)):
            try Self.check(op, operand, at: opToken.offset)
            return .compare(property: name, op, operand)
        case (.operand(let operand), .property(let name)):
            guard let swapped = op.swapped else {
                throw QueryError("'\(op.rawValue)' at offset \(opToken.offset) needs the property on its left")
            }
            try Self.check(swapped, operand, at: opToken.offset)
            return .compare(property: name, swapped, operand)
        case (.property, .property):
            throw QueryError("comparing two properties (at offset \(leftToken.offset)) is not supported: compare a property with a value")
        case (.operand, .operand):
            throw QueryError("the comparison at offset \(leftToken.offset) names no property (its right side at offset \(rightToken.offset))")
        }
    }

    /// Refuses the comparisons that have no meaning here: an ordered one with
    /// null or with a value that is neither a number nor a string, a string
    /// operator with a value that is not a string, %user.roles outside IN.
    private static func check(_ op: QueryOperator, _ operand: QueryOperand, at offset: Int) throws {
        let value: SyncValue
        switch operand {
        case .userRoles:
            throw QueryError("'%user.roles' (in the comparison at offset \(offset)) is a list: use it as the right side of IN")
        case .userID: value = .string("")
        case .value(let v): value = v
        }
        switch (op, value) {
        case (.equal, _), (.notEqual, _): return
        case (.beginsWith, .string), (.endsWith, .string), (.contains, .string): return
        case (.beginsWith, _), (.endsWith, _), (.contains, _):
            throw QueryError("'\(op.rawValue)' at offset \(offset) needs a string on its right")
        case (_, .int), (_, .double), (_, .string): return
        default:
            throw QueryError("'\(op.rawValue)' at offset \(offset) orders only numbers and strings")
        }
    }

    private mutating func comparisonOperator(_ token: QueryToken) throws -> QueryOperator {
        var op: QueryOperator
        switch token.kind {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        case .word(let w) where w.uppercased() == "BEGINSWITH": op = .beginsWith
        case .word(let w) where w.uppercased() == "ENDSWITH": op = .endsWith
        case .word(let w) where w.uppercased() == "CONTAINS": op = .contains
        default: throw unsupported(token, "where a comparison operator was expected")
        }
        if case .symbol(let modifier) = current.kind, modifier.hasPrefix("[") {
            throw QueryError("the modifier '\(modifier)' at offset \(current.offset) is not supported: comparisons are case and diacritic sensitive")
        }
        if case .word(let w) = current.kind, ["ANY", "ALL", "NONE"].contains(w.uppercased()) {
            throw unsupported(current, "")
        }
        return op
    }

    private mutating func inList() throws -> [QueryOperand] {
        let open = advance()
        if case .substitution("user.roles") = open.kind { return [.userRoles] }
        guard isSymbol(open, "{") else { throw unsupported(open, "after 'IN' (a list {...} or %user.roles)") }
        var list: [QueryOperand] = []
        if isSymbol(current, "}") { _ = advance(); return list }
        while true {
            let token = current
            guard case .operand(let operand) = try side(), operand != .userRoles else {
                throw QueryError("the list of 'IN' holds values, not \(describe(token)) at offset \(token.offset)")
            }
            list.append(operand)
            let separator = advance()
            if isSymbol(separator, "}") { return list }
            guard isSymbol(separator, ",") else { throw unsupported(separator, "in the list of 'IN'") }
        }
    }

    private mutating func side() throws -> Side {
        let token = advance()
        switch token.kind {
        case .string(let text):
            return .operand(.value(.string(text)))
        case .number(let text):
            return .operand(.value(try number(text, at: token.offset)))
        case .substitution("user.id"):
            return .operand(.userID)
        case .substitution("user.roles"):
            return .operand(.userRoles)
        case .substitution(let name):
            throw QueryError("the substitution '%\(name)' at offset \(token.offset) is not supported (only %user.id and %user.roles)")
        case .constructor(let name, let argument):
            return .operand(.value(try constructed(name, argument, at: token.offset)))
        case .word(let word):
            switch word.lowercased() {
            case "true": return .operand(.value(.bool(true)))
            case "false": return .operand(.value(.bool(false)))
            case "null", "nil": return .operand(.value(.null))
            default: break
            }
            if Self.keywords.contains(word.uppercased()) || word.hasPrefix("$") || word.hasPrefix("@") {
                throw unsupported(token, "")
            }
            if word.contains(".") {
                throw QueryError("the key path '\(word)' at offset \(token.offset) is not supported: only top-level properties")
            }
            return .property(word)
        default:
            throw unsupported(token, "where a property or a value was expected")
        }
    }

    private static let keywords: Set<String> = [
        "AND", "OR", "NOT", "IN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "BETWEEN", "ANY", "ALL",
        "NONE", "SOME", "SUBQUERY", "SORT", "DISTINCT", "LIMIT", "TRUEPREDICATE", "FALSEPREDICATE",
    ]

    private func number(_ text: String, at offset: Int) throws -> SyncValue {
        if let int = Int64(text) { return .int(int) }
        let lower = text.lowercased()
        if lower.hasPrefix("0x") || lower.hasPrefix("-0x") {
            let negative = lower.hasPrefix("-")
            if let magnitude = Int64(lower.dropFirst(negative ? 3 : 2), radix: 16) {
                return .int(negative ? -magnitude : magnitude)
            }
        }
        if let double = Double(text), double.isFinite { return .of(double) }
        throw QueryError("'\(text)' at offset \(offset) is not a number this service supports")
    }

    private func constructed(_ name: String, _ argument: String, at offset: Int) throws -> SyncValue {
        let hex = argument.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "-", with: "")
        let bytes = stride(from: 0, to: hex.count, by: 2).compactMap { i -> UInt8? in
            let start = hex.index(hex.startIndex, offsetBy: i)
            return UInt8(hex[start..<hex.index(start, offsetBy: min(2, hex.count - i))], radix: 16)
        }
        let length = name == "oid" ? 12 : 16
        guard hex.count == length * 2, bytes.count == length else {
            throw QueryError("'\(name)(\(argument))' at offset \(offset) is not \(name == "oid" ? "an objectId (24 hex digits)" : "a uuid (32 hex digits)")")
        }
        return name == "oid" ? .objectId(bytes) : .uuid(bytes)
    }

    private func describe(_ token: QueryToken) -> String {
        switch token.kind {
        case .word(let w): "'\(w)'"
        case .substitution(let s): "'%\(s)'"
        case .string(let s): "the string '\(s)'"
        case .number(let n): "'\(n)'"
        case .symbol(let s): "'\(s)'"
        case .constructor(let name, let argument): "'\(name)(\(argument))'"
        case .end: "the end of the text"
        }
    }

    private func unsupported(_ token: QueryToken, _ context: String) -> QueryError {
        let place = context.isEmpty ? "" : " \(context)"
        if token.kind == .end { return QueryError("the text ends at offset \(token.offset)\(place)") }
        return QueryError("\(describe(token)) at offset \(token.offset) is not supported\(place): the service supports \(Self.supported)")
    }
}
