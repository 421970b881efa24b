// Observing the collections of an object: List, MutableSet, Map and
// LinkingObjects, on the database's thread, a queue or an actor, and as async
// sequences. List and MutableSet share one path (ElementCollection); linking
// objects are observed as the query of the objects linking here.

import Foundation
internal import CCoffer

extension ElementCollection {
    /// The observation of this managed list or set: the C observer of its
    /// property, and the same property of the owner in another database.
    func elementObservation(_ keyPaths: [String]?) -> Observation<Self> {
        let location = requireManaged(managedLocation, "\(Self.self)", "observed")
        location.owner.requireUsable()
        if location.isInMixedValue {
            return nestedCollectionObservation(location, .list, live: self, make: { Self($0) })
        }
        let observe = Self.functions.kind == .list ? coffer_list_observe : coffer_set_observe
        return collectionObservation(location, keyPaths, live: self, make: { Self($0) }) { database, location, paths, count, context, token in
            observe(database.handle, location.owner.binding.classId, location.owner.key, location.propertyId,
                    paths, count, ObserverCallbacks.collection, context, token)
        }
    }
}

/// The observation of the collection property at `location`: `register`
/// calls the C observe function with the element class's key paths.
func collectionObservation<Value>(
    _ location: CollectionLocation, _ keyPaths: [String]?, live: Value, make: @escaping (CollectionLocation) -> Value,
    _ register: @escaping (Database, CollectionLocation, UnsafePointer<UnsafePointer<CChar>?>?, Int,
                           UnsafeMutableRawPointer, UnsafeMutablePointer<OpaquePointer?>) -> coffer_status
) -> Observation<Value> {
    let database = location.database
    return Observation(
        database: database, live: live,
        rebuild: { other in
            let owner = ManagedState(database: other, binding: location.owner.binding, key: location.owner.key)
            return owner.exists ? make(location.moved(to: owner)) : nil
        },
        register: { context, token throws(CofferError) in
            var paths = keyPaths
            if let keyPaths, let elementType = location.property.objectType {
                paths = Database.storedKeyPaths(keyPaths, from: try database.binding(for: elementType).schema)
            }
            return try withCKeyPaths(paths) { paths, count in register(database, location, paths, count, context, token) }
        })
}

extension List {
    /// Calls `block` with the list's initial state, then after each commit
    /// that changed it, as Realm's `observe(keyPaths:on:_:)`: insertions,
    /// deletions, moves (each a deletion plus an insertion, as Realm Swift
    /// reports them) and elements replaced or, for a list of objects, whose
    /// objects changed (`keyPaths` from the element class filter which
    /// changes count, as for ``Results/observe(keyPaths:on:_:)``). When the
    /// owner is deleted, the last call reports every element deleted.
    /// Delivery as for ``Results/observe(keyPaths:on:_:)``; observing an
    /// unmanaged list stops the program, as in Realm.
    ///
    /// A list held by a mixed value (``AnyValue/list(_:)`` read from a
    /// managed object, also inside another list or dictionary) is observed
    /// too, as in Realm:
    ///
    /// ```swift
    /// let token = bag.anything.listValue!.observe { change in
    ///     if case .update(_, let deletions, let insertions, let modifications) = change { ... }
    /// }
    /// ```
    ///
    /// Its object is observed for the property holding it, and each change
    /// compares the list with its contents at the call before: the elements
    /// kept are a longest common subsequence of the two; between two kept
    /// elements, old and new elements left are paired from the first on as
    /// modifications, the rest are deletions and insertions. A change inside
    /// a list or dictionary nested in an element modifies that element. A
    /// commit that leaves the list as it was brings no call. When the list is
    /// gone (its object deleted, or its place given another value) the last
    /// call reports every element deleted, as for a deleted owner. `keyPaths`
    /// do not filter these changes: an object held in a mixed value counts by
    /// identity, and its own changes do not modify the list.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<List<Element>>) -> Void) -> NotificationToken {
        elementObservation(keyPaths).observe(on: queue, { raw, list, _ in CollectionChange(raw, list) }, block)
    }

    /// Calls `block` isolated to `actor` with the list's changes; the list it
    /// gets is frozen.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<List<Element>>) -> Void) async -> NotificationToken {
        elementObservation(keyPaths).observe(on: actor, { raw, list, _ in CollectionChange(raw, list) }, block)
    }

    /// The list's changes as an async sequence (see ``ChangeSequence``).
    public var changes: ChangeSequence<CollectionChange<List<Element>>> {
        elementObservation(nil).sequence { raw, list, _ in CollectionChange(raw, list) }
    }

    /// The list frozen, now and after each change, as an async sequence.
    public var values: ChangeSequence<List<Element>> {
        elementObservation(nil).sequence { raw, list, _ in CollectionChange(raw, list).flatMap(\.collection) }
    }
}

extension MutableSet {
    /// Calls `block` with the set's initial state, then after each commit
    /// that changed it, as Realm's `observe(keyPaths:on:_:)`: indices are
    /// positions in the set's order. Otherwise as ``List/observe(keyPaths:on:_:)``.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<MutableSet<Element>>) -> Void) -> NotificationToken {
        elementObservation(keyPaths).observe(on: queue, { raw, set, _ in CollectionChange(raw, set) }, block)
    }

    /// Calls `block` isolated to `actor` with the set's changes; the set it
    /// gets is frozen.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<MutableSet<Element>>) -> Void) async -> NotificationToken {
        elementObservation(keyPaths).observe(on: actor, { raw, set, _ in CollectionChange(raw, set) }, block)
    }

    /// The set's changes as an async sequence (see ``ChangeSequence``).
    public var changes: ChangeSequence<CollectionChange<MutableSet<Element>>> {
        elementObservation(nil).sequence { raw, set, _ in CollectionChange(raw, set) }
    }

    /// The set frozen, now and after each change, as an async sequence.
    public var values: ChangeSequence<MutableSet<Element>> {
        elementObservation(nil).sequence { raw, set, _ in CollectionChange(raw, set).flatMap(\.collection) }
    }
}

extension Map {
    /// Calls `block` with the map's initial state, then after each commit
    /// that changed it, with the keys deleted, inserted and modified, as
    /// Realm's `observe(keyPaths:on:_:)` of a `Map`. Otherwise as
    /// ``List/observe(keyPaths:on:_:)``.
    ///
    /// A dictionary held by a mixed value (``AnyValue/dictionary(_:)`` read
    /// from a managed object) is observed through its object, as a nested
    /// list is (see ``List/observe(keyPaths:on:_:)``), compared by key: keys
    /// gone are deletions, new keys insertions, and keys whose value differs
    /// (also inside a nested list or dictionary) modifications.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (DatabaseMapChange<Map<Key, Value>>) -> Void) -> NotificationToken {
        mapObservation(keyPaths).observe(on: queue, { raw, map, _ in DatabaseMapChange(raw, map) }, block)
    }

    /// Calls `block` isolated to `actor` with the map's changes; the map it
    /// gets is frozen.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, DatabaseMapChange<Map<Key, Value>>) -> Void) async -> NotificationToken {
        mapObservation(keyPaths).observe(on: actor, { raw, map, _ in DatabaseMapChange(raw, map) }, block)
    }

    /// The map's changes as an async sequence (see ``ChangeSequence``); the
    /// maps in them are frozen. (A map's ``values`` are its values, as in
    /// Realm.)
    public var changes: ChangeSequence<DatabaseMapChange<Map<Key, Value>>> {
        mapObservation(nil).sequence { raw, map, _ in DatabaseMapChange(raw, map) }
    }

    private func mapObservation(_ keyPaths: [String]?) -> Observation<Map> {
        let location = requireManaged(core.location, "\(Map.self)", "observed")
        location.owner.requireUsable()
        if location.isInMixedValue {
            return nestedCollectionObservation(location, .map, live: self, make: { Map($0) })
        }
        return collectionObservation(location, keyPaths, live: self, make: { Map($0) }) { database, location, paths, count, context, token in
            coffer_map_observe(database.handle, location.owner.binding.classId, location.owner.key, location.propertyId,
                               paths, count, ObserverCallbacks.map, context, token)
        }
    }
}

extension LinkingObjects {
    /// Calls `block` with the linking objects' initial state, then after each
    /// commit that changed them, as Realm's `observe(keyPaths:on:_:)`: they
    /// are observed as the results of the objects that link here, and their
    /// rows are links, as they are read and as Realm counts them: an object
    /// linking twice (a list holding this object twice) is two rows, its
    /// second link added is an insertion after its first row, and a link
    /// removed deletes its last row. With key paths that leave out the
    /// origin property, a link added or removed by an object that already
    /// links here is told with the next change they report. Otherwise as
    /// ``Results/observe(keyPaths:on:_:)``.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<LinkingObjects<Element>>) -> Void) -> NotificationToken {
        linkingObservation(keyPaths).observe(on: queue, { raw, objects, _ in CollectionChange(raw, objects) }, block)
    }

    /// Calls `block` isolated to `actor` with the linking objects' changes;
    /// the collection it gets is frozen.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<LinkingObjects<Element>>) -> Void) async -> NotificationToken {
        linkingObservation(keyPaths).observe(on: actor, { raw, objects, _ in CollectionChange(raw, objects) }, block)
    }

    /// The linking objects' changes as an async sequence (see ``ChangeSequence``).
    public var changes: ChangeSequence<CollectionChange<LinkingObjects<Element>>> {
        linkingObservation(nil).sequence { raw, objects, _ in CollectionChange(raw, objects) }
    }

    /// The linking objects frozen, now and after each change, as an async sequence.
    public var values: ChangeSequence<LinkingObjects<Element>> {
        linkingObservation(nil).sequence { raw, objects, _ in CollectionChange(raw, objects).flatMap(\.collection) }
    }

    private func linkingObservation(_ keyPaths: [String]?) -> Observation<LinkingObjects> {
        let location = requireManaged(currentLocation, "\(LinkingObjects.self)", "observed")
        location.owner.requireUsable()
        let (database, owner, propertyName) = (location.database, location.owner, self.propertyName)
        let origin = location.property.originProperty ?? propertyName
        var observation = Observation(
            database: database, live: self,
            rebuild: { other in
                let state = ManagedState(database: other, binding: owner.binding, key: owner.key)
                return state.exists ? LinkingObjects(propertyName: propertyName, location: CollectionLocation(owner: state, index: location.index)) : nil
            },
            register: { context, token throws(CofferError) in
                let binding = try database.binding(for: Element.self)
                let query = try CompiledQuery(database, binding, text: "\(origin) == $0",
                                              arguments: [.link(classId: owner.binding.classId, key: owner.key)])
                let paths = Database.storedKeyPaths(keyPaths, from: binding.schema)
                return try withCKeyPaths(paths) { paths, count in
                    coffer_query_observe(database.handle, query.handle, paths, count, ObserverCallbacks.collection, context, token)
                }
            })
        observation.translate = BacklinkRows(location).translate
        return observation
    }
}

extension CollectionChange {
    /// The collection of an initial state or an update; nil for an error.
    var collection: CollectionType? {
        switch self {
        case .initial(let collection), .update(let collection, _, _, _): return collection
        case .error: return nil
        }
    }
}
