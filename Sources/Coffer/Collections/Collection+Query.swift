// The path from a List, MutableSet or LinkingObjects of objects to live
// Results over the same objects, which the queries, sorts and aggregates of
// DatabaseCollection run on.

internal import CCoffer

/// Live ``Results`` of `Target` over the objects of the collection at
/// `location`, whose keys `keys` reads anew for every snapshot; an unmanaged
/// collection (`location` nil) stops the program, as it has no database to query.
func objectResults<Target: _ResultsElement>(
    of type: Target.Type, at location: CollectionLocation?, collection: String,
    keys: @escaping (CollectionLocation) -> [UInt64]
) -> Results<Target> {
    guard let location else {
        fatalError("Coffer: an unmanaged \(collection) cannot be queried; add its object to a Database first")
    }
    let database = location.database
    do {
        let binding = try database.binding(for: Target._cofferRootType)
        // A set's objects come in creation order, as a query's do, so that
        // the rows of its observed results are the rows read.
        let isSet = location.property.collection == .set
        return Results(database: database, binding: binding, source: .keys { isSet ? keys(location).sorted() : keys(location) },
                       observedList: location)
    } catch {
        database.fail(error)
    }
}

extension ElementCollection {
    public func _cofferQueryResults<Target: _ResultsElement>(of type: Target.Type) -> Results<Target> {
        guard Element.self is Object.Type else {
            fatalError("Coffer: a \(Self.self) holds values, not objects, and cannot be queried")
        }
        return objectResults(of: type, at: managedLocation, collection: "\(Self.self)") { self.objectKeys(at: $0) }
    }
}

extension LinkingObjects {
    public func _cofferQueryResults<Target: _ResultsElement>(of type: Target.Type) -> Results<Target> {
        objectResults(of: type, at: currentLocation, collection: "\(Self.self)") { self.objectKeys(at: $0) }
    }
}
