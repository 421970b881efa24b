// The live benchmark's GRDB side: the same 1,000 rows in SQLite (WAL, the
// writer at the run's synchronous level, checked) through a DatabasePool,
// observed by a ValueObservation that fetches them in order.

import Foundation
import GRDB

/// The live benchmark's row in SQLite.
struct LiveRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "live_row"
    var id: Int
    var value: Int
    var name: String

    init(id: Int, value: Int, name: String) {
        (self.id, self.value, self.name) = (id, value, name)
    }

    init(row: Row) throws {
        (id, value, name) = (row[0], row[1], row[2])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["value"] = value
        container["name"] = name
    }
}

final class GRDBLiveEngine: LiveEngine {
    static let key = "grdb"
    private let pool: DatabasePool
    private let rows: Int

    init(directory: URL, rows: Int, durability: LiveDurability) throws {
        var config = Configuration()
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -65536") }
        pool = try DatabasePool(path: directory.appendingPathComponent("live.sqlite").path, configuration: config)
        // The pool's writer chose NORMAL when it set up WAL mode: set the
        // run's level after opening, and check it.
        let (level, expected) = durability == .full ? ("FULL", 2) : ("NORMAL", 1)
        let synchronous = try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(level)")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        guard synchronous == expected else {
            throw BenchFailure("the pool's writer runs with synchronous=\(synchronous ?? -1), not \(level) (\(expected))")
        }
        self.rows = rows
        try pool.write { db in
            try db.create(table: LiveRecord.databaseTableName) { t in
                t.primaryKey("id", .integer)
                t.column("value", .integer).notNull()
                t.column("name", .text).notNull()
            }
            for id in 0..<rows { try LiveRecord(id: id, value: 0, name: "row \(id)").insert(db) }
        }
    }

    private static let ordered = "SELECT id, value, name FROM live_row ORDER BY id"

    func commitToCallback(commits: Int) throws -> [Double] {
        let clock = CommitClock()
        let observation = ValueObservation.tracking { db in try LiveRecord.fetchAll(db, sql: Self.ordered) }
        let cancellable = observation.start(
            in: pool, scheduling: .async(onQueue: DispatchQueue(label: "grdb-live-observer")),
            onError: { FileHandle.standardError.write(Data("grdb: \($0)\n".utf8)) },
            onChange: { records in
                // The value observed is the whole result, in id order.
                clock.markReady()
                let row = clock.expectedRow
                if records.indices.contains(row) { clock.saw(row: row, value: records[row].value) }
            })
        defer { cancellable.cancel() }
        try clock.awaitReady(Self.key)
        var samples: [Double] = []
        var writes: [Double] = []
        for n in 0..<commits {
            try pool.write { db in
                try db.execute(sql: "UPDATE live_row SET value = ? WHERE id = ?", arguments: [liveValue(n), n % rows])
                clock.start(row: n % rows, value: liveValue(n))
            }
            let returned = monotonicSeconds()
            samples.append(try clock.awaitCommit(Self.key, n + 1))
            writes.append(returned - clock.startedAt)
        }
        reportWriteShare(Self.key, writes: writes, total: samples)
        return samples
    }

    func refreshAfterOneChange(commits: Int) throws -> [Double] {
        let fetched = DispatchSemaphore(value: 0)
        let timings = FetchTimings()
        let observation = ValueObservation.tracking { db -> [LiveRecord] in
            let start = monotonicSeconds()
            let records = try LiveRecord.fetchAll(db, sql: Self.ordered)
            timings.append(monotonicSeconds() - start, records)
            return records
        }
        let cancellable = observation.start(
            in: pool, scheduling: .async(onQueue: DispatchQueue(label: "grdb-live-refresh")),
            onError: { FileHandle.standardError.write(Data("grdb: \($0)\n".utf8)) },
            onChange: { _ in fetched.signal() })
        defer { cancellable.cancel() }
        try awaitCallback(fetched, Self.key, commit: 0)
        timings.reset()
        var samples: [Double] = []
        for n in 0..<commits {
            let value = liveValue(commits + n)
            try pool.write { db in
                try db.execute(sql: "UPDATE live_row SET value = ? WHERE id = ?", arguments: [value, n % rows])
            }
            // A fetch that began before the commit may still be delivered:
            // wait for the one that shows it.
            while true {
                try awaitCallback(fetched, Self.key, commit: n + 1)
                if let last = timings.takeLast(), last.records.first(where: { $0.id == n % rows })?.value == value {
                    samples.append(last.seconds)
                    break
                }
            }
        }
        return samples
    }
}

/// The fetches a ValueObservation made, timed inside its tracking closure.
final class FetchTimings: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var fetches: [(seconds: Double, records: [LiveRecord])] = []

    func append(_ seconds: Double, _ records: [LiveRecord]) {
        lock.lock(); defer { lock.unlock() }
        fetches.append((seconds, records))
    }

    func reset() {
        lock.lock(); defer { lock.unlock() }
        fetches.removeAll()
    }

    /// The last fetch, clearing the others; nil when there was none.
    func takeLast() -> (seconds: Double, records: [LiveRecord])? {
        lock.lock(); defer { lock.unlock() }
        defer { fetches.removeAll() }
        return fetches.last
    }
}
