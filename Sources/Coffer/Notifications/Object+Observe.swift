// Observing an object: its property changes with old and new values and its
// deletion, on the database's thread, a queue or an actor, and as async
// sequences.

import Foundation
internal import CCoffer

/// The observing members of ``Object``, typed by the observed class: a
/// `Dog`'s observer gets an `ObjectChange<Dog>`.
public protocol _ObjectObservable: AnyObject {}

extension Object: _ObjectObservable {}

extension _ObjectObservable where Self: Object {
    /// Calls `block` after each commit that changed the object's properties,
    /// and once when it is deleted, as Realm's `observe(keyPaths:on:_:)`.
    ///
    /// ```swift
    /// let token = dog.observe { change in
    ///     switch change {
    ///     case .change(_, let properties):
    ///         for property in properties { print(property.name, property.oldValue ?? "nil", property.newValue ?? "nil") }
    ///     case .deleted: print("deleted")
    ///     case .error(let error): print(error)
    ///     }
    /// }
    /// ```
    ///
    /// Without `keyPaths` the object's own properties count; `keyPaths`
    /// (Swift names, through links: `["name", "owner.name"]`) restrict that
    /// to those paths, and a change reached through a link is reported as
    /// the path's first property. Delivery as for ``Results/observe(keyPaths:on:_:)``.
    ///
    /// An unmanaged or deleted object stops the program, as in Realm; an
    /// unknown key path is reported as `.error`, naming it.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        let observation = objectObservation(keyPaths)
        let binding = observation.binding
        return observation.observation.observe(on: queue, { raw, object, database in
            ObjectChange(raw, object, binding, in: database)
        }, block)
    }

    /// Calls `block` isolated to `actor` after each commit that changed the
    /// object, and once when it is deleted; the object it gets is frozen.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A,
                                  _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, ObjectChange<Self>) -> Void) async -> NotificationToken {
        let observation = objectObservation(keyPaths)
        let binding = observation.binding
        return observation.observation.observe(on: actor, { raw, object, database in
            ObjectChange(raw, object, binding, in: database)
        }, block)
    }

    /// The object's changes as an async sequence, ending after `.deleted`;
    /// the objects in them are frozen (see ``ChangeSequence``).
    public func changes(keyPaths: [String]? = nil) -> ChangeSequence<ObjectChange<Self>> {
        let observation = objectObservation(keyPaths)
        let binding = observation.binding
        return observation.observation.sequence({ raw, object, database in
            ObjectChange(raw, object, binding, in: database)
        }, isLast: Self.isDeletion)
    }

    /// ``changes(keyPaths:)`` with every property counting.
    public var changes: ChangeSequence<ObjectChange<Self>> {
        changes()
    }

    /// The object frozen, now and after each commit that changed it, as an
    /// async sequence that ends when it is deleted.
    public var values: ChangeSequence<Self> {
        objectObservation(nil).observation.sequence({ raw, object, _ in
            switch raw {
            case .initial, .object: return Self.isDeletion(raw) ? nil : object
            case .collection, .map, .database, .error: return nil
            }
        }, isLast: Self.isDeletion)
    }

    private static func isDeletion(_ raw: RawChange) -> Bool {
        if case .object(let record) = raw { return record.deleted }
        if case .error = raw { return true }
        return false
    }

    func objectObservation(_ keyPaths: [String]?) -> (observation: Observation<Self>, binding: ClassBinding) {
        guard let managed = managedState else {
            fatalError("Coffer: an unmanaged \(Self.className()) cannot be observed; add it to a Database first")
        }
        managed.requireUsable()
        let (database, binding, key) = (managed.database, managed.binding, managed.key)
        let paths = Database.storedKeyPaths(keyPaths, from: binding.schema)
        let observation = Observation<Self>(
            database: database, live: self,
            rebuild: { database in
                let object = database.makeObject(Self.self, binding, key)
                return object.isInvalidated ? nil : object
            },
            register: { context, token throws(CofferError) in
                try withCKeyPaths(paths) { paths, count in
                    coffer_object_observe(database.handle, binding.classId, key, paths, count,
                                          ObserverCallbacks.object, context, token)
                }
            })
        return (observation, binding)
    }
}
