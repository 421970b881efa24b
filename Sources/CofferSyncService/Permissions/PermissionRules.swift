// Per-class read and write rules, as Realm's Device Sync permissions: each
// rule is `true`, `false`, a list of roles (the user needs one of them) or a
// predicate of the query language's subset (Query/QueryParser) over the
// object's properties, with %user.id and %user.roles. Every rule becomes a
// QueryPredicate for a given user, which Query/SQLTranslator evaluates in
// PostgreSQL.

/// One rule.
enum PermissionRule: Equatable, Sendable {
    case always(Bool)
    case roles(Set<String>)
    /// A predicate and the text it was parsed from (for messages).
    case predicate(QueryPredicate, text: String)

    /// The predicate an object must satisfy for `user`.
    func predicate(for user: QueryUser) -> QueryPredicate {
        switch self {
        case .always(let allowed): .constant(allowed)
        case .roles(let roles): .constant(!roles.isDisjoint(with: user.roles))
        case .predicate(let predicate, _): predicate
        }
    }

    /// How the rule reads in the configuration, for messages.
    var text: String {
        switch self {
        case .always(let allowed): "\(allowed)"
        case .roles(let roles): "roles " + roles.sorted().joined(separator: ", ")
        case .predicate(_, let text): text
        }
    }

    /// Parses a rule's JSON value; `key` names it in errors.
    static func parse(_ value: Any, key: String) throws -> PermissionRule {
        if let roles = value as? [Any] {
            let names = roles.compactMap { $0 as? String }
            guard !names.isEmpty, names.count == roles.count, !names.contains("") else {
                throw ConfigurationError("'\(key)': a list of roles must hold one or more non-empty strings")
            }
            return .roles(Set(names))
        }
        if let text = value as? String {
            do {
                return .predicate(try QueryParser.parse(text), text: text)
            } catch let error as QueryError {
                throw ConfigurationError("'\(key)': the rule \"\(text)\" is not valid: \(error)")
            }
        }
        if let allowed = value as? Bool { return .always(allowed) }
        throw ConfigurationError("'\(key)' must be true, false, a list of roles or a query string")
    }
}

/// A class's pair of rules.
struct ClassRules: Equatable, Sendable {
    var read: PermissionRule
    var write: PermissionRule

    /// What `user` may read: the read rule or the write rule, since a user
    /// may read what it may write, as in Realm (docs/SYNC.md, "Security model").
    func readPredicate(for user: QueryUser) -> QueryPredicate {
        switch (read.predicate(for: user), write.predicate(for: user)) {
        case (.constant(true), _), (_, .constant(true)): .constant(true)
        case (.constant(false), let other), (let other, .constant(false)): other
        case (let a, let b): .or(a, b)
        }
    }
}

/// The `rules` section of the configuration.
struct PermissionRules: Equatable, Sendable {
    /// For classes without rules of their own: deny both, as Realm does once rules exist.
    var fallback = ClassRules(read: .always(false), write: .always(false))
    var classes: [String: ClassRules] = [:]
    /// Roles given in the configuration, by user id.
    var userRoles: [String: Set<String>] = [:]
    /// The claim of a custom JWT that lists its user's roles, if any.
    var rolesClaim: String?

    static let keys: Set<String> = ["default", "classes", "roles", "rolesClaim"]

    func rules(of className: String) -> ClassRules { classes[className] ?? fallback }

    /// Parses the `rules` object; errors name the key (`rules.classes.Task.write`) and the bad part.
    static func parse(_ value: Any) throws -> PermissionRules {
        guard let object = value as? [String: Any] else { throw ConfigurationError("'rules' must be an object") }
        if let unknown = object.keys.filter({ !keys.contains($0) }).sorted().first {
            throw ConfigurationError("unknown setting 'rules.\(unknown)' (known: \(keys.sorted().joined(separator: ", ")))")
        }
        var rules = PermissionRules()
        if let fallback = object["default"] {
            rules.fallback = try classRules(fallback, key: "rules.default")
        }
        if let classes = object["classes"] {
            guard let classes = classes as? [String: Any] else {
                throw ConfigurationError("'rules.classes' must be an object of class names")
            }
            for (name, value) in classes {
                rules.classes[name] = try classRules(value, key: "rules.classes.\(name)")
            }
        }
        if let roles = object["roles"] {
            guard let roles = roles as? [String: Any] else {
                throw ConfigurationError("'rules.roles' must be an object of user ids to lists of roles")
            }
            for (user, list) in roles {
                guard case .roles(let names) = try PermissionRule.parse(list as? [Any] ?? [], key: "rules.roles.\(user)") else {
                    continue
                }
                rules.userRoles[user] = names
            }
        }
        if let claim = object["rolesClaim"] {
            guard let claim = claim as? String, !claim.isEmpty else {
                throw ConfigurationError("'rules.rolesClaim' must be the name of a JWT claim")
            }
            rules.rolesClaim = claim
        }
        return rules
    }

    private static func classRules(_ value: Any, key: String) throws -> ClassRules {
        guard let object = value as? [String: Any] else {
            throw ConfigurationError("'\(key)' must be an object with \"read\" and \"write\"")
        }
        if let unknown = object.keys.filter({ $0 != "read" && $0 != "write" }).sorted().first {
            throw ConfigurationError("unknown setting '\(key).\(unknown)' (known: read, write)")
        }
        guard let read = object["read"], let write = object["write"] else {
            throw ConfigurationError("'\(key)' needs both \"read\" and \"write\"")
        }
        return ClassRules(read: try PermissionRule.parse(read, key: "\(key).read"),
                          write: try PermissionRule.parse(write, key: "\(key).write"))
    }
}
