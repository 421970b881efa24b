// Merges changesets into the partition's state tables by the rules of
// docs/SYNC.md ("Merge rules"), inside the caller's transaction. Stamps and
// element ids are stored as their sort keys (bytea), so PostgreSQL compares
// them in stamp order and every rule is a conditional upsert.
//
// An object's row holds its largest delete stamp (tombstone) and its largest
// create stamp (created); it is live when created is above the tombstone.
// Values stamped below the tombstone are gone: changes older than it are
// ignored, and a delete removes the older property, set and map rows (list
// elements stay, as later inserts may be anchored on them).
import CofferSyncProtocol
import Logging
import NIOCore
import PostgresNIO

struct Integrator {
    let connection: PostgresConnection
    let partition: String
    let logger: Logger

    func integrate(_ changeset: Changeset, origin: ClientID) async throws {
        let stamp = Stamp(clock: changeset.clock, client: origin).sortKey
        for change in changeset.changes {
            try await apply(change, stamp: stamp)
        }
    }

    /// Merges one change stamped `stamp` (a Stamp's sort key).
    func apply(_ change: Change, stamp: [UInt8]) async throws {
        let (className, pkValue) = change.object
        let pk = pkValue.encoded
        switch change {
        case .create(_, _, let props):
            try await upsertObjectAndProperties(className, pk, created: stamp, props, stamp)
        case .update(_, _, let props):
            try await upsertObjectAndProperties(className, pk, created: nil, props, stamp)
        case .evict:
            throw BadChangeset("EVICT of \(className) is a change only the service sends")
        case .delete:
            let tombstone = try await upsertObject(className, pk, deleted: stamp) ?? stamp
            for table in ["coffer_sync_properties", "coffer_sync_set_elements", "coffer_sync_map_entries"] {
                try await connection.query(PostgresQuery(
                    unsafeSQL: "DELETE FROM \(table) WHERE partition = $1 AND class = $2 AND pk = $3 AND stamp < $4",
                    binds: try binds(partition, className, pk.bytea, tombstone.bytea)), logger: logger)
            }
        case .listInsert(_, _, let property, let id, let anchor, let value):
            _ = try await upsertObject(className, pk)
            if let anchor, try await !elementExists(className, pk, property, anchor.sortKey) {
                throw BadChangeset("list insert into '\(className).\(property)' after an element the service does not have")
            }
            try await connection.query("""
                INSERT INTO coffer_sync_list_elements
                    (partition, class, pk, property, element, anchor, value, value_stamp)
                VALUES (\(partition), \(className), \(pk.bytea), \(property), \(id.sortKey.bytea),
                        \(anchor?.sortKey.bytea), \(value.encoded.bytea), \(stamp.bytea))
                ON CONFLICT DO NOTHING
                """, logger: logger)
        case .listErase(_, _, let property, let id):
            guard try await elementExists(className, pk, property, id.sortKey) else {
                // A compensating write erases the elements a refused insert
                // made on its client only: nothing to do here.
                if stamp[8..<24].elementsEqual(Compensation.origin.bytes) { return }
                throw BadChangeset("list erase in '\(className).\(property)' of an element the service does not have")
            }
            try await connection.query("""
                UPDATE coffer_sync_list_elements SET erased = true
                WHERE partition = \(partition) AND class = \(className) AND pk = \(pk.bytea)
                  AND property = \(property) AND element = \(id.sortKey.bytea)
                """, logger: logger)
        case .listSet(_, _, let property, let id, let value):
            guard try await elementExists(className, pk, property, id.sortKey) else {
                throw BadChangeset("list set in '\(className).\(property)' of an element the service does not have")
            }
            try await connection.query("""
                UPDATE coffer_sync_list_elements SET value = \(value.encoded.bytea), value_stamp = \(stamp.bytea)
                WHERE partition = \(partition) AND class = \(className) AND pk = \(pk.bytea)
                  AND property = \(property) AND element = \(id.sortKey.bytea) AND value_stamp < \(stamp.bytea)
                """, logger: logger)
        case .setAdd(_, _, let property, let value), .setRemove(_, _, let property, let value):
            var present = false
            if case .setAdd = change { present = true }
            let tombstone = try await upsertObject(className, pk)
            guard isAfter(stamp, tombstone) else { return }
            try await connection.query("""
                INSERT INTO coffer_sync_set_elements AS e (partition, class, pk, property, element, present, stamp)
                VALUES (\(partition), \(className), \(pk.bytea), \(property), \(value.encoded.bytea), \(present), \(stamp.bytea))
                ON CONFLICT (partition, class, pk, property, element)
                DO UPDATE SET present = EXCLUDED.present, stamp = EXCLUDED.stamp WHERE e.stamp < EXCLUDED.stamp
                """, logger: logger)
        case .mapPut(_, _, let property, let key, let value):
            try await putMapEntry(className, pk, property, key, value.encoded, stamp)
        case .mapRemove(_, _, let property, let key):
            try await putMapEntry(className, pk, property, key, nil, stamp)
        }
    }

    /// Whether `stamp` is above the object's tombstone (always, without one).
    private func isAfter(_ stamp: [UInt8], _ tombstone: [UInt8]?) -> Bool {
        guard let tombstone else { return true }
        return tombstone.lexicographicallyPrecedes(stamp)
    }

    /// Makes sure the object has a row, raising its created or tombstone stamp
    /// to the one given; returns the tombstone after the change.
    private func upsertObject(_ className: String, _ pk: [UInt8], created: [UInt8]? = nil,
                              deleted: [UInt8]? = nil) async throws -> [UInt8]? {
        let rows = try await connection.query("""
            INSERT INTO coffer_sync_objects AS o (partition, class, pk, tombstone, created)
            VALUES (\(partition), \(className), \(pk.bytea), \(deleted?.bytea), \(created?.bytea))
            ON CONFLICT (partition, class, pk) DO UPDATE
                SET tombstone = GREATEST(o.tombstone, EXCLUDED.tombstone),
                    created = GREATEST(o.created, EXCLUDED.created)
            RETURNING tombstone
            """, logger: logger)
        for try await tombstone in rows.decode(ByteBuffer?.self) {
            return tombstone?.bytes
        }
        throw StoreError("the object row of \(className) was not returned")
    }

    /// A create or an update in one statement: the object's row as
    /// `upsertObject` makes it, then, if `stamp` is above its tombstone, each
    /// property last writer wins. (A changeset names a property once: the
    /// validator refuses a repeat, which one statement could not upsert twice.)
    private func upsertObjectAndProperties(_ className: String, _ pk: [UInt8], created: [UInt8]?,
                                           _ props: [SyncValue.SyncProperty], _ stamp: [UInt8]) async throws {
        let names = props.map(\.name)
        let values = props.map { $0.value.encoded.bytea }
        // unnest takes no arrays of optionals from PostgresNIO: each typed
        // column comes with a mask of which elements are set.
        let numbers = props.map { TypedColumns.number($0.value) }
        let texts = props.map { TypedColumns.text($0.value) }
        let nums = numbers.map { $0 ?? 0 }, hasNum = numbers.map { $0 != nil }
        let txts = texts.map { $0 ?? "" }, hasTxt = texts.map { $0 != nil }
        try await connection.query("""
            WITH o AS (
                INSERT INTO coffer_sync_objects AS o (partition, class, pk, tombstone, created)
                VALUES (\(partition), \(className), \(pk.bytea), NULL, \(created?.bytea))
                ON CONFLICT (partition, class, pk) DO UPDATE
                    SET tombstone = GREATEST(o.tombstone, EXCLUDED.tombstone),
                        created = GREATEST(o.created, EXCLUDED.created)
                RETURNING tombstone
            )
            INSERT INTO coffer_sync_properties AS p (partition, class, pk, property, value, stamp, num, txt)
            SELECT \(partition), \(className), \(pk.bytea), u.name, u.value, \(stamp.bytea),
                   CASE WHEN u.has_num THEN u.num END, CASE WHEN u.has_txt THEN u.txt END
            FROM o, unnest(\(names)::text[], \(values)::bytea[], \(nums)::float8[], \(hasNum)::bool[],
                           \(txts)::text[], \(hasTxt)::bool[]) AS u(name, value, num, has_num, txt, has_txt)
            WHERE o.tombstone IS NULL OR o.tombstone < \(stamp.bytea)
            ON CONFLICT (partition, class, pk, property)
            DO UPDATE SET value = EXCLUDED.value, stamp = EXCLUDED.stamp, num = EXCLUDED.num, txt = EXCLUDED.txt
            WHERE p.stamp < EXCLUDED.stamp
            """, logger: logger)
    }

    private func putMapEntry(_ className: String, _ pk: [UInt8], _ property: String, _ key: String,
                             _ value: [UInt8]?, _ stamp: [UInt8]) async throws {
        let tombstone = try await upsertObject(className, pk)
        guard isAfter(stamp, tombstone) else { return }
        try await connection.query("""
            INSERT INTO coffer_sync_map_entries AS m (partition, class, pk, property, key, present, value, stamp)
            VALUES (\(partition), \(className), \(pk.bytea), \(property), \(key), \(value != nil), \(value?.bytea), \(stamp.bytea))
            ON CONFLICT (partition, class, pk, property, key)
            DO UPDATE SET present = EXCLUDED.present, value = EXCLUDED.value, stamp = EXCLUDED.stamp
            WHERE m.stamp < EXCLUDED.stamp
            """, logger: logger)
    }

    private func elementExists(_ className: String, _ pk: [UInt8], _ property: String,
                               _ element: [UInt8]) async throws -> Bool {
        let rows = try await connection.query("""
            SELECT 1 FROM coffer_sync_list_elements
            WHERE partition = \(partition) AND class = \(className) AND pk = \(pk.bytea)
              AND property = \(property) AND element = \(element.bytea)
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    private func binds(_ partition: String, _ className: String, _ pk: ByteBuffer,
                       _ stamp: ByteBuffer) throws -> PostgresBindings {
        var b = PostgresBindings()
        b.append(partition)
        b.append(className)
        b.append(pk)
        b.append(stamp)
        return b
    }
}
