// Durability: how much a returned commit survives (coffer_durability), its
// configuration and flushing on demand.

import Foundation
internal import CCoffer

extension Database {
    /// How much a commit that returned survives, as SQLite's `synchronous`.
    ///
    /// Whatever the level, an application crash (the process killed, even
    /// with `SIGKILL`) loses no commit that returned: the data is in the
    /// operating system's cache. The levels differ in a crash of the system
    /// (kernel panic, power loss).
    public enum Durability: Sendable, Hashable, CaseIterable {
        /// The default: a commit that returned survives a system crash. Each
        /// commit flushes its pages to the disk, then the page that makes it
        /// current.
        case full
        /// Each commit flushes its data pages; the page that makes it current
        /// is flushed with the next commit (or ``Database/flushToDisk()``). A
        /// system crash may lose the last commit(s) but never damages the
        /// file: it opens at an earlier, complete commit.
        case normal
        /// No commit flushes anything; the system writes the pages back when
        /// it chooses. A system crash can lose recent commits and, on file
        /// systems that reorder writes, leave the file damaged
        /// (``Database/verify()`` reports it). Only for data that can be
        /// rebuilt.
        case none

        var cValue: coffer_durability {
            switch self {
            case .full: COFFER_DURABILITY_FULL
            case .normal: COFFER_DURABILITY_NORMAL
            case .none: COFFER_DURABILITY_NONE
            }
        }

        init(_ value: coffer_durability) {
            switch value {
            case COFFER_DURABILITY_NORMAL: self = .normal
            case COFFER_DURABILITY_NONE: self = .none
            default: self = .full
            }
        }
    }

    /// The durability of this database's commits: the configuration's
    /// ``Configuration/durability`` for a file, ``Durability/none`` for an
    /// in-memory database.
    ///
    /// - Throws: ``CofferError`` `.misuse` from another thread or once invalidated.
    public var durability: Durability {
        get throws {
            try checkThread()
            var out = COFFER_DURABILITY_FULL
            try CofferError.check(coffer_db_durability(handle, &out))
            return Durability(out)
        }
    }

    /// Flushes every commit of the file so far to the disk, whatever the
    /// ``durability``: they then survive a system crash. Nothing to do for a
    /// read-only or in-memory database.
    ///
    /// - Throws: ``CofferError`` `.misuse` from another thread, `.io` when the
    ///   flush fails (with the system's reason).
    public func flushToDisk() throws {
        try checkThread()
        try CofferError.check(coffer_db_sync(handle))
    }
}
