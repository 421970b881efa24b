// Observing Results: observe on the database's thread, a queue or an actor,
// and their changes and frozen values as async sequences.

import Foundation
internal import CCoffer

extension Results where Element: _ResultsElement {
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
    /// Results of a list (`owner.dogs.where { ... }.sorted(by: \.name)`) are
    /// observed as the list seen through their queries: a row that changes
    /// places is a deletion plus an insertion. Results of a set or of linking
    /// objects (`owner.toys.sorted(byKeyPath: "name")`,
    /// `dog.owners.where { $0.age > 30 }`) are observed as the query of the
    /// objects the set holds (the objects linking here) joined with theirs,
    /// as Realm observes them: in creation order without a sort; when the
    /// set's owner is deleted the last call reports every row deleted.
    /// Results of linking objects count links, as they are read and as
    /// Realm's query over a backlink view does: an object linking twice that
    /// matches is two rows, side by side in their order, its second link
    /// added is an insertion after its first row, a link removed deletes its
    /// last row, and a sort key changed deletes all its rows and inserts
    /// them at its new place. An unknown key path is reported as
    /// `.error`, naming it, and nothing follows.
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

    func observation(_ keyPaths: [String]?) -> Observation<Results> {
        let (database, binding, source, queries) = (self.database, self.binding, self.source, self.queries)
        let paths = Database.storedKeyPaths(keyPaths, from: binding.schema)
        if let list = observedList, list.property.collection == .list {
            return Observation(
                database: database, live: self,
                rebuild: { other in
                    let owner = ManagedState(database: other, binding: list.owner.binding, key: list.owner.key)
                    guard owner.exists else { return nil }
                    let location = CollectionLocation(owner: owner, index: list.index)
                    let keys = CollectionCore<[Int]>(location, .list).objectKeys(at: location, get: coffer_list_get)
                    return Results(database: other, binding: binding, source: .keys { keys }, queries: queries)
                },
                register: { context, token throws(CofferError) in
                    let query = try observedQuery()
                    return try withCKeyPaths(paths) { paths, count in
                        coffer_list_query_observe(database.handle, list.owner.binding.classId, list.owner.key, list.propertyId,
                                                  query.handle, paths, count, ObserverCallbacks.collection, context, token)
                    }
                })
        }
        if let origin = observedOrigin() {
            let register: (UnsafeMutableRawPointer, UnsafeMutablePointer<OpaquePointer?>) throws(CofferError) -> coffer_status = { context, token throws(CofferError) in
                let query = try Self.joined(try origin.get(), database, binding)
                return try withCKeyPaths(paths) { paths, count in
                    coffer_query_observe(database.handle, query.handle, paths, count, ObserverCallbacks.collection, context, token)
                }
            }
            if let location = observedList, location.property.kind == .linkingObjects {
                // Rows are links, as these results are read: the query's
                // change sets are turned into theirs. The callbacks get them
                // read through a source that is empty once the owner is gone.
                let rows = { (other: Database) in
                    Results(database: other, binding: binding, source: .keys { location.linkKeys(in: other) }, queries: queries)
                }
                var observation = Observation(database: database, live: rows(database), rebuild: rows, register: register)
                observation.translate = BacklinkRows(reading: { rows($0).currentKeys() }).translate
                return observation
            }
            // The callbacks get the results of the query observed, whose rows
            // are its indices' also once the owner is gone.
            let queried = (try? origin.get()).map { Results(database: database, binding: binding, source: .all, queries: $0) }
            return Observation(
                database: database, live: queried ?? self,
                rebuild: { other in
                    (try? origin.get()).map { Results(database: other, binding: binding, source: .all, queries: $0) }
                },
                register: register)
        }
        var observation = Observation(
            database: database, live: self,
            rebuild: { Results(database: $0, binding: binding, source: source, queries: queries) },
            register: { context, token throws(CofferError) in
                let query = try observedQuery()
                return try withCKeyPaths(paths) { paths, count in
                    coffer_query_observe(database.handle, query.handle, paths, count, ObserverCallbacks.collection, context, token)
                }
            })
        if case .all = source, queries.count <= 1 {
            // The observed query is these results' own: the rows it told
            // are theirs at the change's version.
            observation.adopt = { results, raw, frozen in
                if case .collection(let indices) = raw, let keys = indices.resultKeys,
                   indices.version != 0, indices.version == frozen.frozenVersion {
                    results.adoptKeys(keys)
                }
            }
        }
        return observation
    }

    /// One query giving these results (see ``joined(_:_:_:)``).
    private func observedQuery() throws(CofferError) -> CompiledQuery {
        try Self.joined(queries, database, binding)
    }

    /// The query of the objects a set holds, or of the objects linking to
    /// an object, followed by these results' queries; nil for results of
    /// another source.
    private func observedOrigin() -> Result<[CompiledQuery], CofferError>? {
        guard case .keys = source, let location = observedList, location.property.collection != .list else { return nil }
        let property = location.property
        let text = property.kind == .linkingObjects
            ? "\(property.originProperty ?? property.persistedName) == $0"
            : "@links.\(location.owner.binding.schema.className).\(property.persistedName) == $0"
        let owner = StoredValue.link(classId: location.owner.binding.classId, key: location.owner.key)
        return Result { () throws(CofferError) in
            [try CompiledQuery(database, binding, text: text, arguments: [owner])] + queries
        }
    }

    /// One query giving the results of `queries` applied in order: the only
    /// one, or their predicates together and then their SORT, DISTINCT and
    /// LIMIT in order, as Realm combines a filter of sorted results.
    private static func joined(_ queries: [CompiledQuery], _ database: Database, _ binding: ClassBinding) throws(CofferError) -> CompiledQuery {
        if queries.count == 1 {
            return queries[0]
        }
        var predicates: [String] = []
        var ordering = ""
        var arguments: [StoredValue] = []
        for query in queries {
            let parts = QueryParts(query.text, argumentOffset: arguments.count)
            if parts.predicate != "TRUEPREDICATE" {
                predicates.append("(\(parts.predicate))")
            }
            ordering += parts.ordering
            arguments += query.arguments
        }
        let predicate = predicates.isEmpty ? "TRUEPREDICATE" : predicates.joined(separator: " AND ")
        return try CompiledQuery(database, binding, text: predicate + ordering, arguments: arguments)
    }
}

/// A query's text cut into its predicate and its ordering clauses (`SORT(...)`,
/// `DISTINCT(...)`, `LIMIT(n)`, which come last), with its arguments `$n`
/// numbered from `argumentOffset`, so that queries can be joined into one.
struct QueryParts {
    private(set) var predicate = ""
    private(set) var ordering = ""

    init(_ text: String, argumentOffset: Int) {
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        var orderingStart: Int?
        var quote: UInt8?
        var position = 0
        while position < bytes.count {
            let byte = bytes[position]
            if let open = quote {
                output.append(byte)
                if byte == UInt8(ascii: "\\"), position + 1 < bytes.count {
                    output.append(bytes[position + 1])
                    position += 1
                } else if byte == open {
                    quote = nil
                }
                position += 1
                continue
            }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            }
            if byte == UInt8(ascii: "$"), position + 1 < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position + 1]) {
                var end = position + 1
                while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
                let number = Int(String(decoding: bytes[(position + 1)..<end], as: UTF8.self))! + argumentOffset
                output.append(contentsOf: "$\(number)".utf8)
                position = end
                continue
            }
            if orderingStart == nil, byte == UInt8(ascii: " "), Self.startsOrdering(bytes[(position + 1)...]) {
                orderingStart = output.count
            }
            output.append(byte)
            position += 1
        }
        let cut = orderingStart ?? output.count
        predicate = String(decoding: output[..<cut], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        ordering = String(decoding: output[cut...], as: UTF8.self)
    }

    /// True where `rest` begins with SORT(, DISTINCT( or LIMIT(, in any case.
    private static func startsOrdering(_ rest: ArraySlice<UInt8>) -> Bool {
        let head = String(decoding: rest.prefix(9), as: UTF8.self).uppercased().replacingOccurrences(of: " ", with: "")
        return ["SORT(", "DISTINCT(", "LIMIT("].contains { head.hasPrefix($0) }
    }
}
