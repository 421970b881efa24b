// The benchmark engine for Coffer through the Swift overlay, plain and
// encrypted.

import Coffer
import Foundation

/// The workload's class, declared as an application using the overlay would.
final class CofferEntity: Object {
    @Persisted(primaryKey: true) var id: Int64 = 0
    @Persisted var flag = false
    @Persisted var i32: Int32 = 0
    @Persisted var i64: Int64 = 0
    @Persisted var f: Float = 0
    @Persisted var d = 0.0
    @Persisted var text = ""
    @Persisted var blob = Data()
    @Persisted(indexed: true) var group: Int64 = 0
    @Persisted(indexed: true) var name = ""

    var entity: Entity {
        Entity(id: id, flag: flag, i32: i32, i64: i64, f: f, d: d, text: text, blob: blob, group: group, name: name)
    }

    static func unmanaged(_ e: Entity) -> CofferEntity {
        let object = CofferEntity()
        object.id = e.id
        object.flag = e.flag
        object.i32 = e.i32
        object.i64 = e.i64
        object.f = e.f
        object.d = e.d
        object.text = e.text
        object.blob = e.blob
        object.group = e.group
        object.name = e.name
        return object
    }
}

/// Coffer through the Swift overlay, plain or encrypted.
class CofferEngine: Engine {
    let db: Database
    let configuration: Database.Configuration

    required convenience init(directory: URL) throws {
        try self.init(directory: directory, encrypted: false)
    }

    init(directory: URL, encrypted: Bool) throws {
        var config = Database.Configuration(fileURL: directory.appendingPathComponent("bench.coffer"))
        config.objectTypes = [CofferEntity.self]
        config.encryptionKey = encrypted ? benchmarkKey : nil
        configuration = config
        db = try Database(configuration: config)
    }

    private var count: UInt64 {
        _ = db.refresh()
        return UInt64(db.objects(CofferEntity.self).count)
    }

    func insertBulk(_ w: Workload) throws -> UInt64 {
        // A sequence of new objects, which the overlay writes many per call.
        try db.write {
            db.add(w.entities.prefix(w.n).lazy.map(CofferEntity.unmanaged))
        }
        return count
    }

    func readByPrimaryKey(_ w: Workload) throws -> UInt64 {
        var check: UInt64 = 0
        for id in w.order {
            guard let object = db.object(ofType: CofferEntity.self, forPrimaryKey: id) else {
                throw BenchFailure("no object with id \(id)")
            }
            check = Check.add(check, object.entity)
        }
        return check
    }

    func updateAll(_ w: Workload) throws -> UInt64 {
        var updated: UInt64 = 0
        try db.write {
            for id in w.order {
                guard let object = db.object(ofType: CofferEntity.self, forPrimaryKey: id) else {
                    throw BenchFailure("no object with id \(id) to update")
                }
                (object.i64, object.d) = w.updatedValues(id: id)
                updated += 1
            }
        }
        return updated
    }

    func readAllInOrder(_ w: Workload) throws -> UInt64 {
        var check: UInt64 = 0
        // Objects come in creation order, which is id order here.
        for (position, object) in db.objects(CofferEntity.self).enumerated() {
            check = Check.ordered(check, position: UInt64(position), object.entity)
        }
        return check
    }

    // The queries as an application writes them: a typed `where` per query,
    // counted. The overlay parses a query text once per database and rebinds
    // it for new arguments; the count runs in the C core without making objects.

    /// Adds up the counts of `runs` queries, the i-th made by `query(i)`.
    private func countEach(_ runs: Int, _ query: (Results<CofferEntity>, Int) -> Results<CofferEntity>) -> UInt64 {
        let all = db.objects(CofferEntity.self)
        return (0..<runs).reduce(0) { $0 + UInt64(query(all, $1).count) }
    }

    func indexedEquality(_ w: Workload) throws -> UInt64 {
        countEach(w.queries) { all, q in
            let group = w.queryGroup(q)
            return all.where { $0.group == group }
        }
    }

    func filterScan(_ w: Workload) throws -> UInt64 {
        countEach(w.scans) { all, s in
            let threshold = w.scanThreshold(s)
            return all.where { $0.i64 > threshold }
        }
    }

    func stringPrefix(_ w: Workload) throws -> UInt64 {
        countEach(w.prefixQueries) { all, q in
            let prefix = w.queryPrefix(q)
            return all.where { $0.name.starts(with: prefix) }
        }
    }

    func deleteAll(_ w: Workload) throws -> UInt64 {
        try db.write { db.deleteAll() }
        return count
    }

    func singleWrites(_ w: Workload) throws -> UInt64 {
        for e in w.entities[w.n..<(w.n + w.singleWrites)] {
            try db.write { db.add(CofferEntity.unmanaged(e)) }
        }
        return count
    }

    func asyncSingleWrites(_ w: Workload) throws -> UInt64 {
        let configuration = self.configuration
        let entities = Array(w.entities[(w.n + w.singleWrites)...])
        let written = try waitFor {
            let writer = AsyncCofferWriter()
            try await writer.open(configuration)
            return try await writer.insert(entities)
        }
        return written == count ? written : 0
    }
}

/// Writes from an actor with a database isolated to it, as async code does.
actor AsyncCofferWriter {
    private var db: Database!

    func open(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    /// Adds each entity in its own asyncWrite; returns the count after.
    func insert(_ entities: [Entity]) async throws -> UInt64 {
        for e in entities {
            try await db.asyncWrite { db.add(CofferEntity.unmanaged(e)) }
        }
        return UInt64(db.objects(CofferEntity.self).count)
    }
}

final class EncryptedCofferEngine: CofferEngine {
    required convenience init(directory: URL) throws {
        try self.init(directory: directory, encrypted: true)
    }
}
