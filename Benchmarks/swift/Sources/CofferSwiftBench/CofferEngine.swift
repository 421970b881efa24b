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

    required convenience init(directory: URL) throws {
        try self.init(directory: directory, encrypted: false)
    }

    init(directory: URL, encrypted: Bool) throws {
        var config = Database.Configuration(fileURL: directory.appendingPathComponent("bench.coffer"))
        config.objectTypes = [CofferEntity.self]
        config.encryptionKey = encrypted ? benchmarkKey : nil
        db = try Database(configuration: config)
    }

    private var count: UInt64 {
        _ = db.refresh()
        return UInt64(db.objects(CofferEntity.self).count)
    }

    func insertBulk(_ w: Workload) throws -> UInt64 {
        try db.write {
            for e in w.entities.prefix(w.n) {
                try db.add(CofferEntity.unmanaged(e))
            }
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
    // counted. Each compiles its query text anew (the overlay has no prepared
    // queries); the count runs in the C core without making objects.

    func indexedEquality(_ w: Workload) throws -> UInt64 {
        let all = db.objects(CofferEntity.self)
        var check: UInt64 = 0
        for q in 0..<w.queries {
            let group = w.queryGroup(q)
            check += UInt64(all.where { $0.group == group }.count)
        }
        return check
    }

    func filterScan(_ w: Workload) throws -> UInt64 {
        let all = db.objects(CofferEntity.self)
        var check: UInt64 = 0
        for s in 0..<w.scans {
            let threshold = w.scanThreshold(s)
            check += UInt64(all.where { $0.i64 > threshold }.count)
        }
        return check
    }

    func stringPrefix(_ w: Workload) throws -> UInt64 {
        let all = db.objects(CofferEntity.self)
        var check: UInt64 = 0
        for q in 0..<w.prefixQueries {
            let prefix = w.queryPrefix(q)
            check += UInt64(all.where { $0.name.starts(with: prefix) }.count)
        }
        return check
    }

    func deleteAll(_ w: Workload) throws -> UInt64 {
        try db.write { try db.deleteAll() }
        return count
    }

    func singleWrites(_ w: Workload) throws -> UInt64 {
        for e in w.entities[w.n...] {
            try db.write { try db.add(CofferEntity.unmanaged(e)) }
        }
        return count
    }
}

final class EncryptedCofferEngine: CofferEngine {
    required convenience init(directory: URL) throws {
        try self.init(directory: directory, encrypted: true)
    }
}
