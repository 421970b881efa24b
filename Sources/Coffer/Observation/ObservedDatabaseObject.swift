// ObservedDatabaseObject: Realm's @ObservedRealmObject on Swift's
// Observation: one object, re-read by whoever tracks it after each commit
// that changed it, with bindings that write its properties in a transaction.

import Foundation

/// One object, observed: a view model or any `withObservationTracking`
/// client reading it is told once per commit that changed it or deleted it,
/// as Realm's `@ObservedRealmObject`.
///
/// ```swift
/// final class TodoEditor {
///     @ObservedDatabaseObject var todo: Todo
///     init(todo: Todo) { _todo = ObservedDatabaseObject(wrappedValue: todo) }
/// }
///
/// editor.$todo.title.wrappedValue = "Oat milk"   // written in a transaction
/// editor.$todo.items.append(Item())               // a list property
/// ```
///
/// A managed object is observed on its database's thread (create the
/// wrapper there); changes come as the database's observers' do (see
/// ``Database/autorefresh``). An unmanaged object is not observed, and its
/// bindings set its properties directly. Where SwiftUI exists it is also a
/// `DynamicProperty`, and the bindings are SwiftUI's `Binding`.
@propertyWrapper
public struct ObservedDatabaseObject<ObjectType: Object> {
    /// What the object is kept in; it is `Observable`.
    public let store: LiveObjectStore<ObjectType>

    /// Observes `wrappedValue`; with `keyPaths` (Swift names, through
    /// links), only changes of those properties count.
    public init(wrappedValue: ObjectType, keyPaths: [String]? = nil) {
        store = LiveObjectStore(wrappedValue, keyPaths: keyPaths)
    }

    /// The object; reading it registers a dependency with Observation.
    public var wrappedValue: ObjectType { store.object }

    /// Bindings to the object's properties: `$todo.title`.
    public var projectedValue: Wrapper { Wrapper(object: store.untracked) }

    /// Bindings to an object's properties, each writing in a transaction
    /// when the object is managed.
    @dynamicMemberLookup
    public struct Wrapper {
        let object: ObjectType

        /// A binding to the property at `keyPath`.
        public subscript<Value>(dynamicMember keyPath: ReferenceWritableKeyPath<ObjectType, Value>) -> DatabaseBinding<Value> {
            let object = self.object
            return DatabaseBinding(get: { object[keyPath: keyPath] },
                                   set: { value in
                                       object.writeOrSet { object[keyPath: keyPath] = value }
                                   })
        }

        /// A binding to the object itself.
        public var wrappedValue: ObjectType { object }
    }
}

extension Object {
    /// Runs `change` in a write transaction of the object's database when
    /// it is managed (a failure stops the program), else directly.
    func writeOrSet(_ change: () -> Void) {
        if let database {
            database.writeOrFail { _ in change() }
        } else {
            change()
        }
    }
}
