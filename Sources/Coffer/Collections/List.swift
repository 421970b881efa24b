internal import CCoffer

/// An ordered collection property: `@Persisted var dogs: List<Dog>`.
///
/// Elements are any type a ``Persisted`` property stores (optionals too), or
/// objects: a list of ``Object`` links, or of ``EmbeddedObject``s owned by the
/// list. An unmanaged list is an array in memory, written when its object is
/// added; the list of a managed object is a live view of the database, and its
/// changes need a write transaction. As in Realm, a change outside a write
/// transaction, an index out of range or use of a deleted object's list stops
/// the program with a message naming the class and property.
public final class List<Element: _Persistable>: RandomAccessCollection, MutableCollection {
    private enum Storage {
        case unmanaged([Element])
        case managed(CollectionLocation)
    }

    private var storage: Storage

    /// An empty unmanaged list.
    public init() {
        storage = .unmanaged([])
    }

    init(_ location: CollectionLocation) {
        storage = .managed(location)
    }

    /// Where a managed list lives; nil while it is unmanaged.
    var managedLocation: CollectionLocation? {
        if case .managed(let location) = storage { return location }
        return nil
    }

    /// The database managing this list, or nil while it is unmanaged.
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
            return location.withList(nil) { list in
                var count: UInt64 = 0
                try CofferError.check(coffer_list_count(list, &count))
                return Int(count)
            }
        }
    }

    public subscript(position: Int) -> Element {
        get {
            switch storage {
            case .unmanaged(let elements):
                checkIndex(position, elements.count, in: "the list")
                return elements[position]
            case .managed(let location):
                let stored = location.withList(nil) { list in
                    try checkManagedIndex(list, position, location)
                    return try location.database.element(ofList: list, at: UInt64(position))
                }
                return location.decode(stored, as: Element.self)
            }
        }
        set {
            switch storage {
            case .unmanaged(var elements):
                checkIndex(position, elements.count, in: "the list")
                elements[position] = newValue
                storage = .unmanaged(elements)
            case .managed(let location):
                location.withList("replace an element of") { list in
                    try checkManagedIndex(list, position, location)
                    let arena = ValueArena()
                    var value = try location.cValue(newValue._cofferEncoded.value, arena)
                    try CofferError.check(coffer_list_set(list, UInt64(position), &value))
                }
            }
        }
    }

    /// Adds `element` at the end.
    public func append(_ element: Element) {
        insert(element, at: count)
    }

    /// Adds every element of `elements` at the end, in order.
    public func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        for element in elements {
            append(element)
        }
    }

    /// Inserts `element` before `index` (`count` appends).
    public func insert(_ element: Element, at index: Int) {
        switch storage {
        case .unmanaged(var elements):
            checkIndex(index, elements.count, in: "the list", allowingEnd: true)
            elements.insert(element, at: index)
            storage = .unmanaged(elements)
        case .managed(let location):
            location.withList("insert into") { list in
                var count: UInt64 = 0
                try CofferError.check(coffer_list_count(list, &count))
                checkIndex(index, Int(count), in: location.name, allowingEnd: true)
                let arena = ValueArena()
                var value = try location.cValue(element._cofferEncoded.value, arena)
                try CofferError.check(coffer_list_insert(list, UInt64(index), &value))
            }
        }
    }

    /// Removes the element at `index`; an embedded object is deleted with it.
    public func remove(at index: Int) {
        switch storage {
        case .unmanaged(var elements):
            checkIndex(index, elements.count, in: "the list")
            elements.remove(at: index)
            storage = .unmanaged(elements)
        case .managed(let location):
            location.withList("remove from") { list in
                try checkManagedIndex(list, index, location)
                try CofferError.check(coffer_list_remove(list, UInt64(index)))
            }
        }
    }

    /// Removes the last element.
    public func removeLast() {
        remove(at: count - 1)
    }

    /// Removes every element.
    public func removeAll() {
        switch storage {
        case .unmanaged:
            storage = .unmanaged([])
        case .managed(let location):
            location.withList("clear") { list in
                try CofferError.check(coffer_list_clear(list))
            }
        }
    }

    /// Moves the element at `from` so that it ends up at index `to`.
    public func move(from: Int, to: Int) {
        switch storage {
        case .unmanaged(var elements):
            checkIndex(from, elements.count, in: "the list")
            checkIndex(to, elements.count, in: "the list")
            elements.insert(elements.remove(at: from), at: to)
            storage = .unmanaged(elements)
        case .managed(let location):
            location.withList("move an element of") { list in
                try checkManagedIndex(list, from, location)
                try checkManagedIndex(list, to, location)
                try CofferError.check(coffer_list_move(list, UInt64(from), UInt64(to)))
            }
        }
    }

    /// Swaps the elements at `i` and `j`.
    public func swapAt(_ i: Int, _ j: Int) {
        switch storage {
        case .unmanaged(var elements):
            checkIndex(i, elements.count, in: "the list")
            checkIndex(j, elements.count, in: "the list")
            elements.swapAt(i, j)
            storage = .unmanaged(elements)
        case .managed(let location):
            location.withList("swap elements of") { list in
                try checkManagedIndex(list, i, location)
                try checkManagedIndex(list, j, location)
                try CofferError.check(coffer_list_swap(list, UInt64(i), UInt64(j)))
            }
        }
    }

    /// Replaces the element at `index` with `object`, as Realm's `replace(index:object:)`.
    public func replace(index: Int, object: Element) {
        self[index] = object
    }

    /// The index of the first element equal to `element` (objects: the same
    /// stored object), or nil.
    public func index(of element: Element) -> Int? {
        let wanted = element._cofferEncoded.value
        return storedElements.firstIndex { $0.isSame(as: wanted) }
    }

    /// Every element as stored, read in one pass.
    var storedElements: [StoredValue] {
        switch storage {
        case .unmanaged(let elements):
            return elements.map { $0._cofferEncoded.value }
        case .managed(let location):
            return location.withList(nil) { list in try location.database.elements(ofList: list) }
        }
    }

    /// Iterates a snapshot of the elements, read in one pass.
    public func makeIterator() -> IndexingIterator<[Element]> {
        switch storage {
        case .unmanaged(let elements):
            return elements.makeIterator()
        case .managed(let location):
            return storedElements.map { location.decode($0, as: Element.self) }.makeIterator()
        }
    }
}

private func checkManagedIndex(_ list: OpaquePointer, _ index: Int, _ location: CollectionLocation) throws(CofferError) {
    var count: UInt64 = 0
    try CofferError.check(coffer_list_count(list, &count))
    checkIndex(index, Int(count), in: location.name)
}

extension List: _Persistable {
    public static var _cofferKind: _ValueKind {
        var kind = Element._cofferKind
        kind.collection = .list
        return kind
    }
    public static var _cofferIsOptional: Bool { Element._cofferIsOptional }
    public static func _cofferDefaultValue() -> List<Element> { List() }

    public static func _cofferDecode(_ stored: _StoredValue) -> List<Element>? {
        guard case .list(let elements) = stored.value else { return nil }
        var decoded: [Element] = []
        for element in elements {
            guard let value = Element._cofferDecode(_StoredValue(value: element)) else { return nil }
            decoded.append(value)
        }
        let list = List()
        list.storage = .unmanaged(decoded)
        return list
    }

    /// Another list or an array whose elements fit.
    public static func _cofferCast(_ value: Any) -> List<Element>? {
        if let list = value as? List<Element> {
            return _cofferDecode(list._cofferEncoded)
        }
        guard let array = value as? [Any] else { return nil }
        var elements: [Element] = []
        for item in array {
            guard let element = Element._cofferCast(item) else { return nil }
            elements.append(element)
        }
        let list = List()
        list.storage = .unmanaged(elements)
        return list
    }

    public var _cofferEncoded: _StoredValue {
        _StoredValue(value: .list(storedElements))
    }

    public static func _cofferManagedView(_ property: _ManagedProperty) -> List<Element>? {
        List(CollectionLocation(owner: property.owner, index: property.index))
    }
}
