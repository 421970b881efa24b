// Queries over the objects of a List, MutableSet or LinkingObjects: the shared
// path to live Results, and each collection's public where/filter/sorted
// forwarding to it.

internal import CCoffer

/// Queries over the objects of a ``List``, ``MutableSet`` or ``LinkingObjects``:
/// live ``Results`` that read the collection's objects anew for every snapshot
/// and filter, sort and aggregate them in the C core.
protocol QueryableObjects {
    associatedtype Element: Object
    /// The collection's location, or nil while it is unmanaged.
    var queryLocation: CollectionLocation? { get }
    /// The keys of its objects now, in its order.
    func objectKeys(at location: CollectionLocation) -> [UInt64]
}

extension QueryableObjects {
    /// The collection's objects as ``Results``; an unmanaged collection stops
    /// the program, as it has no database to query.
    var objectResults: Results<Element> {
        guard let location = queryLocation else {
            fatalError("Coffer: an unmanaged \(Self.self) cannot be queried; add its object to a Database first")
        }
        let database = location.database
        do {
            let binding = try database.binding(for: Element.self)
            return Results(database: database, binding: binding, source: .keys { objectKeys(at: location) },
                           observedList: location.property.collection == .list ? location : nil)
        } catch {
            database.fail(error)
        }
    }
}

extension List: QueryableObjects where Element: Object {
    var queryLocation: CollectionLocation? { managedLocation }
}

extension MutableSet: QueryableObjects where Element: Object {
    var queryLocation: CollectionLocation? { managedLocation }
}

extension LinkingObjects: QueryableObjects {
    var queryLocation: CollectionLocation? { currentLocation }
}

// The public query methods forward to ``QueryableObjects/objectResults``; each
// collection declares its own, as a public method cannot come from an internal
// protocol.

extension List where Element: Object {
    /// The list's objects matching a typed query, in list order, as live
    /// ``Results``: `person.dogs.where { $0.age > 3 }`. See ``Results/where(_:)``.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { objectResults.where(isIncluded) }

    /// The list's objects matching a query string, as ``Results/filter(_:_:)``;
    /// an invalid query stops the program.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { objectResults.trapping { () throws(CofferError) in try objectResults.filter(predicateFormat, arguments: args) } }

    /// ``filter(_:_:)``, throwing as ``Results/tryFilter(_:_:)`` where it stops the program.
    /// - Throws: ``CofferError`` `.query`, as ``Results/tryFilter(_:_:)``.
    public func tryFilter(_ predicateFormat: String, _ args: Any...) throws -> Results<Element> { try objectResults.filter(predicateFormat, arguments: args) }

    /// The list's objects sorted by a key path, as ``Results/sorted(byKeyPath:ascending:)``.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> { objectResults.sorted(byKeyPath: keyPath, ascending: ascending) }

    /// ``sorted(byKeyPath:ascending:)``, throwing where it stops the program.
    /// - Throws: ``CofferError`` `.query` naming an unknown or unsortable key path.
    public func trySorted(byKeyPath keyPath: String, ascending: Bool = true) throws -> Results<Element> { try objectResults.trySorted(byKeyPath: keyPath, ascending: ascending) }

    /// The list's objects sorted by a typed key path, as ``Results/sorted(by:ascending:)``.
    public func sorted<Value: _QueryEquatable>(by keyPath: KeyPath<Element, Value>, ascending: Bool = true) -> Results<Element> { objectResults.sorted(by: keyPath, ascending: ascending) }
}

extension MutableSet where Element: Object {
    /// The set's objects matching a typed query, as live ``Results``. See ``Results/where(_:)``.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { objectResults.where(isIncluded) }

    /// The set's objects matching a query string, as ``Results/filter(_:_:)``;
    /// an invalid query stops the program.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { objectResults.trapping { () throws(CofferError) in try objectResults.filter(predicateFormat, arguments: args) } }

    /// ``filter(_:_:)``, throwing as ``Results/tryFilter(_:_:)`` where it stops the program.
    /// - Throws: ``CofferError`` `.query`, as ``Results/tryFilter(_:_:)``.
    public func tryFilter(_ predicateFormat: String, _ args: Any...) throws -> Results<Element> { try objectResults.filter(predicateFormat, arguments: args) }

    /// The set's objects sorted by a typed key path, as ``Results/sorted(by:ascending:)``.
    public func sorted<Value: _QueryEquatable>(by keyPath: KeyPath<Element, Value>, ascending: Bool = true) -> Results<Element> { objectResults.sorted(by: keyPath, ascending: ascending) }
}

extension LinkingObjects {
    /// The linking objects matching a typed query, as live ``Results``:
    /// `dog.owners.where { $0.name == "Ali" }`. See ``Results/where(_:)``.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> { objectResults.where(isIncluded) }

    /// The linking objects matching a query string, as ``Results/filter(_:_:)``;
    /// an invalid query stops the program.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> { objectResults.trapping { () throws(CofferError) in try objectResults.filter(predicateFormat, arguments: args) } }

    /// ``filter(_:_:)``, throwing as ``Results/tryFilter(_:_:)`` where it stops the program.
    /// - Throws: ``CofferError`` `.query`, as ``Results/tryFilter(_:_:)``.
    public func tryFilter(_ predicateFormat: String, _ args: Any...) throws -> Results<Element> { try objectResults.filter(predicateFormat, arguments: args) }

    /// The linking objects sorted by a key path, as ``Results/sorted(byKeyPath:ascending:)``.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> { objectResults.sorted(byKeyPath: keyPath, ascending: ascending) }

    /// ``sorted(byKeyPath:ascending:)``, throwing where it stops the program.
    /// - Throws: ``CofferError`` `.query` naming an unknown or unsortable key path.
    public func trySorted(byKeyPath keyPath: String, ascending: Bool = true) throws -> Results<Element> { try objectResults.trySorted(byKeyPath: keyPath, ascending: ascending) }

    /// The linking objects sorted by a typed key path, as ``Results/sorted(by:ascending:)``.
    public func sorted<Value: _QueryEquatable>(by keyPath: KeyPath<Element, Value>, ascending: Bool = true) -> Results<Element> { objectResults.sorted(by: keyPath, ascending: ascending) }
}
