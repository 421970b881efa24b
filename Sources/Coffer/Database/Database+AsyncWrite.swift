// Writes from actor-isolated databases that wait for the write lock and the
// commit without blocking the actor: asyncWrite for async code, writeAsync
// with a completion handler for callers without await.

internal import CCoffer

extension Database {
    /// True while an ``asyncWrite(isolation:_:)`` or
    /// ``writeAsync(isolation:_:onComplete:)`` call of this database runs or
    /// waits its turn; a synchronous ``write(_:)`` then fails with `.misuse`.
    public var isPerformingAsynchronousWriteOperations: Bool {
        asyncWrites.isBusy
    }

    /// Runs `block` in a write transaction and commits it, waiting for the write
    /// lock and for the commit without blocking the actor: other tasks on the
    /// actor run meanwhile.
    ///
    /// ```swift
    /// actor DogStore {
    ///     var db: Database!
    ///     func open() async throws { db = try await Database(actor: self) }
    ///     func add(_ name: String) async throws {
    ///         try await db.asyncWrite { db.add(Dog(value: ["name": name])) }
    ///     }
    /// }
    /// ```
    ///
    /// The database must be isolated to the calling actor (opened with
    /// ``init(configuration:actor:)`` or, on the main actor, ``init(configuration:isolation:)``).
    /// Calls on one database take turns in the order they were made. The write
    /// lock is taken on a thread of its own, which also commits: the block runs
    /// on the actor in between, so its effects are not seen by other tasks until
    /// the call returns. If `block` throws or the task is cancelled while it
    /// waits, nothing is written. A synchronous ``write(_:)`` or ``beginWrite()``
    /// of the same database while a call is under way fails with `.misuse`
    /// (its write lock may be held for the waiting call).
    ///
    /// - Parameter isolation: the calling actor; leave it to its default.
    /// - Returns: what `block` returns.
    /// - Throws: `CancellationError` if the task is cancelled before `block`
    ///   runs; what `block` throws; or a ``CofferError``: `.misuse` for a database
    ///   not isolated to an actor or already in a write transaction,
    ///   `.readOnly` for a read-only database, or the failure of the commit (see
    ///   ``commitWrite()``).
    @discardableResult
    public func asyncWrite<Result>(
        isolation: isolated (any Actor) = #isolation,
        _ block: () throws -> Result
    ) async throws -> Result {
        try await asyncWrite(turn: asyncWrites.reserve(), isolation: isolation, block)
    }

    /// ``asyncWrite(isolation:_:)`` for the caller holding `turn`, which it gives back.
    private func asyncWrite<Result>(
        turn: UInt64,
        isolation: isolated (any Actor),
        _ block: () throws -> Result
    ) async throws -> Result {
        defer { asyncWrites.leave(turn) }
        try await beginAsyncTransaction(turn: turn, isolation: isolation)
        let result: Result
        do {
            result = try block()
        } catch {
            if let txn = writeTransaction { abort(txn) }
            throw error
        }
        // The block committed or cancelled it itself.
        guard let txn = writeTransaction, let lockThread = writeLockThread else { return result }
        do {
            try flushPendingWrites()
        } catch {
            abort(txn)
            throw error
        }
        // Taken away before waiting, so that other tasks of the actor do not
        // write into a transaction being committed.
        writeTransaction = nil
        writeLockThread = nil
        let failure = await lockThread.commit(SendableHandle(pointer: txn))
        endWriteTransaction(txn, committed: failure == nil)
        if let failure { throw failure }
        return result
    }

    /// Waits for `turn` and for the write lock without blocking the actor, then
    /// begins the write transaction on the database's ``WriteLockThread``.
    /// - Throws: `CancellationError` if the task is cancelled meanwhile (nothing
    ///   was written); `.misuse` for a database not isolated to an actor or in a
    ///   write transaction when its turn comes; the failure of the begin.
    func beginAsyncTransaction(turn: UInt64, isolation: isolated (any Actor)) async throws {
        guard case .actor = confinement else {
            throw CofferError(.misuse, "asyncWrite needs a Database isolated to an actor: open it with `try await Database(actor:)`, or use write {} on this thread")
        }
        try checkThread()
        try await asyncWrites.waitForTurn(turn)
        guard writeTransaction == nil else {
            throw CofferError(.misuse, "the database is already in a write transaction")
        }
        let lockThread = asyncWriteThread ?? WriteLockThread()
        asyncWriteThread = lockThread
        let txn = try await lockThread.begin(SendableHandle(pointer: handle)).pointer
        endReadTransaction()
        writeTransaction = txn
        writeLockThread = lockThread
        contentVersion &+= 1
        if Task.isCancelled {
            abort(txn)
            throw CancellationError()
        }
    }

    /// Runs `block` in a write transaction as ``asyncWrite(isolation:_:)`` does,
    /// for callers that cannot `await`; `onComplete` runs on the actor with nil
    /// once the transaction is committed, or with the error that stopped it.
    ///
    /// ```swift
    /// db.writeAsync({ db.add(dog) }, onComplete: { error in
    ///     if let error { print("not saved: \(error)") }
    /// })
    /// ```
    ///
    /// It takes its turn among the database's ``asyncWrite(isolation:_:)`` and
    /// `writeAsync` calls when called, before it returns: calls made after it
    /// write after it.
    public func writeAsync(
        isolation: isolated (any Actor) = #isolation,
        _ block: @escaping () -> Void,
        onComplete: ((Swift.Error?) -> Void)? = nil
    ) {
        let turn = asyncWrites.reserve()
        Task {
            _ = isolation
            do {
                try await self.asyncWrite(turn: turn, isolation: isolation, block)
                onComplete?(nil)
            } catch {
                onComplete?(error)
            }
        }
    }
}
