// ObservedResults: Realm's @ObservedResults on Swift's Observation: the live
// results of a class, re-read by whoever tracks them after each commit that
// changed them, with write helpers on the projected value.

import Foundation
#if canImport(SwiftUI)
import SwiftUI
#endif

/// The live results of a class, observed: a view model or any
/// `withObservationTracking` client reading them is told once per commit
/// that changed them, as Realm's `@ObservedResults`.
///
/// ```swift
/// final class TodoList {
///     @ObservedResults(Todo.self, where: { !$0.done }, sortDescriptor: SortDescriptor(keyPath: "title"))
///     var todos
/// }
///
/// let list = TodoList()
/// withObservationTracking { render(list.todos) } onChange: { scheduleRender() }
/// list.$todos.append(Todo(value: ["title": "Milk"]))
/// ```
///
/// The database opens when the results are first read, on that thread (it
/// is confined to it), from `configuration`, else SwiftUI's
/// `\.databaseConfiguration` where it exists, else
/// ``DatabaseEnvironment/configuration`` as it was when the wrapper was
/// made, else
/// ``Database/Configuration/defaultConfiguration``; it stops the program if
/// that fails, as Realm's does. Changes come as the database's observers'
/// do: when its thread calls ``Database/refresh()``, or through its
/// scheduler (``Database/setScheduler(_:)``). With `keyPaths`, only changes
/// of those properties (and insertions and deletions) count, as in
/// ``Results/observe(keyPaths:on:_:)``.
///
/// Where SwiftUI exists it is also a `DynamicProperty`.
@propertyWrapper
public struct ObservedResults<Element: Object> {
    #if canImport(SwiftUI)
    /// The environment's configuration, for a wrapper given none.
    @Environment(\.databaseConfiguration) var environmentConfiguration
    #endif

    /// What the results are kept in; it is `Observable`.
    public let store: LiveResultsStore<Element>

    /// Results of `type`, filtered by `where` and then `filter` (a string
    /// predicate), sorted by `sortDescriptor`.
    public init(_ type: Element.Type,
                configuration: Database.Configuration? = nil,
                where query: ((Query<Element>) -> Query<Bool>)? = nil,
                filter: String? = nil,
                keyPaths: [String]? = nil,
                sortDescriptor: SortDescriptor? = nil) {
        store = LiveResultsStore(configuration: configuration, keyPaths: keyPaths) { database in
            var results = database.objects(type)
            if let query { results = results.where(query) }
            if let filter { results = results.filter(filter) }
            if let sortDescriptor { results = results.sorted(by: [sortDescriptor]) }
            return results
        }
    }

    /// The live results; reading them registers a dependency with
    /// Observation.
    public var wrappedValue: Results<Element> { store.results }

    /// The wrapper itself, for its write helpers: `$todos.append(todo)`.
    public var projectedValue: ObservedResults<Element> { self }

    /// The database the results are read from (opened if it is not yet).
    public var database: Database { store.database }

    /// Adds `object` to the database in a transaction, as Realm's
    /// `$results.append(_:)`; it shows up in the results if it matches them.
    public func append(_ object: Element) {
        store.database.writeOrFail { $0.add(object) }
    }

    /// Deletes `object` from the database in a transaction.
    public func remove(_ object: Element) {
        store.database.writeOrFail { $0.delete(object) }
    }

    /// Deletes the objects at `offsets` of the results in one transaction,
    /// as SwiftUI's `onDelete` gives them.
    public func remove(atOffsets offsets: IndexSet) {
        let results = store.results
        let objects = offsets.map { results[$0] }
        store.database.writeOrFail { $0.delete(objects) }
    }
}

extension Database {
    /// Runs `block` in a write transaction; a failure stops the program, as
    /// Realm's `try! realm.write` in its UI helpers.
    func writeOrFail(_ block: (Database) -> Void) {
        do {
            try write { block(self) }
        } catch {
            fail(error)
        }
    }
}
