// InitialBaseline: whether a commit came between an observer's
// registration and the version its first call was read at; the core folds
// such a commit into that first call, and a store told of nothing would keep
// showing what it read before.

internal import CCoffer

/// The newest committed version when an observer was registered, to tell at
/// its first call whether a commit came in between.
struct InitialBaseline {
    private let version: UInt64?

    /// The baseline of `database`'s file now; take it before registering.
    init(_ database: Database) {
        version = database.newestCommittedVersion()
    }

    /// Whether a first call read at `initial` includes a commit made after
    /// the baseline; true when either version is unknown, so that a change
    /// is never missed.
    func includesCommits(_ initial: UInt64) -> Bool {
        guard let version, initial != 0 else { return true }
        return initial > version
    }
}

extension Database {
    /// The newest version committed to the file; nil if it cannot be read.
    func newestCommittedVersion() -> UInt64? {
        var txn: OpaquePointer?
        guard coffer_txn_begin(handle, Int32(COFFER_TXN_READ), &txn) == COFFER_OK, let txn else { return nil }
        defer { coffer_txn_free(txn) }
        var version: UInt64 = 0
        return coffer_txn_version(txn, &version) == COFFER_OK ? version : nil
    }
}
