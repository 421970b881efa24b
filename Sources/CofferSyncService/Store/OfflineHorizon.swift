// The maximum offline time (docs/SYNC.md, "Client reset"): a client whose
// last server version is followed by a change older than the limit has been
// away longer than the service keeps history for it, and must reset.
import Foundation
import PostgresNIO

extension SyncStore {
    /// The newest server version after `version` in the partition's history
    /// whose change is older than `seconds` (by its clock: the wall-clock
    /// milliseconds in its upper 48 bits, docs/SYNC.md "Clocks"); 0 for none.
    func changeOlderThan(_ seconds: Double, partition: String, after version: UInt64,
                         now: Date = Date()) async throws -> UInt64 {
        let cutoffMillis = max(0, (now.timeIntervalSince1970 - seconds) * 1000)
        let cutoff = Int64(bitPattern: UInt64(cutoffMillis) << 16)
        let rows = try await client.query("""
            SELECT coalesce(max(server_version), 0) FROM coffer_sync_history
            WHERE partition = \(partition) AND server_version > \(Int64(version)) AND clock < \(cutoff)
            """, logger: logger)
        for try await found in rows.decode(Int64.self) { return UInt64(found) }
        return 0
    }
}
