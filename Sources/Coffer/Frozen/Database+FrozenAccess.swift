// The one way into a frozen Database's pinned snapshot: every read takes its
// lock first, so that frozen objects, results and collections can be read
// from several threads at once.

extension Database {
    /// True for a frozen database: an immutable view of one version of the
    /// file, readable from any thread (see ``freeze()``).
    public var isFrozen: Bool {
        frozenLock != nil
    }

    /// Takes a frozen database's lock for one read and returns it; nil, doing
    /// nothing, for a live database. Every read path begins with
    /// `let access = database.frozenAccess(); defer { access?.unlock() }`.
    @inline(__always)
    func frozenAccess() -> FrozenLock? {
        guard let frozenLock else { return nil }
        frozenLock.lock()
        return frozenLock
    }
}
