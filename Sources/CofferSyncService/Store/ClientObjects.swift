// What the read rules need of PostgreSQL (docs/SYNC.md, "Security model"):
// which objects a user may read now (the class's read rule, evaluated in SQL
// over the stored rows by Query/SQLTranslator), which objects a client has
// been given (coffer_sync_client_objects, schema version 5), and the user
// and roles a client's last session read as.
import CofferSyncProtocol
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// An object of a partition: its class and its primary key's encoding.
struct ObjectKey: Hashable, Sendable {
    var className: String
    var pk: [UInt8]

    init(className: String, pk: [UInt8]) {
        self.className = className
        self.pk = pk
    }

    init(_ change: Change) {
        let (className, pk) = change.object
        self.init(className: className, pk: pk.encoded)
    }
}

struct ClientObjects: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// Those of `keys` that `user` may read now: live, and satisfying the
    /// read predicate of their class.
    func readable(_ keys: Set<ObjectKey>, partition: String, rules: PermissionRules,
                  user: QueryUser) async throws -> Set<ObjectKey> {
        var result: Set<ObjectKey> = []
        let byClass = Dictionary(grouping: keys, by: \.className)
        for (className, members) in byClass.sorted(by: { $0.key < $1.key }) {
            let predicate = rules.rules(of: className).readPredicate(for: user)
            if predicate == .constant(false) { continue }
            var bindings = PostgresBindings()
            bindings.append(partition)
            bindings.append(className)
            bindings.append(members.map(\.pk.bytea))
            var binder = SQLBinder(continuing: bindings)
            let condition = SQLTranslator(user: user).condition(predicate, object: "o", binder: &binder)
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT o.pk FROM coffer_sync_objects o
                WHERE o.partition = $1 AND o.class = $2 AND o.pk = ANY($3)
                  AND \(SQLTranslator.isLive(object: "o")) AND \(condition)
                """, binds: binder.bindings), logger: logger)
            for try await pk in rows.decode(ByteBuffer.self) {
                result.insert(ObjectKey(className: className, pk: pk.bytes))
            }
        }
        return result
    }

    /// Every object of the partition that `user` may read now (their keys).
    func readableObjects(partition: String, rules: PermissionRules, user: QueryUser) async throws -> Set<ObjectKey> {
        let classRows = try await client.query("""
            SELECT DISTINCT class FROM coffer_sync_objects WHERE partition = \(partition)
            """, logger: logger)
        var classes: [String] = []
        for try await name in classRows.decode(String.self) { classes.append(name) }
        var result: Set<ObjectKey> = []
        for className in classes.sorted() {
            let predicate = rules.rules(of: className).readPredicate(for: user)
            if predicate == .constant(false) { continue }
            var bindings = PostgresBindings()
            bindings.append(partition)
            bindings.append(className)
            var binder = SQLBinder(continuing: bindings)
            let condition = SQLTranslator(user: user).condition(predicate, object: "o", binder: &binder)
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT o.pk FROM coffer_sync_objects o
                WHERE o.partition = $1 AND o.class = $2 AND \(SQLTranslator.isLive(object: "o")) AND \(condition)
                """, binds: binder.bindings), logger: logger)
            for try await pk in rows.decode(ByteBuffer.self) {
                result.insert(ObjectKey(className: className, pk: pk.bytes))
            }
        }
        return result
    }

    /// Those of `keys` the client has been given (all of them when `keys` is nil).
    func given(_ keys: Set<ObjectKey>?, partition: String, client id: ClientID) async throws -> Set<ObjectKey> {
        let rows: PostgresRowSequence
        if let keys {
            if keys.isEmpty { return [] }
            let list = Array(keys)
            let classes = list.map(\.className), pks = list.map(\.pk.bytea)
            rows = try await client.query("""
                SELECT c.class, c.pk FROM coffer_sync_client_objects c
                JOIN unnest(\(classes)::text[], \(pks)::bytea[]) AS u(class, pk) ON c.class = u.class AND c.pk = u.pk
                WHERE c.partition = \(partition) AND c.client_id = \(id.bytes.bytea)
                """, logger: logger)
        } else {
            rows = try await client.query("""
                SELECT class, pk FROM coffer_sync_client_objects
                WHERE partition = \(partition) AND client_id = \(id.bytes.bytea)
                """, logger: logger)
        }
        var result: Set<ObjectKey> = []
        for try await (className, pk) in rows.decode((String, ByteBuffer).self) {
            result.insert(ObjectKey(className: className, pk: pk.bytes))
        }
        return result
    }

    /// Records that the client has (true) or no longer has (false) each object.
    static func record(_ marks: [ObjectKey: Bool], partition: String, client id: ClientID,
                       on connection: PostgresConnection, logger: Logger) async throws {
        let added = marks.filter { $0.value }.map { $0.key }, removed = marks.filter { !$0.value }.map { $0.key }
        if !added.isEmpty {
            let classes = added.map(\.className), pks = added.map(\.pk.bytea)
            try await connection.query("""
                INSERT INTO coffer_sync_client_objects (partition, client_id, class, pk)
                SELECT \(partition), \(id.bytes.bytea), u.class, u.pk FROM unnest(\(classes)::text[], \(pks)::bytea[]) AS u(class, pk)
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
        if !removed.isEmpty {
            let classes = removed.map(\.className), pks = removed.map(\.pk.bytea)
            try await connection.query("""
                DELETE FROM coffer_sync_client_objects c
                USING unnest(\(classes)::text[], \(pks)::bytea[]) AS u(class, pk)
                WHERE c.partition = \(partition) AND c.client_id = \(id.bytes.bytea) AND c.class = u.class AND c.pk = u.pk
                """, logger: logger)
        }
    }

    func record(_ marks: [ObjectKey: Bool], partition: String, client id: ClientID) async throws {
        guard !marks.isEmpty else { return }
        try await client.withConnection { connection in
            try await Self.record(marks, partition: partition, client: id, on: connection, logger: logger)
        }
    }

    /// Records that the client has every live object of the partition (it
    /// synced when every client had every object).
    func giveEveryLiveObject(partition: String, client id: ClientID) async throws {
        try await client.query("""
            INSERT INTO coffer_sync_client_objects (partition, client_id, class, pk)
            SELECT o.partition, \(id.bytes.bytea), o.class, o.pk FROM coffer_sync_objects o
            WHERE o.partition = \(partition) AND \(unescaped: SQLTranslator.isLive(object: "o"))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// Stores whom the client's session reads as (its user and roles, as
    /// `readAs`) and returns what its last session read as (nil for none).
    func swapReadAs(_ readAs: String, partition: String, client id: ClientID) async throws -> String? {
        let rows = try await client.query("""
            UPDATE coffer_sync_clients c SET read_as = \(readAs)
            FROM coffer_sync_clients old
            WHERE c.partition = \(partition) AND c.client_id = \(id.bytes.bytea)
              AND old.partition = c.partition AND old.client_id = c.client_id
            RETURNING old.read_as
            """, logger: logger)
        var old: String?
        for try await value in rows.decode(String?.self) { old = value }
        return old
    }

    /// Appends an empty changeset of the service to the partition's history
    /// (a point in the history at which every session of the partition
    /// compares what its client has with what it may read) and wakes every
    /// instance; its server version. With `only`, a marker that only the
    /// session that appends it acts on (client version 1: a flexible-sync
    /// client's new subscription set); other sessions pass it on empty.
    func appendReconcileMarker(partition: String, only: Bool = false) async throws -> UInt64 {
        // A clock as clients make them (docs/SYNC.md, "Clocks").
        let clock = UInt64(max(0, Date().timeIntervalSince1970 * 1000)) << 16
        let empty = Changeset(clientVersion: only ? 1 : 0, clock: clock, changes: []).encoded.bytea
        return try await client.withTransaction(logger: logger) { conn in
            let locked = try await conn.query("""
                SELECT 1 FROM coffer_sync_partitions WHERE partition = \(partition) FOR UPDATE
                """, logger: logger)
            for try await _ in locked.decode(Int32.self) {}
            let rows = try await conn.query("""
                WITH h AS (
                    INSERT INTO coffer_sync_history (partition, origin, client_version, clock, changeset)
                    VALUES (\(partition), \(Compensation.origin.bytes.bytea), \(only ? Int64(1) : Int64(0)), \(Int64(bitPattern: clock)), \(empty))
                    RETURNING server_version
                ), p AS (
                    UPDATE coffer_sync_partitions SET latest_version = (SELECT server_version FROM h)
                    WHERE partition = \(partition)
                )
                SELECT (SELECT server_version FROM h) FROM (SELECT pg_notify(\(SyncStore.channel), \(partition))) AS notified
                """, logger: logger)
            var version: Int64 = 0
            for try await value in rows.decode(Int64.self) { version = value }
            return UInt64(version)
        }
    }
}
