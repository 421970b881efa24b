// ThreadSafeReference: handing a live object, results or collection to another
// thread or actor, which resolves it once in its own database, as in Realm.

/// A live object, projection, ``Results``, ``List``, ``MutableSet``, ``Map``,
/// ``LinkingObjects`` or ``AnyDatabaseCollection`` handed to another thread or
/// actor, as Realm's `ThreadSafeReference`:
///
/// ```swift
/// let reference = ThreadSafeReference(to: dog)
/// Task.detached {
///     let db = try Database(configuration: config)
///     guard let dog = db.resolve(reference) else { return }  // deleted meanwhile
///     try db.write { dog.age += 1 }
/// }
/// ```
///
/// The reference keeps where the value is (class, key, queries), not the value:
/// ``Database/resolve(_:)`` finds it in a database on the same file, at the
/// version it was read at or later (a database behind moves forward first). A
/// reference can be resolved once; resolving it again is a programming error,
/// as in Realm (``Database/tryResolve(_:)`` throws instead of stopping).
///
/// `@unchecked Sendable` because it holds no live object: its target is
/// immutable (classes, keys, texts and plain values) and the one mutable
/// part, whether it was resolved, is behind a lock.
public final class ThreadSafeReference<Confined: ThreadConfined>: @unchecked Sendable {
    private let target: _ReferenceTarget
    private let resolved = LockedValue(false)

    /// A reference to the live `threadConfined`, to resolve on another thread.
    ///
    /// An unmanaged, deleted or frozen value, or one read inside a write
    /// transaction (which another thread cannot see), stops the program with a
    /// message saying so, as in Realm.
    public init(to threadConfined: Confined) {
        target = threadConfined._cofferReferenceTarget()
    }

    /// True once the reference was resolved: it cannot be resolved again.
    public var isInvalidated: Bool {
        resolved.withLock { $0 }
    }

    /// The target, once; later calls throw `.misuse`.
    func take() throws(CofferError) -> _ReferenceTarget {
        let first = resolved.withLock { wasResolved in
            defer { wasResolved = true }
            return !wasResolved
        }
        guard first else {
            throw CofferError(.misuse, "this ThreadSafeReference<\(Confined.self)> was resolved already; a reference can be resolved only once")
        }
        return target
    }
}

extension Database {
    /// The live value `reference` refers to, in this database; nil if it was
    /// deleted since the reference was made.
    ///
    /// The database must be live and on the same file as the value. If its
    /// snapshot is older than the version the value was read at, it first moves
    /// to the newest version, as ``refresh()`` does (not inside a write
    /// transaction, which already reads the newest). Resolving a reference a
    /// second time, in a frozen database or in a database of another file stops
    /// the program with a message saying so, as in Realm; ``tryResolve(_:)``
    /// throws instead.
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        do {
            return try tryResolve(reference)
        } catch {
            fail(error)
        }
    }

    /// ``resolve(_:)``, throwing where it stops the program.
    ///
    /// - Throws: ``CofferError`` `.misuse` for a reference resolved already, a
    ///   frozen database, a database of another file or a call from another
    ///   thread; `.notFound` if this database lacks the value's class.
    public func tryResolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) throws -> Confined? {
        try checkThread()
        if isFrozen {
            throw CofferError(.misuse, "a ThreadSafeReference is resolved in a live database; this one is frozen")
        }
        let target = try reference.take()
        guard target.file == configuration.fileDescription else {
            throw CofferError(.misuse, "this ThreadSafeReference refers to a value of the database \(target.file), not of \(configuration.fileDescription)")
        }
        if writeTransaction == nil, try Self.version(of: try currentTransaction()) < target.version {
            endReadTransaction()
        }
        return try Confined._cofferResolve(target, in: self)
    }
}
