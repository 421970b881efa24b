// Flexible sync (docs/SYNC.md, "Flexible sync"): a client's subscription set,
// named queries per class, parsed once when it arrives (SUBSCRIBE). The set
// narrows the permission rules of the session's user: a client reads the
// objects its rules allow AND that match one of its class's queries, and may
// write only such objects (a write outside every subscription is refused
// with a compensating write, as Realm does). The narrowed rules are ordinary
// PermissionRules, so ReadFilter, ClientObjects and WriteGate evaluate them
// in PostgreSQL as they do the configured rules.
import CofferSyncProtocol

/// A subscription query the service cannot evaluate; the message names the
/// query and the part at fault.
struct SubscriptionRefusal: Error, CustomStringConvertible {
    let description: String
}

struct SubscriptionSet: Sendable {
    /// The client's version of the set.
    var version: UInt64
    /// Per class, its queries (OR'ed) and their texts.
    var classes: [String: (predicate: QueryPredicate, text: String)] = [:]

    /// Parses every query of a SUBSCRIBE; the first one outside the supported
    /// subset refuses the whole set, naming it.
    init(version: UInt64, queries: [SubscriptionQuery]) throws {
        self.version = version
        for query in queries {
            let label = query.name.isEmpty ? "the unnamed subscription" : "subscription '\(query.name)'"
            guard !query.className.isEmpty else {
                throw SubscriptionRefusal(description: "\(label) names no class")
            }
            let predicate: QueryPredicate
            do {
                predicate = try QueryParser.parse(query.query)
            } catch let error as QueryError {
                throw SubscriptionRefusal(description: "\(label) of \(query.className), \"\(query.query)\": \(error)")
            }
            if let (before, text) = classes[query.className] {
                classes[query.className] = (.or(before, predicate), "\(text) OR \(query.query)")
            } else {
                classes[query.className] = (predicate, query.query)
            }
        }
    }

    /// The rules of a flexible session: `rules` (nil: everything allowed)
    /// for `user`, each class's read and write rule joined with its
    /// subscriptions; a class without subscriptions is neither read nor written.
    func narrowing(_ rules: PermissionRules?, for user: QueryUser) -> PermissionRules {
        let everything = ClassRules(read: .always(true), write: .always(true))
        var narrowed = PermissionRules()
        narrowed.fallback = ClassRules(read: .always(false), write: .always(false))
        for (className, subscribed) in classes {
            let base = rules?.rules(of: className) ?? everything
            func join(_ rule: PermissionRule) -> PermissionRule {
                let text = rule == .always(true) ? "subscriptions: \(subscribed.text)"
                    : "\(rule.text), and subscriptions: \(subscribed.text)"
                switch rule.predicate(for: user) {
                case .constant(false): return .always(false)
                case .constant(true): return .predicate(subscribed.predicate, text: text)
                case let predicate: return .predicate(.and(predicate, subscribed.predicate), text: text)
                }
            }
            narrowed.classes[className] = ClassRules(read: join(base.read), write: join(base.write))
        }
        return narrowed
    }
}

/// A flexible session's current rules, which a SUBSCRIBE replaces while
/// its download task filters with them.
actor SubscriptionScope {
    private(set) var rules: PermissionRules
    /// The server versions of the markers this session appended to its
    /// partition's history (where only it compares what its client has
    /// with what it may read), with the set version each completes.
    private var markers: [UInt64: UInt64] = [:]

    init(rules: PermissionRules) { self.rules = rules }

    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Excludes a new set's marker and rules (FlexibleSync.subscribe) from
    /// a batch being filtered (ReadFilter.filter), and the other way round.
    func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }

    func replace(_ rules: PermissionRules, marker: UInt64, setVersion: UInt64) {
        self.rules = rules
        markers[marker] = setVersion
    }

    func isOwnMarker(_ version: UInt64) -> Bool { markers[version] != nil }

    /// The set versions whose markers are at or below `version` (sent), forgotten here.
    func completed(through version: UInt64) -> [(setVersion: UInt64, marker: UInt64)] {
        let done = markers.filter { $0.key <= version }.sorted { $0.key < $1.key }
        for (marker, _) in done { markers[marker] = nil }
        return done.map { ($0.value, $0.key) }
    }
}
