// AnyDatabaseCollection: a type-erased collection of objects or values of a
// database (Results, List, MutableSet, LinkingObjects), as Realm's
// AnyRealmCollection, and DatabaseCollectionValue, the element types.

/// The types a collection of a database can hold, as Realm's
/// `RealmCollectionValue`: every stored value type, objects and ``AnyValue``.
/// For generic code: `func total<C: DatabaseCollection>(_ c: C) where C.Element: DatabaseCollectionValue`.
public typealias DatabaseCollectionValue = _Persistable

/// Any ``Results``, ``List``, ``MutableSet`` or ``LinkingObjects`` with elements
/// of one type, behind one type, as Realm's `AnyRealmCollection`:
///
/// ```swift
/// func names(_ dogs: AnyDatabaseCollection<Dog>) -> [String] { dogs.map(\.name) }
/// names(AnyDatabaseCollection(db.objects(Dog.self)))
/// names(AnyDatabaseCollection(person.dogs))
/// ```
///
/// It is a live view of the collection it wraps and, like it, belongs to its
/// database's thread; it freezes, thaws and passes in a ``ThreadSafeReference``
/// as the wrapped collection does.
public struct AnyDatabaseCollection<Element>: DatabaseCollection {
    /// The wrapped collection.
    private let base: any DatabaseCollection<Element>

    /// Wraps ``Results``, a ``List``, a ``MutableSet`` or ``LinkingObjects``.
    public init<Wrapped: DatabaseCollection>(_ base: Wrapped) where Wrapped.Element == Element {
        if let erased = base as? AnyDatabaseCollection<Element> {
            self = erased
        } else {
            self.base = base
        }
    }

    public var _cofferDatabase: Database? { base._cofferDatabase }

    /// The number of elements now.
    public var count: Int { base.count }

    /// The element at `position`; out of range stops the program.
    public subscript(position: Int) -> Element { base[position] }

    /// The wrapped collection's description.
    public var description: String { base.description }

    public var isInvalidated: Bool { base.isInvalidated }

    public func index(of object: Element) -> Int? { base.index(of: object) }

    public func setValue(_ value: Any?, forKey key: String) { base.setValue(value, forKey: key) }

    public func _cofferQueryResults<Target: _ResultsElement>(of type: Target.Type) -> Results<Target> {
        base._cofferQueryResults(of: type)
    }

    public var isFrozen: Bool { base.isFrozen }

    /// The wrapped collection frozen, wrapped.
    public func freeze() -> AnyDatabaseCollection { AnyDatabaseCollection(base.freeze()) }

    /// The wrapped collection thawed, wrapped; nil if its object was deleted.
    public func thaw() -> AnyDatabaseCollection? { base.thaw().map { AnyDatabaseCollection($0) } }

    public func _cofferReferenceTarget() -> _ReferenceTarget {
        var target = base._cofferReferenceTarget()
        target.erasedType = type(of: base)
        return target
    }

    public static func _cofferResolve(_ target: _ReferenceTarget, in database: Database) throws -> AnyDatabaseCollection? {
        guard let wrapped = target.erasedType as? any DatabaseCollection<Element>.Type else {
            throw CofferError(.misuse, "this ThreadSafeReference does not refer to an AnyDatabaseCollection<\(Element.self)>")
        }
        return try wrapped._cofferResolve(target, in: database).map { AnyDatabaseCollection($0) }
    }
}
