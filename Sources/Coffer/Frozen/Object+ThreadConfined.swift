// Objects as ThreadConfined values: freezing a managed object into the frozen
// view of its database, thawing it back, and finding it again from a
// ThreadSafeReference.

extension Object: ThreadConfined {
    /// True for an object of a frozen database: immutable, readable from any
    /// thread or task. False for unmanaged and live objects.
    public var isFrozen: Bool {
        managedState?.database.isFrozen ?? false
    }

    /// This object in the frozen view of its database (see ``Database/freeze()``):
    /// its values as of now, readable from any thread; writing it stops the
    /// program. A frozen object returns itself; an unmanaged or deleted one, or
    /// a call inside a write transaction, stops the program, as in Realm.
    public func freeze() -> Self {
        if isFrozen { return self }
        let (managed, _) = referenceAddress(for: "frozen")
        return managed.database.freeze().makeObject(type(of: self), managed.binding, managed.key)
    }

    /// The live object of this frozen one in a database usable on the calling
    /// thread (see ``Database/thaw()``), or nil if it has been deleted since.
    /// A live or unmanaged object returns itself.
    public func thaw() -> Self? {
        guard let managed = managedState, managed.database.isFrozen else { return self }
        let object = managed.database.thaw().makeObject(type(of: self), managed.binding, managed.key)
        return object.isInvalidated ? nil : object
    }

    public func _cofferReferenceTarget() -> _ReferenceTarget {
        let (managed, address) = referenceAddress(for: "passed in a ThreadSafeReference")
        do {
            return try _ReferenceTarget(.object(address), in: managed.database)
        } catch {
            managed.database.fail(error)
        }
    }

    public static func _cofferResolve(_ target: _ReferenceTarget, in database: Database) throws -> Self? {
        guard case .object(let address) = target.kind else {
            throw CofferError(.misuse, "this ThreadSafeReference does not refer to an object")
        }
        guard let state = try database.existingState(address) else { return nil }
        return database.makeObject(address.type, state.binding, address.key) as? Self
    }
}
