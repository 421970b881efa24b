// Turns a QueryPredicate into a SQL condition about one object of
// coffer_sync_objects, evaluated by PostgreSQL over the stored property rows:
// equality compares the wire-encoded bytes (`value`), ordered comparisons the
// typed columns `num` and `txt` that the service fills on write (schema
// version 3), each under an index of coffer_sync_properties. The indexes on
// `value` and `txt` keep a bounded prefix (Store/PropertyIndexes), so each
// test compares the prefix first, for the index, then the whole value.
//
// A property the object has no row for is null. Every atom is an EXISTS (or
// NOT EXISTS), which is never SQL NULL, so NOT is plain negation.
import CofferSyncProtocol
import PostgresNIO

/// The values a SQL text binds, after the caller's own.
struct SQLBinder {
    private(set) var bindings: PostgresBindings

    /// Continues `bindings`: the first placeholder is `$(bindings.count + 1)`.
    init(continuing bindings: PostgresBindings = PostgresBindings()) { self.bindings = bindings }

    /// Appends `value`; its placeholder.
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        bindings.append(value)
        return "$\(bindings.count)"
    }
}

struct SQLTranslator {
    /// Who `%user.id` and `%user.roles` stand for.
    let user: QueryUser

    /// A SQL condition that holds when the object whose coffer_sync_objects
    /// row is `object` (an alias or table name in the caller's statement)
    /// satisfies `predicate`.
    func condition(_ predicate: QueryPredicate, object: String, binder: inout SQLBinder) -> String {
        switch predicate {
        case .constant(let value):
            return value ? "TRUE" : "FALSE"
        case .not(let inner):
            return "(NOT \(condition(inner, object: object, binder: &binder)))"
        case .and(let a, let b):
            return "(\(condition(a, object: object, binder: &binder)) AND \(condition(b, object: object, binder: &binder)))"
        case .or(let a, let b):
            return "(\(condition(a, object: object, binder: &binder)) OR \(condition(b, object: object, binder: &binder)))"
        case .userHasRole(let role):
            return user.roles.contains(role) ? "TRUE" : "FALSE"
        case .compare(let property, let op, let operand):
            return comparison(property, op, resolve(operand), object: object, binder: &binder)
        case .isIn(let property, let operands):
            let values = operands.flatMap { operand -> [SyncValue] in
                operand == .userRoles ? user.roles.sorted().map { .string($0) } : [resolve(operand)]
            }
            return membership(property, values, object: object, binder: &binder)
        }
    }

    /// A SQL condition that holds when the object is live (docs/SYNC.md, "Merge
    /// rules"): a predicate speaks of the rows an object has, and a deleted
    /// object has none, so callers select live objects with this.
    static func isLive(object: String) -> String {
        "(\(object).created IS NOT NULL AND (\(object).tombstone IS NULL OR \(object).tombstone < \(object).created))"
    }

    private func resolve(_ operand: QueryOperand) -> SyncValue {
        switch operand {
        case .value(let value): value
        case .userID: .string(user.id)
        case .userRoles: .null  // the parser admits %user.roles only in IN
        }
    }

    /// EXISTS a row of `property` for the object on which `test` (about the
    /// row `rule_p`) holds.
    private func exists(_ property: String, _ test: String, object: String, binder: inout SQLBinder) -> String {
        let name = binder.bind(property)
        return """
            EXISTS (SELECT 1 FROM coffer_sync_properties rule_p \
            WHERE rule_p.partition = \(object).partition AND rule_p.class = \(object).class \
            AND rule_p.pk = \(object).pk AND rule_p.property = \(name) AND \(test))
            """
    }

    private static let nullEncoding = SyncValue.null.encoded

    private func comparison(_ property: String, _ op: QueryOperator, _ value: SyncValue,
                            object: String, binder: inout SQLBinder) -> String {
        if value == .null {
            let notNull = exists(property, "rule_p.value <> \(binder.bind(Self.nullEncoding.bytea))",
                                 object: object, binder: &binder)
            return op == .equal ? "(NOT \(notNull))" : notNull
        }
        switch op {
        case .equal, .notEqual:
            let equal = exists(property, Self.valueIn(Self.encodings(value), binder: &binder),
                               object: object, binder: &binder)
            return op == .equal ? equal : "(NOT \(equal))"
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            // The parser admits only numbers and strings here.
            guard case .string(let text) = value else {
                let bound = binder.bind(TypedColumns.number(value) ?? 0)
                return exists(property, "rule_p.num \(op.rawValue) \(bound)", object: object, binder: &binder)
            }
            // Cutting both sides to the same prefix keeps their order or
            // makes them equal, so the prefix test never drops a match.
            let prefixOp = op == .less || op == .lessOrEqual ? "<=" : ">="
            let test = "\(Self.textPrefix) \(prefixOp) \(binder.bind(Self.indexedPrefix(text))) "
                + "AND rule_p.txt \(op.rawValue) \(binder.bind(text))"
            return exists(property, test, object: object, binder: &binder)
        case .beginsWith, .endsWith, .contains:
            guard case .string(let text) = value else { return "FALSE" }
            let escaped = Self.likeEscaped(text)
            let pattern = op == .beginsWith ? escaped + "%" : op == .endsWith ? "%" + escaped : "%" + escaped + "%"
            var test = "rule_p.txt LIKE \(binder.bind(pattern))"
            if op == .beginsWith {
                let prefix = Self.indexedPrefix(text)
                test = (prefix == text
                    ? "\(Self.textPrefix) LIKE \(binder.bind(pattern))"
                    : "\(Self.textPrefix) = \(binder.bind(prefix))") + " AND " + test
            }
            return exists(property, test, object: object, binder: &binder)
        }
    }

    private func membership(_ property: String, _ values: [SyncValue], object: String,
                            binder: inout SQLBinder) -> String {
        var alternatives: [String] = []
        let present = values.filter { $0 != .null }
        if !present.isEmpty {
            let encodings = present.flatMap(Self.encodings)
            alternatives.append(exists(property, Self.valueIn(encodings, binder: &binder),
                                       object: object, binder: &binder))
        }
        if present.count < values.count {
            alternatives.append(comparison(property, .equal, .null, object: object, binder: &binder))
        }
        return alternatives.isEmpty ? "FALSE" : "(" + alternatives.joined(separator: " OR ") + ")"
    }

    /// The indexed prefix of `rule_p.txt` (coffer_sync_properties_by_txt).
    private static let textPrefix = PropertyIndexes.textPrefix("rule_p.txt")

    /// `text` cut as the index cuts it: its first characters (code points).
    static func indexedPrefix(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > PropertyIndexes.textCharacters else { return text }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars.prefix(PropertyIndexes.textCharacters))
        return String(view)
    }

    /// A test that `rule_p.value` is one of `encodings`: their prefixes
    /// through coffer_sync_properties_by_value, then the whole values.
    private static func valueIn(_ encodings: [[UInt8]], binder: inout SQLBinder) -> String {
        let prefixes = Set(encodings.map { Array($0.prefix(PropertyIndexes.valueBytes)) })
            .sorted { $0.lexicographicallyPrecedes($1) }
        return "\(PropertyIndexes.valuePrefix("rule_p.value")) = ANY(\(binder.bind(prefixes.map(\.bytea)))) "
            + "AND rule_p.value = ANY(\(binder.bind(encodings.map(\.bytea))))"
    }

    /// Every encoding of a value equal to `value`: numbers of any type compare
    /// by value (docs/QUERY.md), so 2 also matches the double 2.0 and the float 2.0.
    static func encodings(_ value: SyncValue) -> [[UInt8]] {
        guard let number = TypedColumns.number(value) else { return [value.encoded] }
        var result: Set<[UInt8]> = [value.encoded]
        for candidate in number == 0 ? [0.0, -0.0] : [number] {
            result.insert(SyncValue.of(candidate).encoded)
            if let float = Float(exactly: candidate) { result.insert(SyncValue.of(float).encoded) }
            if let int = Int64(exactly: candidate) { result.insert(SyncValue.int(int).encoded) }
        }
        return result.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// `text` with LIKE's wildcards and its escape character escaped.
    static func likeEscaped(_ text: String) -> String {
        var result = ""
        for c in text {
            if c == "\\" || c == "%" || c == "_" { result.append("\\") }
            result.append(c)
        }
        return result
    }
}
