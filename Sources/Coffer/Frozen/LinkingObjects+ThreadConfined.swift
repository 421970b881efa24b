// LinkingObjects as ThreadConfined values: they belong to their object, so
// freezing, thawing and references move the object to the other database and
// read its backlinks there, as a list's do.

extension LinkingObjects: ThreadConfined {
    /// True for the linking objects of a frozen object.
    public var isFrozen: Bool { database?.isFrozen ?? false }

    /// These linking objects in the frozen view of their database (see
    /// ``Database/freeze()``). Those of an unmanaged object stop the program,
    /// as in Realm.
    public func freeze() -> LinkingObjects {
        if isFrozen { return self }
        let location = requireManaged(currentLocation, "\(Self.self)", "frozen")
        return LinkingObjects(propertyName: propertyName, location: location.frozen())
    }

    /// The live linking objects of these frozen ones (see ``Object/thaw()``);
    /// nil if their object was deleted. Live ones return themselves.
    public func thaw() -> LinkingObjects? {
        guard isFrozen, let location = currentLocation else { return self }
        return location.thawed().map { LinkingObjects(propertyName: propertyName, location: $0) }
    }

    public func _cofferReferenceTarget() -> _ReferenceTarget {
        requireManaged(currentLocation, "\(Self.self)", "passed in a ThreadSafeReference").referenceTarget()
    }

    public static func _cofferResolve(_ target: _ReferenceTarget, in database: Database) throws -> LinkingObjects? {
        try CollectionLocation.resolved(target, in: database).map { location in
            LinkingObjects(propertyName: location.property.originProperty ?? "", location: location)
        }
    }
}
