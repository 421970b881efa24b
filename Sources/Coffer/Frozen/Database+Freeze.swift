// Freezing a live Database into an immutable view pinned to one version of the
// file, and thawing a frozen one back into a live database on the calling
// thread.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
internal import CCoffer

extension Database {
    /// An immutable view of the version this database reads, readable from
    /// any thread or task, as Realm's `freeze()`.
    ///
    /// ```swift
    /// let frozen = db.freeze()
    /// let dogs = Frozen(frozen.objects(Dog.self))   // Sendable
    /// Task.detached { print(dogs.value.count) }
    /// ```
    ///
    /// The view pins its version in the file (a read transaction of its own),
    /// so it keeps showing the same data whatever is written later; writers are
    /// not held up, but the file cannot reuse the pages of that version until
    /// the last frozen database, object, results or collection of it goes away,
    /// and it counts against ``Configuration/maximumNumberOfActiveVersions``.
    /// Freezing again while the snapshot is the same returns the same view. If
    /// another ``Database`` or process committed since this database's snapshot
    /// was taken, freezing first moves this database to the newest version, as
    /// ``refresh()`` does, so that the frozen view and this database agree.
    ///
    /// Writing through a frozen database, or a frozen object or collection,
    /// stops the program with a message saying so; ``thaw()`` gives the live
    /// database again. Freezing a frozen database returns it.
    ///
    /// Freezing inside a write transaction, or from another thread than the
    /// database's own, stops the program, as in Realm.
    public func freeze() -> Database {
        if isFrozen { return self }
        do {
            return try frozenView()
        } catch {
            fail(error)
        }
    }

    /// The live counterpart of a frozen database, for the calling thread: the
    /// database it was frozen from where that one may be used (its own thread,
    /// or its actor), otherwise a new live database on the same file confined
    /// to the calling thread. A live database returns itself.
    public func thaw() -> Database {
        guard isFrozen else { return self }
        if let live = liveSource, live.confinement.allowsCurrentThread != false {
            return live
        }
        // Its classes are copied under the lock: other threads may bind more.
        let access = frozenAccess(); defer { access?.unlock() }
        return Database(sharing: self, confinement: .thread(pthread_self()))
    }

    /// The frozen view of this live database's snapshot, made or reused.
    func frozenView() throws(CofferError) -> Database {
        try checkThread()
        guard writeTransaction == nil else {
            throw CofferError(.misuse, "cannot freeze inside a write transaction: a frozen view shows committed data; commit or cancel the write first")
        }
        var liveVersion = try Self.version(of: try currentTransaction())
        if let frozen = latestFrozen, frozen.frozenVersion == liveVersion {
            return frozen
        }
        while true {
            var txn: OpaquePointer?
            try CofferError.check(coffer_txn_begin(handle, Int32(COFFER_TXN_READ), &txn))
            let version: UInt64
            do {
                version = try Self.version(of: txn!)
            } catch {
                coffer_txn_free(txn)
                throw error
            }
            if version == liveVersion {
                let frozen = Database(sharing: self, confinement: .frozen, frozenTransaction: txn, frozenVersion: version)
                frozen.liveSource = self
                latestFrozen = frozen
                return frozen
            }
            // This database reads an older version than the newest: move it
            // there, and try again in case another commit lands in between.
            coffer_txn_free(txn)
            endReadTransaction()
            liveVersion = try Self.version(of: try currentTransaction())
        }
    }

    /// The version of the file `txn` reads.
    static func version(of txn: OpaquePointer) throws(CofferError) -> UInt64 {
        var version: UInt64 = 0
        try CofferError.check(coffer_txn_version(txn, &version))
        return version
    }
}
