// How much a client has left to download (protocol 4's PROGRESS frame): the
// changeset bytes of a partition's history after a version, the client's own
// left out, counted in PostgreSQL without reading the changesets out.
import CofferSyncProtocol
import PostgresNIO

extension SyncStore {
    /// The bytes of the changesets of `partition` after `version` that a
    /// DOWNLOAD would carry to client `id` (its own uploads left out).
    func pendingBytes(partition: String, after version: UInt64, excluding id: ClientID) async throws -> UInt64 {
        let rows = try await client.query("""
            SELECT coalesce(sum(octet_length(changeset)), 0)::bigint FROM coffer_sync_history
            WHERE partition = \(partition) AND server_version > \(Int64(version))
              AND origin <> \(id.bytes.bytea)
            """, logger: logger)
        for try await bytes in rows.decode(Int64.self) { return UInt64(max(0, bytes)) }
        return 0
    }
}
