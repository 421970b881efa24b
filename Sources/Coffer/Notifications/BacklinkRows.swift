// Linking objects' rows: the query of the objects linking here tells each
// object once; linking objects hold an object once per link (a list that
// holds the target twice links twice), as Realm's backlink views do, and so
// do their results narrowed or sorted (realm-core runs a query over a
// backlink view row by row, keeping every row of an object that matches).
// Each change set of the query becomes the rows' own by reading them at the
// change's version.

import Foundation
internal import CCoffer

/// Turns the change sets of a query of the objects linking to an object
/// (`origin == $0`, alone or joined with a filter and a sort) into those of
/// the rows read: one per link, in the order the rows are read in (by origin
/// key for linking objects, the query's own order for their results), an
/// object's rows together.
final class BacklinkRows: @unchecked Sendable {  // used by one observer's calls, one at a time
    /// The origin keys of the rows at a database's version, one per link.
    private let read: (Database) -> [UInt64]
    /// The origin keys of the rows last told, one per link.
    private var previous: [UInt64] = []
    /// The keys of the query's rows last told, one per object, which its
    /// deletions and modifications count in.
    private var previousObjects: [UInt64] = []

    /// Rows of the linking objects at `location`.
    convenience init(_ location: CollectionLocation) {
        self.init { location.linkKeys(in: $0) }
    }

    /// Rows `read` gives at a database's version.
    init(reading read: @escaping (Database) -> [UInt64]) {
        self.read = read
    }

    func translate(_ raw: RawChange, _ database: Database?) -> RawChange? {
        switch raw {
        case .initial:
            if let database {
                previous = read(database)
                previousObjects = Self.grouped(previous).order
            }
            return raw
        case .collection(let indices):
            guard let database else { return raw }
            let current = read(database)
            let rows = Self.rows(indices, objects: previousObjects, from: previous, to: current)
            previous = current
            previousObjects = indices.resultKeys ?? Self.grouped(current).order
            return rows.isEmpty ? nil : .collection(rows)
        case .object, .map, .database, .error:
            return raw
        }
    }

    /// The change from the rows `old` to the rows `new`, given the change
    /// `change` of the query of their objects, whose rows before it were
    /// `objects` (each object once). An object that stays in its place keeps
    /// its first rows; links it gained are inserted after them, links it
    /// lost are deleted from its last rows; its kept rows are modified when
    /// the object is. An object the query moved (deleted and inserted: a
    /// sort key changed) has all its old rows deleted and its new ones
    /// inserted.
    static func rows(_ change: CollectionIndices, objects: [UInt64], from old: [UInt64], to new: [UInt64]) -> CollectionIndices {
        let (oldRows, oldOrder) = grouped(old)
        let (newRows, _) = grouped(new)
        var result = CollectionIndices()
        result.resultKeys = nil
        result.version = change.version
        result.rootDeleted = change.rootDeleted
        func keys(_ indices: [Int]) -> Set<UInt64> {
            Set(indices.compactMap { $0 < objects.count ? objects[$0] : nil })
        }
        let modified = keys(change.modifications)
        let moved = keys(change.deletions).filter { newRows[$0] != nil }
        for key in oldOrder {
            let was = oldRows[key]!
            let kept = moved.contains(key) ? 0 : min(was.count, newRows[key]?.count ?? 0)
            result.deletions += was.dropFirst(kept)
            if modified.contains(key), kept > 0 {
                result.modifications += was.prefix(kept)
                result.modificationsNew += newRows[key]!.prefix(kept)
            }
        }
        for (key, now) in newRows {
            let kept = moved.contains(key) ? 0 : min(now.count, oldRows[key]?.count ?? 0)
            result.insertions += now.dropFirst(kept)
        }
        result.deletions.sort()
        result.insertions.sort()
        result.modifications.sort()
        result.modificationsNew.sort()
        result.cleared = change.cleared && new.isEmpty
        return result
    }

    /// Each key's row positions, and the keys in order of their first row.
    static func grouped(_ keys: [UInt64]) -> (rows: [UInt64: [Int]], order: [UInt64]) {
        var rows: [UInt64: [Int]] = [:]
        var order: [UInt64] = []
        for (row, key) in keys.enumerated() {
            if rows[key] == nil { order.append(key) }
            rows[key, default: []].append(row)
        }
        return (rows, order)
    }
}

extension CollectionLocation {
    /// The origin keys of the links to the owner at `database`'s version
    /// (this location's database or a frozen one of the same file), one per
    /// link; none once the owner is gone.
    func linkKeys(in database: Database) -> [UInt64] {
        let place = database === self.database
            ? self
            : moved(to: ManagedState(database: database, binding: owner.binding, key: owner.key))
        guard !place.owner.isGone else { return [] }
        return place.backlinkKeys()
    }
}
