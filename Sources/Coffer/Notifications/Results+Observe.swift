// Observing Results: observe on the database's thread, a queue or an actor,
// and their changes and frozen values as async sequences.

import Foundation
internal import CCoffer

extension Results {
    /// Calls `block` with the results' initial state, then after each commit
    /// that changed them, as Realm's `observe(keyPaths:on:_:)`.
    ///
    /// ```swift
    /// let token = db.objects(Dog.self).where { $0.age < 2 }.observe { change in
    ///     if case .update(_, let deletions, let insertions, let modifications) = change {
    ///         print(deletions, insertions, modifications)
    ///     }
    /// }
    /// ```
    ///
    /// Indices are as Realm Swift reports them (see ``CollectionChange``);
    /// sorted results report an object that changed places as a deletion
    /// plus an insertion. Without `keyPaths`, a change of any property of a
    /// result object, or of an object it links to (up to three links away),
    /// is a modification; `keyPaths` (Swift names, through links:
    /// `["name", "owner.name"]`) restrict that to those paths, and `[]` to
    /// none (only insertions and deletions count).
    ///
    /// With `queue` nil, `block` runs where the database may be used (its
    /// thread or actor) with these live results: for a database confined to a
    /// thread, when that thread calls ``Database/refresh()`` or through its
    /// scheduler (``Database/setScheduler(_:)``); for a database isolated to
    /// an actor, on the actor by itself (see ``Database/autorefresh``). With
    /// a serial `queue`, `block` runs there with the results frozen at the
    /// newest version when the change was seen.
    ///
    /// An unknown key path is reported as `.error`, naming it, and nothing
    /// follows. Results of a list, set or linking objects queried
    /// (`owner.dogs.where { ... }`) cannot be observed yet: observe the
    /// collection itself, or query the class.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        observation(keyPaths).observe(on: queue, { raw, results, _ in CollectionChange(raw, results) }, block)
    }

    /// Calls `block` isolated to `actor` with the results' initial state, then
    /// after each commit that changed them, as Realm's
    /// `observe(keyPaths:on:_:)` for actors; the results it gets are frozen at
    /// the newest version when the change was seen.
    ///
    /// ```swift
    /// let token = await dogs.observe(on: myActor) { actor, change in
    ///     actor.show(change)
    /// }
    /// ```
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<Results<Element>>) -> Void) async -> NotificationToken {
        observation(keyPaths).observe(on: actor, { raw, results, _ in CollectionChange(raw, results) }, block)
    }

    /// The results' changes as an async sequence, the first one `.initial`;
    /// the results in them are frozen (see ``ChangeSequence``).
    public func changes(keyPaths: [String]? = nil) -> ChangeSequence<CollectionChange<Results<Element>>> {
        observation(keyPaths).sequence { raw, results, _ in CollectionChange(raw, results) }
    }

    /// ``changes(keyPaths:)`` with every property counting.
    public var changes: ChangeSequence<CollectionChange<Results<Element>>> {
        changes()
    }

    /// The results frozen, now and after each commit that changed them, as
    /// an async sequence (see ``ChangeSequence``).
    public var values: ChangeSequence<Results<Element>> {
        observation(nil).sequence { raw, results, _ in
            if case .error = raw { return nil }
            return results
        }
    }

    private func observation(_ keyPaths: [String]?) -> Observation<Results> {
        let (database, binding, source, queries) = (self.database, self.binding, self.source, self.queries)
        let paths = Database.storedKeyPaths(keyPaths, from: binding.schema)
        return Observation(
            database: database, live: self,
            rebuild: { Results(database: $0, binding: binding, source: source, queries: queries) },
            register: { context, token throws(CofferError) in
                let query = try observedQuery()
                return try withCKeyPaths(paths) { paths, count in
                    coffer_query_observe(database.handle, query.handle, paths, count, ObserverCallbacks.collection, context, token)
                }
            })
    }

    /// One query giving these results: their only query, or their queries'
    /// predicates together and then their SORT, DISTINCT and LIMIT in order,
    /// as Realm combines a filter of sorted results.
    private func observedQuery() throws(CofferError) -> CompiledQuery {
        guard case .all = source else {
            throw CofferError(.misuse, "results of a list, set or linking objects cannot be observed yet; observe the collection, or query \(binding.schema.className) itself")
        }
        if queries.count == 1 {
            return queries[0]
        }
        let parts = queries.map { QueryParts($0.description) }
        let predicates = parts.map(\.predicate).filter { $0 != "TRUEPREDICATE" }
        let predicate = predicates.isEmpty ? "TRUEPREDICATE" : predicates.map { "(\($0))" }.joined(separator: " AND ")
        let text = predicate + parts.map(\.ordering).joined()
        return try CompiledQuery(database, binding, text: text, arguments: [])
    }
}

/// A query's canonical text cut into its predicate and its ordering clauses
/// (` SORT(...)`, ` DISTINCT(...)`, ` LIMIT(n)`), which the C core prints
/// last, outside any string literal.
struct QueryParts {
    let predicate: String
    let ordering: String

    init(_ text: String) {
        let bytes = Array(text.utf8)
        var inString = false
        var escaped = false
        for (offset, byte) in bytes.enumerated() {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            if byte == UInt8(ascii: "\"") {
                inString = true
                continue
            }
            let rest = bytes[offset...]
            if [" SORT(", " DISTINCT(", " LIMIT("].contains(where: { rest.starts(with: $0.utf8) }) {
                predicate = String(decoding: bytes[..<offset], as: UTF8.self)
                ordering = String(decoding: rest, as: UTF8.self)
                return
            }
        }
        predicate = text
        ordering = ""
    }
}
