// ObservedSectionedResults: Realm's @ObservedSectionedResults on Swift's
// Observation: live results grouped by a key, re-read by whoever tracks them
// after each commit that changed them.

import Foundation
#if canImport(SwiftUI)
import SwiftUI
#endif

/// The live results of a class grouped into sections by a key, observed as
/// ``ObservedResults`` are, as Realm's `@ObservedSectionedResults`.
///
/// ```swift
/// final class Shelf {
///     @ObservedSectionedResults(Book.self, sectionKeyPath: \.author,
///                               sortDescriptors: [SortDescriptor(keyPath: "author")])
///     var books
/// }
/// for section in shelf.books { print(section.key, section.map(\.title)) }
/// ```
///
/// The database opens, and changes come, as for ``ObservedResults``. With
/// `keyPaths`, include the section key's property, or a change of an
/// object's section is not seen.
@propertyWrapper
public struct ObservedSectionedResults<Key: Hashable, Element: Object> {
    #if canImport(SwiftUI)
    /// The environment's configuration, for a wrapper given none.
    @Environment(\.databaseConfiguration) var environmentConfiguration
    #endif

    /// What the results are kept in; it is `Observable`.
    public let store: LiveResultsStore<Element>
    private let sectionKeyPath: KeyPath<Element, Key>

    /// Results of `type`, filtered by `where` and then `filter`, sorted by
    /// `sortDescriptors`, grouped by the value at `sectionKeyPath`.
    public init(_ type: Element.Type,
                sectionKeyPath: KeyPath<Element, Key>,
                configuration: Database.Configuration? = nil,
                where query: ((Query<Element>) -> Query<Bool>)? = nil,
                filter: String? = nil,
                keyPaths: [String]? = nil,
                sortDescriptors: [SortDescriptor] = []) {
        self.sectionKeyPath = sectionKeyPath
        store = LiveResultsStore(configuration: configuration, keyPaths: keyPaths) { database in
            var results = database.objects(type)
            if let query { results = results.where(query) }
            if let filter { results = results.filter(filter) }
            if !sortDescriptors.isEmpty { results = results.sorted(by: sortDescriptors) }
            return results
        }
    }

    /// The sections, grouped from the live results; reading them registers
    /// a dependency with Observation.
    public var wrappedValue: SectionedResults<Key, Element> {
        SectionedResults(store.results, sectionKeyPath: sectionKeyPath)
    }

    /// The wrapper itself, for its write helpers.
    public var projectedValue: ObservedSectionedResults<Key, Element> { self }

    /// The database the results are read from (opened if it is not yet).
    public var database: Database { store.database }

    /// Adds `object` to the database in a transaction.
    public func append(_ object: Element) {
        store.database.writeOrFail { $0.add(object) }
    }

    /// Deletes `object` from the database in a transaction.
    public func remove(_ object: Element) {
        store.database.writeOrFail { $0.delete(object) }
    }
}
