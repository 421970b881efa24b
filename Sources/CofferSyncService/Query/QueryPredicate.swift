// The predicates of the subset of the query language (docs/QUERY.md) that the
// service evaluates in PostgreSQL: comparisons of an object's top-level
// properties with literals or the user's substitutions, joined by AND, OR
// and NOT. Parsed by QueryParser, turned into SQL by SQLTranslator.
import CofferSyncProtocol

indirect enum QueryPredicate: Equatable, Sendable {
    case constant(Bool)
    case not(QueryPredicate)
    case and(QueryPredicate, QueryPredicate)
    case or(QueryPredicate, QueryPredicate)
    /// `property OP operand`.
    case compare(property: String, QueryOperator, QueryOperand)
    /// `property IN {operands}` (or `IN %user.roles`).
    case isIn(property: String, [QueryOperand])
    /// `'role' IN %user.roles`: whether the user has the role.
    case userHasRole(String)
}

enum QueryOperator: String, Equatable, Sendable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"

    /// The operator that holds with its operands swapped (`5 < a` is `a > 5`);
    /// nil for the string operators, whose sides are not interchangeable.
    var swapped: QueryOperator? {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        case .beginsWith, .endsWith, .contains: nil
        }
    }
}

/// The right-hand side of a comparison.
enum QueryOperand: Equatable, Sendable {
    case value(SyncValue)
    /// `%user.id`: the id of the user the predicate is evaluated for.
    case userID
    /// `%user.roles`: the user's roles (only as the list of `IN`).
    case userRoles
}

/// The user a predicate is evaluated for: what `%user.id` and `%user.roles` stand for.
struct QueryUser: Equatable, Sendable {
    var id: String
    var roles: Set<String>
}

/// A query text outside the supported subset, or malformed; the message names the part.
struct QueryError: Error, Equatable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
