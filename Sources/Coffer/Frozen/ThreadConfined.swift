// ThreadConfined: what objects, results and collections that belong to one
// thread or actor share, as in Realm: freezing them into immutable views that
// any thread may read, thawing them back, and handing them to another thread
// with a ThreadSafeReference.

/// An object, ``Results`` or collection that belongs to its database's thread
/// or actor, as Realm's `ThreadConfined`: ``Object``, ``Projection``,
/// ``Results``, ``List``, ``MutableSet``, ``Map``, ``LinkingObjects`` and
/// ``AnyDatabaseCollection``.
///
/// Such a value reaches another thread in one of two ways: frozen
/// (``freeze()``, an immutable view that any thread may read; wrap it in
/// ``Frozen`` to pass it where Swift asks for `Sendable`), or live through a
/// ``ThreadSafeReference`` that the other thread resolves in its own database.
public protocol ThreadConfined {
    /// True for a frozen view: immutable, readable from any thread or task.
    var isFrozen: Bool { get }

    /// An immutable view of this value at its database's current version,
    /// readable from any thread; see ``Database/freeze()``. A frozen value
    /// returns itself.
    func freeze() -> Self

    /// The live counterpart of a frozen value in a live database usable on
    /// the calling thread (see ``Database/thaw()``), or nil if it was deleted
    /// since. A live value returns itself.
    func thaw() -> Self?

    /// What a ``ThreadSafeReference`` keeps of this value; not for use outside Coffer.
    func _cofferReferenceTarget() -> _ReferenceTarget

    /// The value a ``ThreadSafeReference`` refers to, in `database`; not for
    /// use outside Coffer.
    static func _cofferResolve(_ target: _ReferenceTarget, in database: Database) throws -> Self?
}
