internal import CCoffer

/// A collection property without duplicates: `@Persisted var tags: MutableSet<String>`.
///
/// Elements are scalars or links to ``Object``s (not embedded objects). Objects
/// are equal when they are the same stored object. The order of a managed set
/// is stable but unspecified. Unmanaged sets live in memory until their object
/// is added; managed ones are live views whose changes need a write transaction
/// (outside one the program stops, as in Realm).
public final class MutableSet<Element: _Persistable>: RandomAccessCollection {
    private enum Storage {
        case unmanaged([Element])
        case managed(CollectionLocation)
    }

    private var storage: Storage

    /// An empty unmanaged set.
    public init() {
        storage = .unmanaged([])
    }

    init(_ location: CollectionLocation) {
        storage = .managed(location)
    }

    /// Where a managed set lives; nil while it is unmanaged.
    var managedLocation: CollectionLocation? {
        if case .managed(let location) = storage { return location }
        return nil
    }

    /// The database managing this set, or nil while it is unmanaged.
    public var database: Database? {
        if case .managed(let location) = storage { return location.database }
        return nil
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public var count: Int {
        switch storage {
        case .unmanaged(let elements):
            return elements.count
        case .managed(let location):
            return location.withSet(nil) { set in
                var count: UInt64 = 0
                try CofferError.check(coffer_set_count(set, &count))
                return Int(count)
            }
        }
    }

    public subscript(position: Int) -> Element {
        let all = storedElements
        checkIndex(position, all.count, in: "the set")
        return decode(all[position])
    }

    /// True if the set holds `element`.
    public func contains(_ element: Element) -> Bool {
        let wanted = element._cofferEncoded.value
        switch storage {
        case .unmanaged(let elements):
            return elements.contains { $0._cofferEncoded.value.isSame(as: wanted) }
        case .managed(let location):
            return location.withSet(nil) { set in
                let arena = ValueArena()
                var value = try location.cValue(wanted, arena)
                var found: Int32 = 0
                try CofferError.check(coffer_set_contains(set, &value, &found))
                return found != 0
            }
        }
    }

    /// Adds `element` unless the set holds it already.
    public func insert(_ element: Element) {
        switch storage {
        case .unmanaged(var elements):
            if !contains(element) {
                elements.append(element)
                storage = .unmanaged(elements)
            }
        case .managed(let location):
            location.withSet("insert into") { set in
                let arena = ValueArena()
                var value = try location.cValue(element._cofferEncoded.value, arena)
                try CofferError.check(coffer_set_insert(set, &value, nil))
            }
        }
    }

    /// Adds every element of `elements`, as Realm's `insert(objectsIn:)`.
    public func insert<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        for element in elements {
            insert(element)
        }
    }

    /// Removes `element` if the set holds it.
    public func remove(_ element: Element) {
        switch storage {
        case .unmanaged(var elements):
            let wanted = element._cofferEncoded.value
            elements.removeAll { $0._cofferEncoded.value.isSame(as: wanted) }
            storage = .unmanaged(elements)
        case .managed(let location):
            location.withSet("remove from") { set in
                let arena = ValueArena()
                var value = try location.cValue(element._cofferEncoded.value, arena)
                try CofferError.check(coffer_set_remove(set, &value, nil))
            }
        }
    }

    /// Removes every element.
    public func removeAll() {
        switch storage {
        case .unmanaged:
            storage = .unmanaged([])
        case .managed(let location):
            location.withSet("clear") { set in
                try CofferError.check(coffer_set_clear(set))
            }
        }
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

    var storedElements: [StoredValue] {
        switch storage {
        case .unmanaged(let elements):
            return elements.map { $0._cofferEncoded.value }
        case .managed(let location):
            return location.withSet(nil) { set in try location.database.elements(ofSet: set) }
        }
    }

    private func decode(_ stored: StoredValue) -> Element {
        switch storage {
        case .unmanaged:
            return Element._cofferDecode(_StoredValue(value: stored))!
        case .managed(let location):
            return location.decode(stored, as: Element.self)
        }
    }

    /// Iterates a snapshot of the elements, read in one pass.
    public func makeIterator() -> IndexingIterator<[Element]> {
        switch storage {
        case .unmanaged(let elements):
            return elements.makeIterator()
        case .managed:
            return storedElements.map(decode).makeIterator()
        }
    }
}

extension MutableSet: _Persistable {
    public static var _cofferKind: _ValueKind {
        var kind = Element._cofferKind
        kind.collection = .set
        return kind
    }
    public static var _cofferIsOptional: Bool { Element._cofferIsOptional }
    public static func _cofferDefaultValue() -> MutableSet<Element> { MutableSet() }

    public static func _cofferDecode(_ stored: _StoredValue) -> MutableSet<Element>? {
        let elements: [StoredValue]
        switch stored.value {
        case .set(let values), .list(let values): elements = values
        default: return nil
        }
        let set = MutableSet()
        for element in elements {
            guard let value = Element._cofferDecode(_StoredValue(value: element)) else { return nil }
            set.insert(value)
        }
        return set
    }

    /// Another set or an array whose elements fit; duplicates are dropped.
    public static func _cofferCast(_ value: Any) -> MutableSet<Element>? {
        if let set = value as? MutableSet<Element> {
            return _cofferDecode(set._cofferEncoded)
        }
        guard let array = value as? [Any] else { return nil }
        let set = MutableSet()
        for item in array {
            guard let element = Element._cofferCast(item) else { return nil }
            set.insert(element)
        }
        return set
    }

    public var _cofferEncoded: _StoredValue {
        _StoredValue(value: .set(storedElements))
    }

    public static func _cofferManagedView(_ property: _ManagedProperty) -> MutableSet<Element>? {
        MutableSet(CollectionLocation(owner: property.owner, index: property.index))
    }
}
