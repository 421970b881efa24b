// The benchmark engine for SQLite through GRDB, set up as the C harness sets up
// SQLite.

import Foundation
import GRDB

/// The workload's row, as a GRDB record with hand-written row coding (GRDB's
/// fastest record path).
struct EntityRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "entity"
    var entity: Entity

    init(_ entity: Entity) { self.entity = entity }

    init(row: Row) throws {
        entity = Entity(id: row[0], flag: row[1], i32: row[2], i64: row[3], f: row[4], d: row[5],
                        text: row[6], blob: row[7], group: row[8], name: row[9])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = entity.id
        container["flag"] = entity.flag
        container["i32"] = entity.i32
        container["i64"] = entity.i64
        container["f"] = entity.f
        container["d"] = entity.d
        container["text"] = entity.text
        container["blob"] = entity.blob
        container["grp"] = entity.group
        container["name"] = entity.name
    }
}

/// SQLite through GRDB, set up as the C harness sets up SQLite: one table with
/// the same columns and indexes, WAL, synchronous=FULL, a 64 MiB page cache.
final class GRDBEngine: Engine {
    let queue: DatabaseQueue
    let path: String

    init(directory: URL) throws {
        var config = Configuration()
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -65536")
        }
        path = directory.appendingPathComponent("bench.sqlite").path
        queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write { db in
            try db.create(table: "entity") { t in
                t.primaryKey("id", .integer)
                t.column("flag", .boolean).notNull()
                t.column("i32", .integer).notNull()
                t.column("i64", .integer).notNull()
                t.column("f", .double).notNull()
                t.column("d", .double).notNull()
                t.column("text", .text).notNull()
                t.column("blob", .blob).notNull()
                t.column("grp", .integer).notNull().indexed()
                t.column("name", .text).notNull().indexed()
            }
        }
    }

    private func count() throws -> UInt64 {
        UInt64(try queue.read { try EntityRecord.fetchCount($0) })
    }

    func insertBulk(_ w: Workload) throws -> UInt64 {
        try queue.write { db in
            for e in w.entities.prefix(w.n) {
                try EntityRecord(e).insert(db)
            }
        }
        return try count()
    }

    func readByPrimaryKey(_ w: Workload) throws -> UInt64 {
        try queue.read { db in
            var check: UInt64 = 0
            for id in w.order {
                guard let record = try EntityRecord.fetchOne(db, key: id) else {
                    throw BenchFailure("no row with id \(id)")
                }
                check = Check.add(check, record.entity)
            }
            return check
        }
    }

    func updateAll(_ w: Workload) throws -> UInt64 {
        try queue.write { db in
            let update = try db.cachedStatement(sql: "UPDATE entity SET i64 = ?, d = ? WHERE id = ?")
            var updated: UInt64 = 0
            for id in w.order {
                let (i64, d) = w.updatedValues(id: id)
                try update.execute(arguments: [i64, d, id])
                updated += UInt64(db.changesCount)
            }
            return updated
        }
    }

    func readAllInOrder(_ w: Workload) throws -> UInt64 {
        try queue.read { db in
            var check: UInt64 = 0
            var position: UInt64 = 0
            let rows = try EntityRecord.order(Column("id")).fetchCursor(db)
            while let record = try rows.next() {
                check = Check.ordered(check, position: position, record.entity)
                position += 1
            }
            return check
        }
    }

    // The C harness's SQL, as cached (prepared once) statements.

    private func countEach(_ sql: String, _ arguments: [DatabaseValueConvertible]) throws -> UInt64 {
        try queue.read { db in
            let statement = try db.cachedStatement(sql: sql)
            var check: UInt64 = 0
            for argument in arguments {
                check += UInt64(try Int.fetchOne(statement, arguments: [argument]) ?? 0)
            }
            return check
        }
    }

    func indexedEquality(_ w: Workload) throws -> UInt64 {
        try countEach("SELECT count(*) FROM entity WHERE grp = ?", (0..<w.queries).map(w.queryGroup))
    }

    func filterScan(_ w: Workload) throws -> UInt64 {
        try countEach("SELECT count(*) FROM entity WHERE i64 > ?", (0..<w.scans).map(w.scanThreshold))
    }

    func stringPrefix(_ w: Workload) throws -> UInt64 {
        try countEach("SELECT count(*) FROM entity WHERE name GLOB ?", (0..<w.prefixQueries).map { w.queryPrefix($0) + "*" })
    }

    func deleteAll(_ w: Workload) throws -> UInt64 {
        _ = try queue.write { try EntityRecord.deleteAll($0) }
        return try count()
    }

    func singleWrites(_ w: Workload) throws -> UInt64 {
        for e in w.entities[w.n..<(w.n + w.singleWrites)] {
            try queue.write { try EntityRecord(e).insert($0) }
        }
        return try count()
    }

    /// GRDB's async writes go through a DatabasePool (WAL, as the queue's
    /// file already is). The pool's writer is set to synchronous=FULL, as the
    /// queue is (a pool chooses NORMAL by itself), and checked, so that every
    /// commit is durable as Coffer's are.
    func asyncSingleWrites(_ w: Workload) throws -> UInt64 {
        let path = self.path
        let entities = Array(w.entities[(w.n + w.singleWrites)...])
        return try waitFor {
            let pool = try DatabasePool(path: path)
            let synchronous = try await pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL; PRAGMA cache_size = -65536")
                return try Int.fetchOne(db, sql: "PRAGMA synchronous")
            }
            guard synchronous == 2 else {
                throw BenchFailure("the pool's writer runs with synchronous=\(synchronous ?? -1), not FULL (2)")
            }
            for e in entities {
                try await pool.write { try EntityRecord(e).insert($0) }
            }
            return UInt64(try await pool.read { try EntityRecord.fetchCount($0) })
        }
    }
}
