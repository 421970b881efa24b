// Linking objects' rows: the query of the objects linking here tells each
// object once, in creation order; linking objects hold an object once per
// link (a list that holds the target twice links twice), as Realm's backlink
// views do. Each change set of the query becomes the linking objects' own
// by reading the backlinks at the change's version.

import Foundation
internal import CCoffer

/// Turns the change sets of the query `origin == $0` into those of the
/// linking objects: rows are links, ordered by origin key (the order
/// `coffer_object_backlinks()` reads them in), an object's rows together.
final class BacklinkRows: @unchecked Sendable {  // used by one observer's calls, one at a time
    private let location: CollectionLocation
    /// The origin keys of the rows last told, one per link.
    private var previous: [UInt64] = []

    init(_ location: CollectionLocation) {
        self.location = location
    }

    func translate(_ raw: RawChange, _ database: Database?) -> RawChange? {
        switch raw {
        case .initial:
            if let database { previous = keys(in: database) }
            return raw
        case .collection(let indices):
            guard let database else { return raw }
            let current = keys(in: database)
            defer { previous = current }
            let rows = Self.rows(indices, from: previous, to: current)
            return rows.isEmpty ? nil : .collection(rows)
        case .object, .map, .database, .error:
            return raw
        }
    }

    /// The origin keys of the links at `database`'s version; none once the
    /// object linked to is gone.
    private func keys(in database: Database) -> [UInt64] {
        let place = database === location.database
            ? location
            : location.moved(to: ManagedState(database: database, binding: location.owner.binding, key: location.owner.key))
        guard !place.owner.isGone else { return [] }
        return place.backlinkKeys()
    }

    /// The change from the links `old` to the links `new`, given the change
    /// of the objects (`objects`: indices of each object once). An object
    /// that stays keeps its first rows; links it gained are inserted after
    /// them, links it lost are deleted from its last rows; its kept rows are
    /// modified when the object is.
    static func rows(_ objects: CollectionIndices, from old: [UInt64], to new: [UInt64]) -> CollectionIndices {
        let (oldRows, oldOrder) = grouped(old)
        let (newRows, _) = grouped(new)
        var result = CollectionIndices()
        result.resultKeys = nil
        result.version = objects.version
        result.rootDeleted = objects.rootDeleted
        let modified = Set(objects.modifications.compactMap { $0 < oldOrder.count ? oldOrder[$0] : nil })
        for key in oldOrder {
            let was = oldRows[key]!
            let now = newRows[key] ?? []
            result.deletions += was.dropFirst(now.count)
            if modified.contains(key) {
                let kept = Array(was.prefix(now.count))
                result.modifications += kept
                result.modificationsNew += now.prefix(kept.count)
            }
        }
        for (key, now) in newRows {
            let was = oldRows[key] ?? []
            result.insertions += now.dropFirst(was.count)
        }
        result.deletions.sort()
        result.insertions.sort()
        result.modifications.sort()
        result.modificationsNew.sort()
        result.cleared = objects.cleared && new.isEmpty
        return result
    }

    /// Each key's row positions, and the keys in order of their first row.
    private static func grouped(_ keys: [UInt64]) -> (rows: [UInt64: [Int]], order: [UInt64]) {
        var rows: [UInt64: [Int]] = [:]
        var order: [UInt64] = []
        for (row, key) in keys.enumerated() {
            if rows[key] == nil { order.append(key) }
            rows[key, default: []].append(row)
        }
        return (rows, order)
    }
}
