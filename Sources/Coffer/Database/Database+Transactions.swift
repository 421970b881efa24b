// Write transactions (begin, commit, cancel, write blocks), refresh, and the
// current transaction that reads use. As in Realm, beginWrite and cancelWrite
// do not throw and commitWrite throws only when the commit fails; calling them
// out of order stops the program.

internal import CCoffer

extension Database {
    /// True between ``beginWrite()`` and ``commitWrite()`` or ``cancelWrite()``,
    /// and inside ``write(_:)``.
    public var isInWriteTransaction: Bool {
        writeTransaction != nil
    }

    /// Runs `block` in a write transaction and commits it.
    ///
    /// ```swift
    /// try db.write {
    ///     db.add(dog)
    ///     dog.age += 1
    /// }
    /// ```
    ///
    /// If `block` throws, the transaction is cancelled and the error rethrown:
    /// nothing of it is written. If `block` itself commits or cancels, nothing more
    /// happens. Returns what `block` returns.
    ///
    /// - Throws: what `block` throws, or a ``CofferError``: `.misuse` if already
    ///   in a write transaction or called from another thread, `.readOnly` for a
    ///   read-only database, `.limit` above
    ///   ``Configuration/maximumNumberOfActiveVersions``, or the failure of the
    ///   commit (see ``commitWrite()``).
    @discardableResult
    public func write<Result>(_ block: () throws -> Result) throws -> Result {
        try beginWriteTransaction()
        do {
            let result = try block()
            if let txn = writeTransaction {
                try commit(txn)
            }
            return result
        } catch {
            if let txn = writeTransaction {
                abort(txn)
            }
            throw error
        }
    }

    /// Begins a write transaction, waiting until no other writer holds the file
    /// (in this or another process), and moves reads to the latest data.
    ///
    /// As in Realm, it does not throw: calling it inside a write transaction, on
    /// a read-only database or from another thread stops the program with a
    /// message saying so. ``write(_:)`` throws these instead.
    public func beginWrite() {
        do {
            try beginWriteTransaction()
        } catch {
            fail(error)
        }
    }

    func beginWriteTransaction() throws(CofferError) {
        try checkThread()
        if isFrozen {
            throw CofferError(.misuse, "a frozen Database cannot be written; thaw() it to write")
        }
        guard writeTransaction == nil else {
            throw CofferError(.misuse, "the database is already in a write transaction")
        }
        // Its write lock may already be taken for it, waiting for this actor.
        if asyncWrites.isBusy {
            throw CofferError(.misuse, "an asyncWrite of this database is under way; await it, or use asyncWrite for this write too")
        }
        endReadTransaction()
        var txn: OpaquePointer?
        try CofferError.check(coffer_txn_begin(handle, Int32(COFFER_TXN_WRITE), &txn))
        writeTransaction = txn
        contentVersion &+= 1
    }

    /// Commits the write transaction: once it returns, the changes are durable.
    ///
    /// Called outside a write transaction or from another thread, it stops the
    /// program, as Realm does.
    ///
    /// - Throws: ``CofferError`` `.mapFull`, `.fileTooLarge` or `.io` when the
    ///   commit failed, in which case nothing of the transaction was written and
    ///   it has ended.
    public func commitWrite() throws {
        try commit(usableWriteTransaction(for: "commitWrite()"))
    }

    /// Discards every change of the write transaction. Objects added in it become
    /// invalidated; managed objects read their old values again.
    ///
    /// Called outside a write transaction or from another thread, it stops the
    /// program, as Realm does.
    public func cancelWrite() {
        abort(usableWriteTransaction(for: "cancelWrite()"))
    }

    func commit(_ txn: OpaquePointer) throws(CofferError) {
        try flushPendingWrites()
        if let lockThread = writeLockThread {
            // Begun by an asyncWrite: its own thread must end it.
            writeLockThread = nil
            let failure = lockThread.commitAndWait(SendableHandle(pointer: txn))
            endWriteTransaction(txn, committed: failure == nil)
            if let failure { throw failure }
            return
        }
        let status = coffer_txn_commit(txn)
        endWriteTransaction(txn, committed: status == COFFER_OK)
        try CofferError.check(status)
    }

    /// Ends the write transaction without writing; aborting in LMDB cannot fail.
    func abort(_ txn: OpaquePointer) {
        if let lockThread = writeLockThread {
            writeLockThread = nil
            lockThread.abortAndWait(SendableHandle(pointer: txn))
        } else {
            _ = coffer_txn_abort(txn)
        }
        endWriteTransaction(txn, committed: false)
    }

    /// Lets go of the snapshot reads have used, so that the next read sees the
    /// latest commits of every ``Database`` and process, and calls the
    /// observers registered with `on: nil` whose data changed (see
    /// ``Results/observe(keyPaths:on:_:)``) before it returns.
    ///
    /// - Returns: true if a snapshot was let go or an observer was called;
    ///   false otherwise, and always inside a write transaction (which sees
    ///   the latest data) or for a frozen database.
    @discardableResult
    public func refresh() -> Bool {
        requireThread()
        guard !isFrozen, writeTransaction == nil else {
            return false
        }
        // Computes the changes of this handle's observers here and now; an
        // error reading them reaches the observers, not the caller.
        if notifications.state.withLock({ $0.observed }) {
            _ = coffer_db_refresh(handle)
        }
        let hadSnapshot = readTransaction != nil
        endReadTransaction()
        let called = deliverPendingCalls()
        return hadSnapshot || called
    }

    /// The transaction that reads use: the write transaction, or the snapshot,
    /// begun on first use. In a write transaction the assignments waiting in
    /// ``pendingWrites`` are written first, unless `flushing` is false (for
    /// adding another one).
    func currentTransaction(flushing: Bool = true) throws(CofferError) -> OpaquePointer {
        if let frozenLock {
            // Every read of a frozen database holds its lock (see frozenAccess()).
            precondition(frozenLock.isHeldByCurrentThread, "Coffer: a frozen Database was read without its lock")
        }
        try checkThread()
        if let writeTransaction {
            if flushing {
                try flushPendingWrites()
            }
            return writeTransaction
        }
        if let readTransaction {
            return readTransaction
        }
        var txn: OpaquePointer?
        try CofferError.check(coffer_txn_begin(handle, Int32(COFFER_TXN_READ), &txn))
        readTransaction = txn
        contentVersion &+= 1
        return txn!
    }

    /// The write transaction, or `.notInWriteTransaction` naming what needed it;
    /// the assignments waiting in ``pendingWrites`` are written first unless
    /// `flushing` is false.
    func requireWriteTransaction(for action: @autoclosure () -> String,
                                 flushing: Bool = true) throws(CofferError) -> OpaquePointer {
        try checkThread()
        if isFrozen {
            throw CofferError(.misuse, "cannot \(action()): it is frozen, and frozen objects and collections are read-only; thaw() it to change it")
        }
        guard let writeTransaction else {
            throw CofferError(.notInWriteTransaction, "cannot \(action()) outside a write transaction; call write {} or beginWrite() first")
        }
        if flushing {
            try flushPendingWrites()
        }
        return writeTransaction
    }

    /// The write transaction for `call`; stops the program when there is none.
    private func usableWriteTransaction(for call: String) -> OpaquePointer {
        requireThread()
        guard let writeTransaction else {
            fail(CofferError(.misuse, "\(call) was called outside a write transaction"))
        }
        return writeTransaction
    }

    func endReadTransaction() {
        if let readTransaction {
            coffer_txn_free(readTransaction)
            self.readTransaction = nil
            contentVersion &+= 1
        }
    }

    func endWriteTransaction(_ txn: OpaquePointer, committed: Bool) {
        pendingWrites.discard()
        coffer_txn_free(txn)
        writeTransaction = nil
        contentVersion &+= 1
        if !committed {
            currentWriteOutcome?.cancelled = true
        }
        currentWriteOutcome = nil
        // A transaction of beginAsyncWrite holds its turn until it ends.
        if let turn = asyncTransactions.heldTurn {
            asyncTransactions.heldTurn = nil
            asyncWrites.leave(turn)
        }
    }
}
