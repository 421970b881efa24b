// Observing a list of values seen sorted or distinct: the C observer of the
// list's view (coffer_list_values_observe), on the database's thread, a queue
// or an actor, and as async sequences.

import Foundation
internal import CCoffer

extension Results where Element: _ResultsValue {
    /// Calls `block` with the values' initial state, then after each commit
    /// that changed them, as Realm's `observe(on:_:)` of
    /// `list.sorted(ascending:)`: indices are rows of the sorted (distinct)
    /// view, deletions and modifications in the old one, insertions in the
    /// new one; a value replaced in place is a modification, or a deletion
    /// plus an insertion when that moves it in the view. When the list's
    /// object is deleted the last call reports every row deleted. Delivery as
    /// for the ``Results`` of objects; observing the view of an
    /// unmanaged list, or of a list held by a mixed value, stops the program.
    public func observe(on queue: DispatchQueue? = nil,
                        _ block: @escaping (CollectionChange<Results<Element>>) -> Void) -> NotificationToken {
        viewObservation().observe(on: queue, { raw, values, _ in CollectionChange(raw, values) }, block)
    }

    /// Calls `block` isolated to `actor` with the values' changes; the
    /// values it gets are frozen.
    public func observe<A: Actor>(on actor: A, _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @Sendable @escaping (isolated A, CollectionChange<Results<Element>>) -> Void) async -> NotificationToken {
        viewObservation().observe(on: actor, { raw, values, _ in CollectionChange(raw, values) }, block)
    }

    /// The values' changes as an async sequence (see ``ChangeSequence``).
    public var changes: ChangeSequence<CollectionChange<Results<Element>>> {
        viewObservation().sequence { raw, values, _ in CollectionChange(raw, values) }
    }

    /// The values frozen, now and after each change, as an async sequence.
    public var values: ChangeSequence<Results<Element>> {
        viewObservation().sequence { raw, values, _ in CollectionChange(raw, values).flatMap(\.collection) }
    }

    private func viewObservation() -> Observation<Results> {
        let view = valueView
        let location = requireManaged(view.list.managedLocation, "\(List<Element>.self)", "observed sorted or distinct")
        location.owner.requireUsable()
        if location.isInMixedValue {
            fatalError("Coffer: the sorted or distinct values of \(location.name), a list held by a mixed value, cannot be observed; observe the list itself")
        }
        let (order, distinct) = (view.order, view.isDistinct ? Int32(1) : 0)
        return collectionObservation(location, nil, live: self, make: {
            Results(view.over(List($0)))
        }) { database, location, _, _, context, token in
            coffer_list_values_observe(database.handle, location.owner.binding.classId, location.owner.key, location.propertyId,
                                       order, distinct, ObserverCallbacks.collection, context, token)
        }
    }
}
