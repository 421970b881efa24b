// Observing a database (every refresh that moved it to a newer version), and
// committing without telling chosen observers.

internal import CCoffer

extension Database {
    /// What a database observer is told, as Realm's `Realm.Notification`.
    public enum Notification: String, Sendable {
        /// The database moved to a newer version: a commit of this or another
        /// `Database`, thread or process.
        case didChange = "DatabaseDidChangeNotification"
        /// Kept for Realm's name; Coffer never sends it.
        case refreshRequired = "DatabaseRefreshRequiredNotification"
    }

    /// Calls `block` on this database's thread or actor each time it moves to
    /// a newer version, as Realm's `observe(_:)`: after ``refresh()``, or by
    /// itself (see ``autorefresh``), once per refresh whatever the number of
    /// commits it brought.
    ///
    /// ```swift
    /// let token = db.observe { notification, db in
    ///     print("now \(db.objects(Dog.self).count) dogs")
    /// }
    /// ```
    ///
    /// A frozen database never changes: observing it stops the program.
    public func observe(_ block: @escaping (Notification, Database) -> Void) -> NotificationToken {
        if isFrozen {
            fail(CofferError(.misuse, "a frozen Database never changes and cannot be observed; observe the live one"))
        }
        let observation = Observation<Database>(
            database: self, live: self, rebuild: { $0 },
            register: { [handle] context, token throws(CofferError) in
                coffer_db_observe(handle, ObserverCallbacks.database, context, token)
            })
        return observation.observe(on: nil, { raw, database, _ in
            guard case .database = raw, let database else { return nil }
            return (Notification.didChange, database)
        }, { (notification: Notification, database: Database) in block(notification, database) })
    }

    /// Commits the write transaction, as ``commitWrite()``, without telling
    /// the observers of `tokens` of the changes it made to objects, as
    /// Realm's `commitWrite(withoutNotifying:)`: use it to write a change a
    /// user interface made itself. Objects it inserted or deleted are still
    /// reported to collection observers, so that their indices stay right.
    ///
    /// ```swift
    /// db.beginWrite()
    /// dog.name = nameField.text
    /// try db.commitWrite(withoutNotifying: [token])
    /// ```
    ///
    /// Called outside a write transaction or from another thread, it stops
    /// the program, as Realm does.
    ///
    /// - Throws: ``CofferError`` as ``commitWrite()``; `.misuse` for a write
    ///   begun by ``asyncWrite(isolation:_:)`` or ``beginAsyncWrite(isolation:_:)``,
    ///   whose commit is theirs, and for a token of another database.
    public func commitWrite(withoutNotifying tokens: [NotificationToken]) throws {
        requireThread()
        guard let txn = writeTransaction else {
            fail(CofferError(.misuse, "commitWrite(withoutNotifying:) was called outside a write transaction"))
        }
        try commit(txn, withoutNotifying: tokens)
    }

    /// Runs `block` in a write transaction and commits it without telling the
    /// observers of `tokens`, as ``write(_:)`` and
    /// ``commitWrite(withoutNotifying:)`` together.
    ///
    /// - Throws: what `block` throws (nothing is written), or what
    ///   ``write(_:)`` and ``commitWrite(withoutNotifying:)`` throw.
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken], _ block: () throws -> Result) throws -> Result {
        try beginWriteTransaction()
        do {
            let result = try block()
            if let txn = writeTransaction {
                try commit(txn, withoutNotifying: tokens)
            }
            return result
        } catch {
            if let txn = writeTransaction {
                abort(txn)
            }
            throw error
        }
    }

    private func commit(_ txn: OpaquePointer, withoutNotifying tokens: [NotificationToken]) throws(CofferError) {
        if writeLockThread != nil {
            throw CofferError(.misuse, "this write was begun by asyncWrite or beginAsyncWrite, which commit it; commitWrite(withoutNotifying:) cannot")
        }
        try flushPendingWrites()
        let cTokens: [OpaquePointer?] = tokens.compactMap(\.cToken)
        let status = cTokens.withUnsafeBufferPointer { buffer in
            coffer_txn_commit_without_notifying(txn, buffer.baseAddress, buffer.count)
        }
        // A token of another handle is refused before anything is written.
        if status == COFFER_ERR_INVALID_ARGUMENT || status == COFFER_ERR_MISUSE {
            throw CofferError.last(status)
        }
        endWriteTransaction(txn, committed: status == COFFER_OK)
        try CofferError.check(status)
    }
}
