// MutableSet: the collection property without duplicates, its set operations on
// top of CollectionCore, and how it decodes and casts as a _Persistable (the
// rest comes from ElementCollection).

internal import CCoffer

/// A collection property without duplicates: `@Persisted var tags: MutableSet<String>`.
///
/// Elements are scalars or links to ``Object``s (not embedded objects). Objects
/// are equal when they are the same stored object. The order of a managed set
/// is stable but unspecified. Unmanaged sets live in memory until their object
/// is added; managed ones are live views whose changes need a write transaction
/// (outside one the program stops, as in Realm).
public final class MutableSet<Element: _Persistable>: DatabaseCollection {
    var core = CollectionCore<[Element]>([], .set)

    /// An empty unmanaged set.
    public init() {}

    public subscript(position: Int) -> Element {
        let all = storedElements
        checkIndex(position, all.count, in: "the set")
        return decode(all[position])
    }

    /// True if the set holds `element`.
    public func contains(_ element: Element) -> Bool {
        core.read(unmanaged: { $0.contains(same: element) }, managed: { set, location in
            try location.withCValue(of: element) { value in
                var found: Int32 = 0
                try CofferError.check(coffer_set_contains(set, &value, &found))
                return found != 0
            }
        })
    }

    /// Adds `element` unless the set holds it already.
    public func insert(_ element: Element) {
        core.update("insert into", unmanaged: { elements in
            if !elements.contains(same: element) { elements.append(element) }
        }, managed: { set, location in
            try location.withCValue(of: element) { value in
                try CofferError.check(coffer_set_insert(set, &value, nil))
            }
        })
    }

    /// Adds every element of `elements`, as Realm's `insert(objectsIn:)`.
    public func insert<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        for element in elements {
            insert(element)
        }
    }

    /// Removes `element` if the set holds it.
    public func remove(_ element: Element) {
        core.update("remove from", unmanaged: { elements in
            let wanted = element._cofferEncoded.value
            elements.removeAll { $0._cofferEncoded.value.isSame(as: wanted) }
        }, managed: { set, location in
            try location.withCValue(of: element) { value in
                try CofferError.check(coffer_set_remove(set, &value, nil))
            }
        })
    }

    /// Removes every element.
    public func removeAll() {
        core.removeAll()
    }

    /// Adds every element of `other`.
    public func formUnion<S: Sequence>(_ other: S) where S.Element == Element {
        insert(objectsIn: Array(other))
    }

    /// Keeps only the elements that `other` holds too.
    public func formIntersection<S: Sequence>(_ other: S) where S.Element == Element {
        let kept = Array(other).map { $0._cofferEncoded.value }
        for element in Array(self) where !kept.contains(where: { $0.isSame(as: element._cofferEncoded.value) }) {
            remove(element)
        }
    }

    /// Removes every element that `other` holds.
    public func subtract<S: Sequence>(_ other: S) where S.Element == Element {
        for element in Array(other) {
            remove(element)
        }
    }

    /// True if every element is also in `other`.
    public func isSubset<S: Sequence>(of other: S) -> Bool where S.Element == Element {
        let all = Array(other).map { $0._cofferEncoded.value }
        return storedElements.allSatisfy { element in all.contains { $0.isSame(as: element) } }
    }

    /// True if the set shares an element with `other`.
    public func intersects<S: Sequence>(_ other: S) -> Bool where S.Element == Element {
        Array(other).contains { contains($0) }
    }

    private func decode(_ stored: StoredValue) -> Element {
        guard let location = core.location else {
            return Element._cofferDecode(_StoredValue(value: stored))!
        }
        return location.decode(stored, as: Element.self, at: nil)
    }
}

extension MutableSet: ElementCollection {
    static var functions: ElementCollectionFunctions { .set }

    /// An unmanaged set of `elements` without their duplicates.
    static func withoutDuplicates(_ elements: [Element]) -> MutableSet<Element> {
        let set = MutableSet()
        set.insert(objectsIn: elements)
        return set
    }
}

extension Array where Element: _Persistable {
    /// True if an element is `element` as a collection compares them (objects
    /// by identity).
    fileprivate func contains(same element: Element) -> Bool {
        let wanted = element._cofferEncoded.value
        return contains { $0._cofferEncoded.value.isSame(as: wanted) }
    }
}

extension MutableSet: _Persistable {
    public static func _cofferDecode(_ stored: _StoredValue) -> MutableSet<Element>? {
        switch stored.value {
        case .set(let values), .list(let values): decodedElements(values).map { withoutDuplicates($0) }
        default: nil
        }
    }

    /// Another set or an array whose elements fit; duplicates are dropped.
    public static func _cofferCast(_ value: Any) -> MutableSet<Element>? {
        castElements(value).map { withoutDuplicates($0) }
    }
}
