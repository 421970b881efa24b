// DatabaseMapChange: what an observer of a Map is told, and the keys copied
// out of the C change set.

internal import CCoffer

/// A change of an observed ``Map``, as Realm's `RealmMapChange`: the keys
/// deleted (they were in the old map), inserted (new in the map) and
/// modified (kept, with another value, or for a map of objects, an object
/// that changed).
///
/// ```swift
/// let token = person.scores.observe { change in
///     if case .update(_, let deletions, let insertions, let modifications) = change {
///         print(deletions, insertions, modifications)
///     }
/// }
/// ```
public enum DatabaseMapChange<Collection> {
    /// The first call: the map as it is when observing began.
    case initial(Collection)
    /// The map changed: keys deleted, inserted and modified.
    case update(Collection, deletions: [String], insertions: [String], modifications: [String])
    /// Observing could not begin or the changes could not be read; no call follows.
    case error(Error)
}

/// The keys of one map change set, copied from the C core during its callback.
struct MapChangeKeys: Sendable, Equatable {
    var deletions: [String] = []
    var insertions: [String] = []
    var modifications: [String] = []
    var rootDeleted = false

    init() {}

    /// Copies `changes`, borrowed for the duration of a callback.
    init(copying changes: OpaquePointer) {
        func keys(_ kind: coffer_change_kind) -> [String] {
            (0..<coffer_map_changes_count(changes, Int32(kind.rawValue))).compactMap { i in
                var key = coffer_bytes()
                guard coffer_map_changes_key(changes, Int32(kind.rawValue), i, &key) == COFFER_OK else { return nil }
                return String(decoding: UnsafeRawBufferPointer(start: key.data, count: key.size), as: UTF8.self)
            }
        }
        deletions = keys(COFFER_CHANGE_DELETIONS)
        insertions = keys(COFFER_CHANGE_INSERTIONS)
        modifications = keys(COFFER_CHANGE_MODIFICATIONS)
        rootDeleted = coffer_map_changes_root_deleted(changes) != 0
    }
}

extension DatabaseMapChange {
    /// The change `raw` reports for `map`; nil for a raw change of another kind.
    init?(_ raw: RawChange, _ map: Collection?) {
        switch raw {
        case .initial:
            guard let map else { return nil }
            self = .initial(map)
        case .map(let keys):
            guard let map else { return nil }
            self = .update(map, deletions: keys.deletions, insertions: keys.insertions, modifications: keys.modifications)
        case .error(let error):
            self = .error(error)
        case .collection, .object, .database:
            return nil
        }
    }
}
