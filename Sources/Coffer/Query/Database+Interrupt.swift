// Stopping queries: Database.interrupt(), the one Database call meant for
// other threads than the database's own.

internal import CCoffer

extension Database {
    /// Stops every query this database is running, as `sqlite3_interrupt()` does:
    /// the call running it throws ``CofferError`` with code `.interrupted`.
    ///
    /// Unlike every other method, this one may be called from any thread, since
    /// the thread running the query is busy with it; the caller must keep the
    /// database alive for the call. Queries that begin after the call run
    /// normally, so with no query running it has no effect.
    public func interrupt() {
        _ = coffer_interrupt(handle)
    }
}
