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
/// database's thread.
public struct AnyDatabaseCollection<Element>: DatabaseCollection, CustomStringConvertible {
    private let countOf: () -> Int
    private let elementAt: (Int) -> Element
    private let databaseOf: () -> Database?
    private let describe: () -> String

    /// Wraps a ``List``, ``MutableSet`` or ``LinkingObjects``.
    public init<Wrapped: DatabaseCollection>(_ base: Wrapped) where Wrapped.Element == Element {
        countOf = { base.count }
        elementAt = { base[$0] }
        databaseOf = { base.database }
        describe = { "\(base)" }
    }

    /// Wraps ``Results``.
    public init(_ base: Results<Element>) where Element: _ResultsElement {
        countOf = { base.count }
        elementAt = { base[$0] }
        databaseOf = { base.database }
        describe = { base.description }
    }

    /// The database of the wrapped collection, nil while it is unmanaged.
    public var database: Database? { databaseOf() }

    /// The number of elements now.
    public var count: Int { countOf() }

    /// The element at `position`; out of range stops the program.
    public subscript(position: Int) -> Element { elementAt(position) }

    /// The wrapped collection's description.
    public var description: String { describe() }
}
