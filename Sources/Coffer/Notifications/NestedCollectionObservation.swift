// Observing a list or map nested in a mixed value: the C core observes
// collection properties only, so the object holding the mixed value is
// observed (its one property), and each change of it becomes the nested
// collection's own change by comparing the collection's contents with those
// of the last call.

import Foundation
internal import CCoffer

extension CollectionLocation {
    /// True for a list or map held by a mixed value (a mixed property, or an
    /// element of a list or map of mixed values), which the C core does not
    /// observe on its own.
    var isInMixedValue: Bool {
        !path.isEmpty || property.collection == .none
    }
}

/// The observation of the list (`kind` `.list`) or map (`.map`) nested in a
/// mixed value at `location`: its object observed for the property holding
/// it, each change compared by ``NestedCollectionChanges``.
func nestedCollectionObservation<Value>(
    _ location: CollectionLocation, _ kind: CollectionKind, live: Value, make: @escaping (CollectionLocation) -> Value
) -> Observation<Value> {
    let database = location.database
    let (binding, key) = (location.owner.binding, location.owner.key)
    let paths = Database.storedKeyPaths([location.property.name], from: binding.schema)
    var observation = Observation(
        database: database, live: live,
        // Rebuilt also when the owner is gone, for the last call reporting
        // every element deleted.
        rebuild: { other in make(location.moved(to: ManagedState(database: other, binding: binding, key: key))) },
        register: { context, token throws(CofferError) in
            try withCKeyPaths(paths) { paths, count in
                coffer_object_observe(database.handle, binding.classId, key, paths, count,
                                      ObserverCallbacks.object, context, token)
            }
        })
    observation.translate = NestedCollectionChanges(location, kind).translate
    return observation
}

/// Turns the changes of the object holding a nested collection into the
/// collection's own: its contents are kept from one call to the next and
/// compared (``CollectionIndices/init(from:to:limit:)``,
/// ``MapChangeKeys/init(from:to:)``), and a change leaving them as they were
/// is no call.
///
/// When the collection is no longer there (its object deleted, or its place
/// now holding another value than a collection of its kind) the last call
/// reports every element deleted, as for a list or map whose object was
/// deleted; nothing follows, also when the place holds a collection again.
///
/// `@unchecked Sendable` because the calls of one observer are made one at a
/// time, in order (on the database's thread, a serial queue, an actor or the
/// notifier thread), and only they use the contents kept.
final class NestedCollectionChanges: @unchecked Sendable {
    private let location: CollectionLocation
    private let kind: CollectionKind
    /// The contents at the last call; nil before the first.
    private var previous: StoredValue?
    private var ended = false

    init(_ location: CollectionLocation, _ kind: CollectionKind) {
        self.location = location
        self.kind = kind
    }

    /// The collection's change for the object's change `raw`, its contents
    /// read through `database`; nil when there is nothing to tell.
    func translate(_ raw: RawChange, _ database: Database?) -> RawChange? {
        guard !ended else { return nil }
        switch raw {
        case .initial:
            guard let database else { return nil }
            switch read(in: database) {
            case .success(let contents): previous = contents ?? empty
            case .failure(let error): return stop(.error(error))
            }
            return raw
        case .object(let record):
            guard let database else { return nil }
            let current: Result<StoredValue?, CofferError> = record.deleted ? .success(nil) : read(in: database)
            switch current {
            case .success(let contents?): return change(to: contents)
            case .success(nil): return stop(change(to: empty, ownerGone: true))
            case .failure(let error): return stop(.error(error))
            }
        case .error:
            return stop(raw)
        case .collection, .map, .database:
            return nil
        }
    }

    private var empty: StoredValue {
        kind == .map ? .map([]) : .list([])
    }

    private func read(in database: Database) -> Result<StoredValue?, CofferError> {
        let place = database === location.database
            ? location
            : location.moved(to: ManagedState(database: database, binding: location.owner.binding, key: location.owner.key))
        return Result { () throws(CofferError) in try place.contents(kind) }
    }

    /// The change from the kept contents to `contents`, which are kept next.
    private func change(to contents: StoredValue, ownerGone: Bool = false) -> RawChange? {
        defer { previous = contents }
        switch (previous ?? empty, contents) {
        case (.list(let old), .list(let new)):
            var indices = CollectionIndices(from: old, to: new)
            indices.rootDeleted = ownerGone
            return indices.isEmpty ? nil : .collection(indices)
        case (.map(let old), .map(let new)):
            var keys = MapChangeKeys(from: old, to: new)
            keys.rootDeleted = ownerGone
            return keys.isEmpty ? nil : .map(keys)
        default:
            return nil
        }
    }

    private func stop(_ last: RawChange?) -> RawChange? {
        ended = true
        return last
    }
}
