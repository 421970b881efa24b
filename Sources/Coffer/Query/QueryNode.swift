// The tree a typed Query builds (paths, comparisons, logic) and its rendering
// into query text for the C core.

/// One element of a key path in the query language.
enum PathElement: Equatable {
    /// A property, by its stored name.
    case property(String)
    /// `@count`, `@min`, `@max`, `@sum`, `@avg`, `@keys`, `@values`.
    case operation(String)
    /// `['key']`: one entry of a map.
    case mapKey(String)
    /// The variable of the enclosing SUBQUERY.
    case variable
}

/// A key path of a typed query, with where its last collection ends (where
/// an aggregate such as `@max` goes: `dogs.@max.age`).
struct QueryPath: Equatable {
    var elements: [PathElement] = []
    var collectionEnd: Int?

    func appending(_ property: PropertySchema) -> QueryPath {
        var path = self
        path.elements.append(.property(property.persistedName))
        if property.collection != .none || property.kind == .linkingObjects {
            path.collectionEnd = path.elements.count
        }
        return path
    }

    /// `dogs.age` with `@max` → `dogs.@max.age`; `scores` → `scores.@max`.
    func aggregated(_ operation: String) -> QueryPath {
        guard let end = collectionEnd else {
            fatalError("Coffer: \(operation) needs a collection in the key path \(text(variable: "$x"))")
        }
        var path = self
        path.elements.insert(.operation(operation), at: end)
        path.collectionEnd = nil
        return path
    }

    /// Appends an operation that ends a collection: `@count`, `@keys`, `@values`.
    func appending(operation: String, keepsCollection: Bool) -> QueryPath {
        var path = self
        path.elements.append(.operation(operation))
        path.collectionEnd = keepsCollection ? path.elements.count : nil
        return path
    }

    func appending(mapKey key: String) -> QueryPath {
        var path = self
        path.elements.append(.mapKey(key))
        path.collectionEnd = nil
        return path
    }

    func text(variable: String) -> String {
        var text = ""
        for element in elements {
            switch element {
            case .property(let name):
                text += text.isEmpty ? name : "." + name
            case .operation(let name):
                text += text.isEmpty ? name : "." + name
            case .mapKey(let key):
                text += "['" + QueryNode.escaped(key) + "']"
            case .variable:
                text += variable
            }
        }
        return text
    }
}

/// The comparison operators of the query language.
enum ComparisonOperator: String {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case `in` = "IN"
}

/// The tree a typed ``Query`` builds, turned into query language text with
/// `$n` arguments by ``QueryText``.
indirect enum QueryNode {
    case path(QueryPath)
    case constant(StoredValue)
    case comparison(ComparisonOperator, QueryNode, QueryNode, StringOptions)
    case between(QueryNode, StoredValue, StoredValue)
    case and(QueryNode, QueryNode)
    case or(QueryNode, QueryNode)
    case not(QueryNode)
    /// `SUBQUERY(collection, $x, predicate).@count`; the predicate's paths start with `.variable`.
    case subqueryCount(QueryPath, QueryNode)

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    }

    var path: QueryPath {
        guard case .path(let path) = self else {
            fatalError("Coffer: a query applies a key path to something that is not a property")
        }
        return path
    }

    /// `($0.dogs.age > 3).count`: the predicate over the one collection it goes
    /// through, as a SUBQUERY counting the objects of that collection that match.
    func subqueryCount() -> QueryNode {
        var prefixes: [[PathElement]] = []
        collectPrefixes(into: &prefixes)
        guard let prefix = prefixes.first, prefixes.allSatisfy({ $0 == prefix }) else {
            fatalError("Coffer: the predicate of a subquery `(...).count` must go through exactly one collection, such as $0.dogs")
        }
        let collection = QueryPath(elements: prefix, collectionEnd: prefix.count)
        return .subqueryCount(collection, relative(to: prefix))
    }

    private func collectPrefixes(into prefixes: inout [[PathElement]]) {
        switch self {
        case .path(let path):
            if let end = path.collectionEnd { prefixes.append(Array(path.elements[..<end])) }
        case .constant, .subqueryCount:
            break
        case .comparison(_, let l, let r, _), .and(let l, let r), .or(let l, let r):
            l.collectPrefixes(into: &prefixes)
            r.collectPrefixes(into: &prefixes)
        case .between(let operand, _, _), .not(let operand):
            operand.collectPrefixes(into: &prefixes)
        }
    }

    private func relative(to prefix: [PathElement]) -> QueryNode {
        switch self {
        case .path(let path):
            guard path.elements.starts(with: prefix) else { return self }
            var relative = QueryPath(elements: [.variable] + path.elements.dropFirst(prefix.count))
            if let end = path.collectionEnd, end > prefix.count {
                relative.collectionEnd = end - prefix.count + 1
            }
            return .path(relative)
        case .constant, .subqueryCount:
            return self
        case .comparison(let op, let l, let r, let options):
            return .comparison(op, l.relative(to: prefix), r.relative(to: prefix), options)
        case .between(let operand, let low, let high):
            return .between(operand.relative(to: prefix), low, high)
        case .and(let l, let r):
            return .and(l.relative(to: prefix), r.relative(to: prefix))
        case .or(let l, let r):
            return .or(l.relative(to: prefix), r.relative(to: prefix))
        case .not(let operand):
            return .not(operand.relative(to: prefix))
        }
    }
}

/// Writes a ``QueryNode`` as query language text, collecting its constants as
/// arguments `$0`, `$1`, ...
struct QueryWriter {
    private(set) var text = ""
    private(set) var arguments: [StoredValue] = []
    private var depth = 0

    static func write(_ predicate: QueryNode) -> (text: String, arguments: [StoredValue]) {
        var writer = QueryWriter()
        writer.predicate(predicate)
        return (writer.text, writer.arguments)
    }

    private var variable: String { "$x\(depth)" }

    private mutating func argument(_ value: StoredValue) {
        text += "$\(arguments.count)"
        arguments.append(value)
    }

    private mutating func predicate(_ node: QueryNode) {
        switch node {
        case .path(let path):
            // A bool property on its own: `where { $0.isDone }`.
            text += path.text(variable: variable) + " == "
            argument(.bool(true))
        case .constant(let value):
            if case .bool(let flag) = value {
                text += flag ? "TRUEPREDICATE" : "FALSEPREDICATE"
            } else {
                fatalError("Coffer: a query uses \(value.summary) as a predicate")
            }
        case .comparison(let op, let lhs, let rhs, let options):
            operand(lhs)
            text += " \(op.rawValue)\(options.modifier) "
            operand(rhs)
        case .between(let operand, let low, let high):
            self.operand(operand)
            text += " BETWEEN {"
            argument(low)
            text += ", "
            argument(high)
            text += "}"
        case .and(let lhs, let rhs), .or(let lhs, let rhs):
            text += "("
            predicate(lhs)
            if case .and = node { text += " AND " } else { text += " OR " }
            predicate(rhs)
            text += ")"
        case .not(let operand):
            text += "NOT ("
            predicate(operand)
            text += ")"
        case .subqueryCount:
            fatalError("Coffer: a subquery count `(...).count` must be compared, as in `(...).count > 0`")
        }
    }

    private mutating func operand(_ node: QueryNode) {
        switch node {
        case .path(let path):
            text += path.text(variable: variable)
        case .constant(let value):
            argument(value)
        case .subqueryCount(let collection, let where_):
            text += "SUBQUERY(\(collection.text(variable: variable)), "
            depth += 1
            text += variable + ", "
            predicate(where_)
            depth -= 1
            text += ").@count"
        default:
            fatalError("Coffer: a query compares a predicate as if it were a value")
        }
    }
}
