// asyncRefresh: Realm's awaitable refresh, for code isolated to an actor that
// wants to see commits made elsewhere before it reads on.

extension Database {
    /// Moves this database to the newest version of the file, as ``refresh()``
    /// does, from async code: `await db.asyncRefresh()`, as Realm's
    /// `asyncRefresh()`. It runs on the calling actor, where the database is used.
    ///
    /// - Parameter isolation: the calling actor; leave it to its default.
    /// - Returns: as ``refresh()``: true if a snapshot was let go, so that the
    ///   next read sees the newest version; false if there was none or the
    ///   database is in a write transaction.
    @discardableResult
    public func asyncRefresh(isolation: isolated (any Actor)? = #isolation) async -> Bool {
        refresh()
    }
}
