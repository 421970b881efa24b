// Filters one session's downloads by the read rules (docs/SYNC.md, "Security
// model"): a client receives the changes of the objects its user may read
// now, and nothing of the others. The service knows which objects the client
// has been given (coffer_sync_client_objects, with this session's own sends
// kept here until the client acknowledges them), so that, change by change:
//
//   readable, given       the change as it is
//   readable, not given   the whole object as stored (Restatement), once
//   not readable, given   a DELETE (the change itself if it is one)
//   not readable, not     nothing
//
// Readability is decided in PostgreSQL (ClientObjects.readable) for the
// objects of a batch at once, never by loading objects. An empty changeset
// of the service in the history (ClientObjects.appendReconcileMarker, made
// when a client connects with other roles than before) is where a session
// compares everything its client was given with everything it may read.
import CofferSyncProtocol
import Logging
import PostgresNIO

/// What one session gave its client or took from it since it started,
/// over coffer_sync_client_objects; its sends are recorded there once the
/// client acknowledges them (a client that did not integrate a frame still
/// has what it had).
actor ReadState {
    private var known: [ObjectKey: Bool] = [:]
    /// Sends not acknowledged yet, by the last server version of their frame.
    private var pending: [(lastVersion: UInt64, marks: [ObjectKey: Bool])] = []

    /// What the session knows of `keys` (of every object it knows, for nil).
    func overlay(_ keys: Set<ObjectKey>?) -> [ObjectKey: Bool] {
        guard let keys else { return known }
        var result: [ObjectKey: Bool] = [:]
        for key in keys { if let value = known[key] { result[key] = value } }
        return result
    }

    /// The frame whose last server version is `lastVersion` was sent with
    /// the changes of `marks`.
    func sent(_ marks: [ObjectKey: Bool], lastVersion: UInt64) {
        guard !marks.isEmpty else { return }
        known.merge(marks) { $1 }
        pending.append((lastVersion, marks))
    }

    /// What the frames up to `version` gave and took (now acknowledged).
    func acknowledged(_ version: UInt64) -> [ObjectKey: Bool] {
        var marks: [ObjectKey: Bool] = [:]
        while let first = pending.first, first.lastVersion <= version {
            marks.merge(first.marks) { $1 }
            pending.removeFirst()
        }
        return marks
    }

    /// The client uploaded changes of these objects (it has what it created
    /// or changed, and not what it deleted); the table has them already.
    func uploaded(_ marks: [ObjectKey: Bool]) {
        known.merge(marks) { $1 }
    }
}

struct ReadFilter: Sendable {
    let objects: ClientObjects
    let partition: String
    let client: ClientID
    let rules: PermissionRules
    let user: QueryUser
    /// A flexible-sync session's rules narrowed by its subscriptions, which
    /// replace `rules`; nil for a partition-based session.
    var scope: SubscriptionScope? = nil
    let state = ReadState()

    var logger: Logger { objects.logger }

    struct Filtered {
        var changesets: [StoredChangeset]
        /// Whether the client has each object after these changesets, for the objects that changed.
        var marks: [ObjectKey: Bool]

        var pair: ([StoredChangeset], [ObjectKey: Bool]) { (changesets, marks) }
    }

    /// At HELLO: records whom the session reads as. A client that read as
    /// another user or with other roles before (or synced before the service
    /// had read rules, and so has every object) gets a point in the history
    /// where its session compares what it has with what it may read now: a
    /// change of roles takes effect at the next connection.
    func start(lastServerVersion: UInt64) async throws {
        let readAs = ([user.id] + user.roles.sorted()).joined(separator: "\n")
        let before = try await objects.swapReadAs(readAs, partition: partition, client: client)
        guard before != readAs, before != nil || lastServerVersion > 0 else { return }
        if before == nil {
            try await objects.giveEveryLiveObject(partition: partition, client: client)
        }
        let version = try await objects.appendReconcileMarker(partition: partition)
        let roles = user.roles.sorted().joined(separator: ", ")
        logger.info("user \(user.id) reads with roles [\(roles)], not as before: its client is reconciled at server version \(version)")
    }

    /// `batch` as the client may see it. A flexible session's new
    /// subscriptions (their rules and marker) take effect between two
    /// batches, never during one: a batch that holds the marker is filtered
    /// once the session knows it as its own.
    func filter(_ batch: [StoredChangeset]) async throws -> Filtered {
        guard let scope else { return try await filterBatch(batch) }
        await scope.acquire()
        do {
            let filtered = try await filterBatch(batch)
            await scope.release()
            return filtered
        } catch {
            await scope.release()
            throw error
        }
    }

    private func filterBatch(_ batch: [StoredChangeset]) async throws -> Filtered {
        var decoded: [(stored: StoredChangeset, changeset: Changeset, marker: Bool)] = []
        var keys: Set<ObjectKey> = []
        var reconcile = false
        let rules = await scope?.rules ?? self.rules
        for stored in batch {
            let changeset = try Changeset(encoded: stored.encoded)
            // Client version 1: a marker of one session's new subscriptions.
            var marker = stored.origin == Compensation.origin && changeset.changes.isEmpty
            if marker && changeset.clientVersion == 1 {
                marker = await scope?.isOwnMarker(stored.serverVersion) ?? false
            }
            reconcile = reconcile || marker
            decoded.append((stored, changeset, marker))
            for change in changeset.changes { keys.insert(ObjectKey(change)) }
        }
        let readable: Set<ObjectKey>
        var has: [ObjectKey: Bool] = [:]
        if reconcile {
            readable = try await objects.readableObjects(partition: partition, rules: rules, user: user)
            for key in try await objects.given(nil, partition: partition, client: client) { has[key] = true }
            has.merge(await state.overlay(nil)) { $1 }
        } else {
            readable = try await objects.readable(keys, partition: partition, rules: rules, user: user)
            for key in try await objects.given(keys, partition: partition, client: client) { has[key] = true }
            has.merge(await state.overlay(keys)) { $1 }
        }
        var marks: [ObjectKey: Bool] = [:]
        var result: [StoredChangeset] = []
        let partition = self.partition, logger = self.logger
        try await objects.client.withConnection { connection in
            // The objects this batch may restate, read with one query per table.
            var toRestate = keys.filter { readable.contains($0) && has[$0] != true }
            for (_, changeset, _) in decoded {
                for change in changeset.changes {
                    if case .delete = change, readable.contains(ObjectKey(change)) { toRestate.insert(ObjectKey(change)) }
                }
            }
            if reconcile { toRestate.formUnion(readable.filter { has[$0] != true }) }
            let restated = try await Restatement.changes(of: toRestate, partition: partition, on: connection, logger: logger)
            func whole(_ key: ObjectKey) async throws -> [Change] {
                if let changes = restated[key] { return changes }
                return try await Restatement.changes(of: key.className, try SyncValue(encoded: key.pk),
                                                     partition: partition, on: connection, logger: logger)
            }
            for (stored, changeset, marker) in decoded {
                var kept: [Change] = []
                var restate: [ObjectKey] = [], remove: [ObjectKey] = []
                if marker {
                    remove = has.filter { $0.value && !readable.contains($0.key) }.map { $0.key }.sorted(by: ObjectKey.precedes)
                    restate = readable.filter { has[$0] != true }.sorted(by: ObjectKey.precedes)
                }
                for key in remove {
                    kept.append(try removal(key))
                    has[key] = false
                    marks[key] = false
                }
                for key in restate {
                    kept += try await whole(key)
                    has[key] = true
                    marks[key] = true
                }
                for change in changeset.changes {
                    let key = ObjectKey(change)
                    var isDelete = false
                    if case .delete = change { isDelete = true }
                    switch (readable.contains(key), has[key] ?? false) {
                    case (true, true):
                        kept.append(change)
                        if isDelete {
                            has[key] = false
                            marks[key] = false
                        }
                    case (true, false):
                        // A delete of an object it does not have changes nothing for it.
                        guard !isDelete else { break }
                        kept += try await whole(key)
                        has[key] = true
                        marks[key] = true
                    case (false, true):
                        kept.append(isDelete ? change : try removal(key))
                        has[key] = false
                        marks[key] = false
                    case (false, false):
                        break
                    }
                }
                if kept == changeset.changes {
                    result.append(stored)
                } else {
                    let filtered = Changeset(clientVersion: changeset.clientVersion, clock: changeset.clock, changes: kept)
                    result.append(StoredChangeset(serverVersion: stored.serverVersion, origin: stored.origin,
                                                  encoded: filtered.encoded))
                }
            }
        }
        return Filtered(changesets: result, marks: marks)
    }

    /// How an object leaves a client that may no longer read it: a DELETE,
    /// or for a flexible-sync client an EVICT (no tombstone, so that the
    /// object's lists show whole if it comes back).
    private func removal(_ key: ObjectKey) throws -> Change {
        let pk = try SyncValue(encoded: key.pk)
        return scope == nil ? .delete(class: key.className, pk: pk) : .evict(class: key.className, pk: pk)
    }

    /// The client integrated the history up to `version`: records what the
    /// frames up to it gave and took.
    func acknowledged(_ version: UInt64) async throws {
        try await objects.record(await state.acknowledged(version), partition: partition, client: client)
    }
}

extension ObjectKey {
    /// A fixed order (class name, then the primary key's encoding), so that
    /// what a session sends does not depend on hashing.
    static func precedes(_ a: ObjectKey, _ b: ObjectKey) -> Bool {
        a.className != b.className ? a.className < b.className : a.pk.lexicographicallyPrecedes(b.pk)
    }
}
