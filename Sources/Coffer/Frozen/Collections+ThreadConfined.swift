// List, MutableSet and Map as ThreadConfined values: a managed collection is a
// property of its owner, so freezing, thawing and references move the owner
// to the other database and open the same property there.

extension CollectionLocation {
    /// This location in the frozen view of its database.
    func frozen() -> CollectionLocation {
        owner.requireUsable()
        let frozen = database.freeze()
        return moved(to: ManagedState(database: frozen, binding: owner.binding, key: owner.key))
    }

    /// This location in a live database usable here; nil if the owner was deleted.
    func thawed() -> CollectionLocation? {
        let live = database.thaw()
        let state = ManagedState(database: live, binding: owner.binding, key: owner.key)
        return state.exists ? moved(to: state) : nil
    }

    /// The target of a ``ThreadSafeReference`` to this collection.
    func referenceTarget() -> _ReferenceTarget {
        owner.requireUsable()
        requireProperty("passed in a ThreadSafeReference")
        do {
            let address = _ReferenceTarget.ObjectAddress(type: owner.binding.schema.objectType, key: owner.key)
            return try _ReferenceTarget(.collection(owner: address, property: index), in: database)
        } catch {
            database.fail(error)
        }
    }

    /// The location a ``ThreadSafeReference`` refers to, in `database`; nil if
    /// its owner was deleted.
    static func resolved(_ target: _ReferenceTarget, in database: Database) throws -> CollectionLocation? {
        guard case .collection(let owner, let index) = target.kind else {
            throw CofferError(.misuse, "this ThreadSafeReference does not refer to a collection")
        }
        return try database.existingState(owner).map { CollectionLocation(owner: $0, index: index) }
    }
}

extension CollectionLocation {
    /// Stops the program when this is a collection nested in a mixed value,
    /// which cannot be `action` on its own; its object can. The collection a
    /// mixed property holds itself can: a reference finds it again.
    func requireProperty(_ action: String) {
        if !path.isEmpty {
            fatalError("Coffer: \(name) is nested in a mixed value and cannot be \(action); use its object")
        }
    }
}

/// The location of a managed collection, or a stop saying that an unmanaged
/// `collection` (its type) cannot be `action`, as in Realm.
func requireManaged(_ location: CollectionLocation?, _ collection: String, _ action: String) -> CollectionLocation {
    guard let location else {
        fatalError("Coffer: an unmanaged \(collection) cannot be \(action); add its object to a Database first")
    }
    return location
}

extension ElementCollection {
    /// True for the collection of a frozen object.
    public var isFrozen: Bool { database?.isFrozen ?? false }

    /// This collection in the frozen view of its database (see
    /// ``Database/freeze()``). An unmanaged collection stops the program, as in Realm.
    public func freeze() -> Self {
        isFrozen ? self : Self(requireManaged(managedLocation, "\(Self.self)", "frozen").frozen())
    }

    /// The live collection of this frozen one (see ``Object/thaw()``); nil if
    /// its object was deleted. A live collection returns itself.
    public func thaw() -> Self? {
        guard isFrozen, let location = managedLocation else { return self }
        return location.thawed().map { Self($0) }
    }

    public func _cofferReferenceTarget() -> _ReferenceTarget {
        requireManaged(managedLocation, "\(Self.self)", "passed in a ThreadSafeReference").referenceTarget()
    }

    public static func _cofferResolve(_ target: _ReferenceTarget, in database: Database) throws -> Self? {
        try CollectionLocation.resolved(target, in: database).map { Self($0) }
    }
}

// The members come from ElementCollection, as their DatabaseCollection ones do.
extension List: ThreadConfined {}
extension MutableSet: ThreadConfined {}

extension Map: ThreadConfined {
    /// True for the map of a frozen object.
    public var isFrozen: Bool { database?.isFrozen ?? false }

    /// This map in the frozen view of its database (see ``Database/freeze()``).
    /// An unmanaged map stops the program, as in Realm.
    public func freeze() -> Map {
        isFrozen ? self : Map(requireManaged(core.location, "\(Map.self)", "frozen").frozen())
    }

    /// The live map of this frozen one; nil if its object was deleted.
    public func thaw() -> Map? {
        guard isFrozen, let location = core.location else { return self }
        return location.thawed().map { Map($0) }
    }

    public func _cofferReferenceTarget() -> _ReferenceTarget {
        requireManaged(core.location, "\(Map.self)", "passed in a ThreadSafeReference").referenceTarget()
    }

    public static func _cofferResolve(_ target: _ReferenceTarget, in database: Database) throws -> Map? {
        try CollectionLocation.resolved(target, in: database).map { Map($0) }
    }
}
