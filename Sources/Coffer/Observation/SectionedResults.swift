// SectionedResults: results grouped into sections by a key, as Realm's
// SectionedResults and ResultsSection, for ObservedSectionedResults.

import Foundation

/// One section of ``SectionedResults``: its key and its objects, in the
/// results' order.
public struct ResultsSection<Key: Hashable, Element: Object>: RandomAccessCollection, Identifiable {
    /// The key all the section's objects have.
    public let key: Key
    /// The section's objects.
    public let elements: [Element]

    /// The key, which identifies the section.
    public var id: Key { key }
    public var startIndex: Int { elements.startIndex }
    public var endIndex: Int { elements.endIndex }
    public subscript(position: Int) -> Element { elements[position] }
}

/// Results grouped by a key: one section per key, in the order the results
/// first give each key (sort by the key to have them in key order), each
/// with its objects in the results' order.
public struct SectionedResults<Key: Hashable, Element: Object>: RandomAccessCollection {
    /// The sections.
    public let sections: [ResultsSection<Key, Element>]

    /// Groups `results` by the value at `keyPath`.
    public init(_ results: Results<Element>, sectionKeyPath keyPath: KeyPath<Element, Key>) {
        var order: [Key] = []
        var groups: [Key: [Element]] = [:]
        for object in results {
            let key = object[keyPath: keyPath]
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(object)
        }
        sections = order.map { ResultsSection(key: $0, elements: groups[$0]!) }
    }

    /// The sections' keys, in order.
    public var allKeys: [Key] { sections.map(\.key) }
    public var startIndex: Int { sections.startIndex }
    public var endIndex: Int { sections.endIndex }
    public subscript(position: Int) -> ResultsSection<Key, Element> { sections[position] }
}
