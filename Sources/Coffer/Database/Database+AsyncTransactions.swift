// Realm's asynchronous transactions in parts: beginAsyncWrite runs a block in
// a write transaction once the write lock is free, commitAsyncWrite commits
// without blocking the actor, and cancelAsyncWrite withdraws either while it
// waits.

internal import CCoffer

/// The id of a ``Database/beginAsyncWrite(isolation:_:)`` or
/// ``Database/commitAsyncWrite(isolation:allowGrouping:_:)`` call, for
/// ``Database/cancelAsyncWrite(_:)``, as in Realm.
public typealias AsyncTransactionId = UInt32

/// The asynchronous transactions of one database: those waiting to begin,
/// commits under way, and the turn a begun one holds. Used only on the
/// database's actor.
struct AsyncTransactions {
    private var lastId: AsyncTransactionId = 0
    /// Begins waiting for their turn or the write lock, by id.
    var waitingBegins: [AsyncTransactionId: Task<Void, Never>] = [:]
    /// Commits under way whose completion handler is still to be called.
    var pendingCommits: Set<AsyncTransactionId> = []
    /// The turn in the database's ``AsyncWriteQueue`` held by a transaction of
    /// beginAsyncWrite, given back when it ends.
    var heldTurn: UInt64?

    mutating func nextId() -> AsyncTransactionId {
        lastId &+= 1
        return lastId
    }
}

extension Database {
    /// Runs `asyncWriteBlock` in a write transaction once this database's
    /// earlier asynchronous writes are done and the write lock is free, without
    /// blocking the actor meanwhile, as Realm's `beginAsyncWrite`.
    ///
    /// ```swift
    /// db.beginAsyncWrite {
    ///     db.add(dog)
    ///     db.commitAsyncWrite { error in
    ///         if let error { print("not saved: \(error)") }
    ///     }
    /// }
    /// ```
    ///
    /// The block ends the transaction itself, with ``commitAsyncWrite(isolation:allowGrouping:_:)``,
    /// ``commitWrite()`` or ``cancelWrite()``, then or later on the actor;
    /// until it does, later asynchronous writes wait. The database must be
    /// isolated to the calling actor, as for ``asyncWrite(isolation:_:)``.
    /// ``cancelAsyncWrite(_:)`` with the returned id withdraws the block while
    /// it waits. A transaction that cannot begin (a read-only database, a
    /// database not isolated to an actor) stops the program with the reason,
    /// as in Realm.
    ///
    /// - Returns: the id for ``cancelAsyncWrite(_:)``.
    @discardableResult
    public func beginAsyncWrite(isolation: isolated (any Actor) = #isolation,
                                _ asyncWriteBlock: @escaping () -> Void) -> AsyncTransactionId {
        let turn = asyncWrites.reserve()
        let id = asyncTransactions.nextId()
        asyncTransactions.waitingBegins[id] = Task {
            _ = isolation
            do {
                try await self.beginAsyncTransaction(turn: turn, isolation: isolation)
            } catch {
                self.asyncTransactions.waitingBegins[id] = nil
                self.asyncWrites.leave(turn)
                if error is CancellationError { return }
                self.fail(error)
            }
            self.asyncTransactions.waitingBegins[id] = nil
            self.asyncTransactions.heldTurn = turn
            asyncWriteBlock()
        }
        return id
    }

    /// Commits the write transaction without blocking the actor: the commit
    /// (and its `fsync`) happens off it, and `onComplete` runs on the actor
    /// with nil once the changes are durable, or with the error that stopped
    /// the commit (then nothing of the transaction was written), as Realm's
    /// `commitAsyncWrite`.
    ///
    /// The transaction ends at once for this database: ``isInWriteTransaction``
    /// is false on return and later asynchronous writes wait for the commit.
    /// For a transaction begun with ``beginWrite()``, which must end on the
    /// thread that began it, the commit happens before the call returns and
    /// `onComplete` runs afterwards on the actor. Called outside a write
    /// transaction it stops the program, as Realm does.
    ///
    /// - Parameter allowGrouping: accepted for Realm's signature; each commit
    ///   is made durable on its own.
    /// - Returns: the id for ``cancelAsyncWrite(_:)``, which keeps
    ///   `onComplete` from running (the commit goes on).
    @discardableResult
    public func commitAsyncWrite(isolation: isolated (any Actor) = #isolation,
                                 allowGrouping: Bool = false,
                                 _ onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        requireThread()
        guard let txn = writeTransaction else {
            fail(CofferError(.misuse, "commitAsyncWrite() was called outside a write transaction"))
        }
        do throws(CofferError) {
            try flushPendingWrites()
        } catch {
            fail(error)
        }
        let id = asyncTransactions.nextId()
        asyncTransactions.pendingCommits.insert(id)
        guard let lockThread = writeLockThread else {
            let failure: CofferError?
            do throws(CofferError) {
                try commit(txn)
                failure = nil
            } catch {
                failure = error
            }
            Task {
                _ = isolation
                if self.asyncTransactions.pendingCommits.remove(id) != nil { onComplete?(failure) }
            }
            return id
        }
        // The transaction ends for this database now: taken away before the
        // commit, as asyncWrite does, and with its bookkeeping, since a later
        // write may begin on the actor before this commit's task resumes.
        writeTransaction = nil
        writeLockThread = nil
        let outcome = currentWriteOutcome
        currentWriteOutcome = nil
        let turn = asyncTransactions.heldTurn
        asyncTransactions.heldTurn = nil
        Task {
            _ = isolation
            let failure = await lockThread.commit(SendableHandle(pointer: txn))
            coffer_txn_free(txn)
            if failure != nil { outcome?.cancelled = true }
            self.contentVersion &+= 1
            if let turn { self.asyncWrites.leave(turn) }
            if self.asyncTransactions.pendingCommits.remove(id) != nil { onComplete?(failure) }
        }
        return id
    }

    /// Withdraws a ``beginAsyncWrite(isolation:_:)`` whose block has not run
    /// yet (it never will, and nothing is written), or the completion handler
    /// of a ``commitAsyncWrite(isolation:allowGrouping:_:)`` under way (the
    /// commit itself goes on), as Realm's `cancelAsyncWrite`.
    ///
    /// - Throws: ``CofferError`` `.invalidArgument` naming the id if nothing of
    ///   it is waiting (its block ran, its commit completed, or no call
    ///   returned it); `.misuse` from another thread or actor.
    public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
        try checkThread()
        if let waiting = asyncTransactions.waitingBegins.removeValue(forKey: asyncTransactionId) {
            waiting.cancel()
            return
        }
        if asyncTransactions.pendingCommits.remove(asyncTransactionId) != nil {
            return
        }
        throw CofferError(.invalidArgument, "no asynchronous write with id \(asyncTransactionId) is waiting: its block ran or its commit completed already, or no call returned that id")
    }
}
