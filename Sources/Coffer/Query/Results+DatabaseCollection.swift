// Results as a DatabaseCollection: what generic code over Realm's
// RealmCollection asks of them besides their queries — positions of objects,
// validity, and themselves as the Results the protocol's queries run on.

extension Results: DatabaseCollection where Element: _ResultsElement {
    /// The database the objects are read from.
    public var database: Database { storedDatabase! }

    public var _cofferDatabase: Database? {
        // Typed, so that it is the stored database and not the protocol's
        // optional `database`, which reads this.
        let own: Database = database
        return own
    }

    /// Always false: results read the database anew when used, also after
    /// ``Database/invalidate()``.
    public var isInvalidated: Bool { false }

    /// The position of `object` (an object, or a projection of one) in these
    /// results, or nil if they do not hold it (or it is unmanaged or of
    /// another database).
    public func index(of object: Element) -> Int? {
        guard let managed = object._cofferObject.managedState,
              managed.database.handle == database.handle, managed.binding.classId == binding.classId
        else { return nil }
        return currentKeys().firstIndex(of: managed.key)
    }

    public func _cofferQueryResults<Target: _ResultsElement>(of type: Target.Type) -> Results<Target> {
        guard let same = self as? Results<Target> else {
            fatalError("Coffer: Results<\(Element.self)> cannot be read as Results<\(Target.self)>")
        }
        return same
    }

    /// The position here of the first object that `matching` (these results
    /// narrowed further) holds, or nil.
    func firstPosition(matching: Results<Element>) -> Int? {
        let matches = Set(matching.currentKeys())
        guard !matches.isEmpty else { return nil }
        return currentKeys().firstIndex { matches.contains($0) }
    }
}
