// Projections as ThreadConfined values: a projection shows one object, so
// freezing, thawing and references act on that object and project it again.

extension Projection: ThreadConfined {
    /// True for a projection of a frozen object.
    public var isFrozen: Bool { rootObject.isFrozen }

    /// A projection of the frozen object (see ``Object/freeze()``): immutable,
    /// readable from any thread. An unmanaged or deleted object stops the
    /// program, as in Realm.
    public func freeze() -> Self {
        isFrozen ? self : Self(projecting: rootObject.freeze())
    }

    /// A projection of the live object (see ``Object/thaw()``), or nil if it
    /// was deleted. A live projection returns itself.
    public func thaw() -> Self? {
        guard isFrozen else { return self }
        return rootObject.thaw().map { Self(projecting: $0) }
    }

    public func _cofferReferenceTarget() -> _ReferenceTarget {
        rootObject._cofferReferenceTarget()
    }

    public static func _cofferResolve(_ target: _ReferenceTarget, in database: Database) throws -> Self? {
        try Root._cofferResolve(target, in: database).map { Self(projecting: $0) }
    }
}
