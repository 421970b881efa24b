// CollectionChange: what an observer of Results, a List, a MutableSet or
// LinkingObjects is told, and the indices copied out of the C change set.

internal import CCoffer

/// A change of an observed collection, as Realm's `RealmCollectionChange`.
///
/// ```swift
/// let token = dogs.observe { change in
///     switch change {
///     case .initial(let dogs):
///         print("\(dogs.count) dogs")
///     case .update(_, let deletions, let insertions, let modifications):
///         print(deletions, insertions, modifications)
///     case .error(let error):
///         print(error)
///     }
/// }
/// ```
///
/// As in Realm Swift, `deletions` and `modifications` are indices in the
/// collection as it was before the change, `insertions` indices in the
/// collection as it is now; an element of a list moved is a deletion plus an
/// insertion, and so is an element of sorted results that changed places.
/// An empty change is never delivered.
public enum CollectionChange<CollectionType> {
    /// The first call: the collection as it is when observing began.
    case initial(CollectionType)
    /// The collection changed: elements at `deletions` (old indices) went,
    /// elements at `insertions` (new indices) came, and elements at
    /// `modifications` (old indices) changed.
    case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
    /// Observing could not begin (an unknown key path, a closed database) or
    /// the changes could not be read; no call follows.
    case error(Error)
}

/// The indices of one collection change set, copied from the C core during
/// its callback (Realm's `modifications_new` and moves are kept for tests
/// and the folding Realm Swift does).
struct CollectionIndices: Sendable, Equatable {
    var deletions: [Int] = []
    var insertions: [Int] = []
    var modifications: [Int] = []
    var modificationsNew: [Int] = []
    var moves: [(from: Int, to: Int)] = []
    var cleared = false
    var rootDeleted = false
    /// For results observed as a query: the keys of the results at
    /// ``version``, in order, so that results read at that version need not
    /// run their query again; nil for other collections.
    var resultKeys: [UInt64]?
    /// The version of the file the change brings the collection to (0 when
    /// unknown).
    var version: UInt64 = 0

    init() {}

    /// Copies `changes`, borrowed for the duration of a callback that got
    /// `txn`.
    init(copying changes: OpaquePointer, txn: OpaquePointer? = nil) {
        func indices(_ kind: coffer_change_kind) -> [Int] {
            let count = coffer_collection_changes_count(changes, Int32(kind.rawValue))
            var raw = [UInt64](repeating: 0, count: count)
            let copied = coffer_collection_changes_copy(changes, Int32(kind.rawValue), &raw)
            return raw.prefix(copied).map { Int($0) }
        }
        deletions = indices(COFFER_CHANGE_DELETIONS)
        insertions = indices(COFFER_CHANGE_INSERTIONS)
        modifications = indices(COFFER_CHANGE_MODIFICATIONS)
        modificationsNew = indices(COFFER_CHANGE_MODIFICATIONS_NEW)
        for i in 0..<coffer_collection_changes_move_count(changes) {
            var from: UInt64 = 0
            var to: UInt64 = 0
            if coffer_collection_changes_move(changes, i, &from, &to) == COFFER_OK {
                moves.append((Int(from), Int(to)))
            }
        }
        cleared = coffer_collection_changes_cleared(changes) != 0
        rootDeleted = coffer_collection_changes_root_deleted(changes) != 0
        var keys: UnsafePointer<UInt64>?
        var count = 0
        if let txn, coffer_txn_version(txn, &version) == COFFER_OK,
           coffer_collection_changes_result_keys(changes, &keys, &count) != 0 {
            resultKeys = count == 0 ? [] : Array(UnsafeBufferPointer(start: keys, count: count))
        }
    }

    static func == (lhs: CollectionIndices, rhs: CollectionIndices) -> Bool {
        lhs.deletions == rhs.deletions && lhs.insertions == rhs.insertions
            && lhs.modifications == rhs.modifications && lhs.modificationsNew == rhs.modificationsNew
            && lhs.moves.map(\.from) == rhs.moves.map(\.from) && lhs.moves.map(\.to) == rhs.moves.map(\.to)
            && lhs.cleared == rhs.cleared && lhs.rootDeleted == rhs.rootDeleted
    }
}

extension CollectionChange {
    /// The change `raw` reports for `collection`; nil for a raw change of
    /// another kind.
    init?(_ raw: RawChange, _ collection: CollectionType?) {
        switch raw {
        case .initial:
            guard let collection else { return nil }
            self = .initial(collection)
        case .collection(let indices):
            guard let collection else { return nil }
            self = .update(collection, deletions: indices.deletions, insertions: indices.insertions,
                           modifications: indices.modifications)
        case .error(let error):
            self = .error(error)
        case .object, .map, .database:
            return nil
        }
    }

    /// The same change for another form of the collection (a frozen one).
    func map<Other>(_ transform: (CollectionType) -> Other) -> CollectionChange<Other> {
        switch self {
        case .initial(let collection):
            return .initial(transform(collection))
        case .update(let collection, let deletions, let insertions, let modifications):
            return .update(transform(collection), deletions: deletions, insertions: insertions, modifications: modifications)
        case .error(let error):
            return .error(error)
        }
    }
}
