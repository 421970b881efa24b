// What a session asks of PostgreSQL: registering a client and its schema
// (HELLO), integrating an upload batch in one transaction (UPLOAD), reading
// the partition's history after a version (DOWNLOAD), and recording a
// client's download progress (DOWNLOAD_ACK). Every call is one statement or
// one transaction; nothing is cached between calls.
import CofferSyncProtocol
import Logging
import NIOCore
import PostgresNIO

struct SyncStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// The NOTIFY channel every instance listens on; the payload is the partition.
    static let channel = "coffer_sync"

    struct Registration {
        var lastClientVersion: UInt64
        var latestServerVersion: UInt64
        /// The last server version the client acknowledged (DOWNLOAD_ACK).
        var lastAckedServerVersion: UInt64
    }

    /// Records the client (and the user it syncs as; nil in development
    /// mode) and merges its schema into the partition's; throws
    /// `SchemaMismatch` for a breaking difference.
    func register(partition: String, client id: ClientID, user: String? = nil,
                  schema: SyncSchema) async throws -> Registration {
        try await client.withTransaction(logger: logger) { conn in
            try await conn.query("""
                INSERT INTO coffer_sync_partitions (partition, schema) VALUES (\(partition), \([UInt8]().bytea))
                ON CONFLICT DO NOTHING
                """, logger: logger)
            let (stored, latest) = try await lockPartition(partition, on: conn)
            let merged = try stored.merged(with: schema)
            if merged != stored {
                try await conn.query("""
                    UPDATE coffer_sync_partitions SET schema = \(merged.encoded.bytea) WHERE partition = \(partition)
                    """, logger: logger)
            }
            let rows = try await conn.query("""
                INSERT INTO coffer_sync_clients AS c (partition, client_id, user_id)
                VALUES (\(partition), \(id.bytes.bytea), \(user))
                ON CONFLICT (partition, client_id) DO UPDATE SET last_seen = now(), user_id = excluded.user_id
                RETURNING last_client_version, last_acked_server_version
                """, logger: logger)
            var last: Int64 = 0, acked: Int64 = 0
            for try await (version, ack) in rows.decode((Int64, Int64).self) { (last, acked) = (version, ack) }
            return Registration(lastClientVersion: UInt64(last), latestServerVersion: latest,
                                lastAckedServerVersion: UInt64(acked))
        }
    }

    /// Locks the partition's row until the transaction ends (so its server
    /// versions commit in order) and returns its schema and latest version.
    private func lockPartition(_ partition: String, on conn: PostgresConnection) async throws -> (SyncSchema, UInt64) {
        let rows = try await conn.query("""
            SELECT schema, latest_version FROM coffer_sync_partitions WHERE partition = \(partition) FOR UPDATE
            """, logger: logger)
        for try await (schema, latest) in rows.decode((ByteBuffer, Int64).self) {
            let bytes = schema.bytes
            return (bytes.isEmpty ? SyncSchema() : try SyncSchema(encoded: bytes), UInt64(latest))
        }
        throw StoreError("partition '\(partition)' has no row")
    }

    struct Integrated {
        /// The client's last integrated version after the batch.
        var lastClientVersion: UInt64
        /// The last server version the batch made, or the partition's latest if
        /// it made none (a repeated upload).
        var serverVersion: UInt64
        var madeAny: Bool
        /// The changes the write rules refused, in upload order (the
        /// history holds a compensating changeset for each).
        var refused: [RefusedWrite] = []
        /// With rules: the objects the client has after the batch (true) or
        /// deleted (false), as recorded in coffer_sync_client_objects.
        var given: [ObjectKey: Bool] = [:]
    }

    /// Who uploads, and the rules their writes are checked against.
    struct Writer: Sendable {
        var rules: PermissionRules
        var user: QueryUser
    }

    /// Integrates the changesets above the client's last integrated version,
    /// appends them to the history, records the client's progress and notifies
    /// every instance, all in one transaction. With `writer`, each change is
    /// checked against the write rules (Permissions/WriteGate): a refused one
    /// is left out of the state and of the history, and a compensating
    /// changeset of the service restates the object after the changeset.
    func integrate(partition: String, client id: ClientID, changesets: [Changeset],
                   writer: Writer? = nil) async throws -> Integrated {
        try await client.withTransaction(logger: logger) { conn in
            let (schema, latest) = try await lockPartition(partition, on: conn)
            let rows = try await conn.query("""
                SELECT last_client_version FROM coffer_sync_clients
                WHERE partition = \(partition) AND client_id = \(id.bytes.bytea)
                """, logger: logger)
            var last: UInt64 = 0
            for try await version in rows.decode(Int64.self) { last = UInt64(version) }
            let validator = ChangeValidator(schema: schema)
            let integrator = Integrator(connection: conn, partition: partition, logger: logger)
            var versions: [Int64] = [], clocks: [Int64] = [], encoded: [ByteBuffer] = []
            var origins: [ByteBuffer] = []
            var refused: [RefusedWrite] = []
            var given: [ObjectKey: Bool] = [:]
            for changeset in changesets where changeset.clientVersion > last {
                guard changeset.clientVersion <= UInt64(Int64.max) else {
                    throw BadChangeset("client version \(changeset.clientVersion) is out of range")
                }
                try validator.validate(changeset, origin: id)
                last = changeset.clientVersion
                guard let writer else {
                    try await integrator.integrate(changeset, origin: id)
                    versions.append(Int64(changeset.clientVersion))
                    clocks.append(Int64(bitPattern: changeset.clock))
                    encoded.append(changeset.encoded.bytea)
                    origins.append(id.bytes.bytea)
                    continue
                }
                let gate = WriteGate(connection: conn, partition: partition, rules: writer.rules, user: writer.user,
                                     logger: logger)
                let stamp = Stamp(clock: changeset.clock, client: id).sortKey
                var accepted: [Change] = []
                var refusedHere: [RefusedWrite] = []
                var refusedChanges: [ObjectKey: [Change]] = [:]
                for change in changeset.changes {
                    // The client has what it wrote, refused or not (a refusal
                    // restates it), and not what it deleted.
                    if case .delete = change { given[ObjectKey(change)] = false } else { given[ObjectKey(change)] = true }
                    let (className, pk) = change.object
                    // Once one change of an object is refused, so are the
                    // changeset's later changes of it.
                    if refusedHere.contains(where: { $0.className == className && $0.pk == pk }) {
                        refusedChanges[ObjectKey(change), default: []].append(change)
                        continue
                    }
                    if let refusal = try await gate.apply(change, stamp: stamp, integrator: integrator) {
                        refusedHere.append(refusal)
                        refusedChanges[ObjectKey(change), default: []].append(change)
                    } else {
                        accepted.append(change)
                    }
                }
                if !accepted.isEmpty || changeset.changes.isEmpty {
                    let kept = Changeset(clientVersion: changeset.clientVersion, clock: changeset.clock, changes: accepted)
                    versions.append(Int64(changeset.clientVersion))
                    clocks.append(Int64(bitPattern: changeset.clock))
                    encoded.append(kept.encoded.bytea)
                    origins.append(id.bytes.bytea)
                }
                guard !refusedHere.isEmpty else { continue }
                // The service's state of each refused object, stamped above the refused change.
                var compensating: [Change] = []
                for refusal in refusedHere {
                    let key = ObjectKey(className: refusal.className, pk: refusal.pk.encoded)
                    compensating += try await Compensation.changes(of: refusal.className, refusal.pk, partition: partition,
                                                                   undoing: refusedChanges[key] ?? [], on: conn, logger: logger)
                }
                let compensation = Changeset(clientVersion: 0, clock: changeset.clock &+ 1, changes: compensating)
                try await integrator.integrate(compensation, origin: Compensation.origin)
                versions.append(0)
                clocks.append(Int64(bitPattern: compensation.clock))
                encoded.append(compensation.encoded.bytea)
                origins.append(Compensation.origin.bytes.bytea)
                refused += refusedHere
            }
            if !given.isEmpty {
                try await ClientObjects.record(given, partition: partition, client: id, on: conn, logger: logger)
            }
            guard !versions.isEmpty else {
                if writer != nil {
                    try await conn.query("""
                        UPDATE coffer_sync_clients SET last_client_version = \(Int64(last)), last_seen = now()
                        WHERE partition = \(partition) AND client_id = \(id.bytes.bytea)
                        """, logger: logger)
                }
                return Integrated(lastClientVersion: last, serverVersion: latest, madeAny: false)
            }
            // The batch's history rows in one statement, server versions in
            // upload order; with them the partition's latest version, the
            // client's progress, and the notification.
            let made = try await conn.query("""
                WITH h AS (
                    INSERT INTO coffer_sync_history (partition, origin, client_version, clock, changeset)
                    SELECT \(partition), u.origin, u.version, u.clock, u.changeset
                    FROM unnest(\(origins)::bytea[], \(versions)::bigint[], \(clocks)::bigint[], \(encoded)::bytea[])
                         WITH ORDINALITY AS u(origin, version, clock, changeset, n)
                    ORDER BY u.n
                    RETURNING server_version
                ), p AS (
                    UPDATE coffer_sync_partitions SET latest_version = (SELECT max(server_version) FROM h)
                    WHERE partition = \(partition)
                ), c AS (
                    UPDATE coffer_sync_clients SET last_client_version = \(Int64(last)), last_seen = now()
                    WHERE partition = \(partition) AND client_id = \(id.bytes.bytea)
                )
                SELECT (SELECT max(server_version) FROM h)
                FROM (SELECT pg_notify(\(Self.channel), \(partition))) AS notified
                """, logger: logger)
            var serverVersion = latest
            for try await version in made.decode(Int64.self) { serverVersion = UInt64(version) }
            return Integrated(lastClientVersion: last, serverVersion: serverVersion, madeAny: true, refused: refused,
                              given: given)
        }
    }

    /// The partition's changesets after `version` made by clients other than
    /// `excluding`, in server version order, adding up to at most `maxBytes`
    /// of frame (or one changeset, if that alone is larger); and the
    /// partition's latest server version, read in the same statement: when
    /// no changeset comes back, the client has every other client's change up
    /// to `latest` (uploads append history and move `latest` in one
    /// transaction, with the partition's row locked), so the caught-up
    /// `DOWNLOAD` tells it how far its progress may move.
    func history(partition: String, after version: UInt64, excluding id: ClientID,
                 maxBytes: Int) async throws -> (changesets: [StoredChangeset], latest: UInt64) {
        let rows = try await client.query("""
            SELECT p.latest_version, h.server_version, h.origin, h.changeset
            FROM coffer_sync_partitions p
            LEFT JOIN (
                SELECT server_version, origin, changeset,
                       sum(octet_length(changeset) + 26) OVER (ORDER BY server_version) AS running,
                       row_number() OVER (ORDER BY server_version) AS n
                FROM (
                    SELECT server_version, origin, changeset FROM coffer_sync_history
                    WHERE partition = \(partition) AND server_version > \(Int64(version))
                      AND origin <> \(id.bytes.bytea)
                    ORDER BY server_version LIMIT 4096
                ) page
            ) h ON h.running <= \(Int64(maxBytes)) OR h.n = 1
            WHERE p.partition = \(partition)
            ORDER BY h.server_version
            """, logger: logger)
        var result: [StoredChangeset] = []
        var latest: UInt64 = 0
        for try await (last, sv, origin, changeset) in rows.decode((Int64, Int64?, ByteBuffer?, ByteBuffer?).self) {
            latest = UInt64(last)
            guard let sv, let origin, let changeset else { continue }
            let originBytes = origin.bytes
            guard originBytes.count == 16 else { throw StoreError("history row \(sv) has a malformed origin") }
            result.append(StoredChangeset(serverVersion: UInt64(sv), origin: ClientID(bytes: originBytes),
                                          encoded: changeset.bytes))
        }
        return (result, latest)
    }

    func latestVersion(partition: String) async throws -> UInt64 {
        let rows = try await client.query("""
            SELECT latest_version FROM coffer_sync_partitions WHERE partition = \(partition)
            """, logger: logger)
        for try await latest in rows.decode(Int64.self) { return UInt64(latest) }
        return 0
    }

    /// Records that the client integrated the history up to `version`.
    func recordDownloadAck(partition: String, client id: ClientID, version: UInt64) async throws {
        try await client.query("""
            UPDATE coffer_sync_clients
            SET last_acked_server_version = GREATEST(last_acked_server_version, \(Int64(clamping: version))),
                last_seen = now()
            WHERE partition = \(partition) AND client_id = \(id.bytes.bytea)
            """, logger: logger)
    }
}
