// List: the ordered collection property, its list-only operations (positions,
// insert, move, swap) on top of CollectionCore, and its _Persistable
// conformance.

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
    private(set) var core: CollectionCore<[Element]>

    /// An empty unmanaged list.
    public init() {
        core = CollectionCore([], Self.functions)
    }

    init(core: CollectionCore<[Element]>) {
        self.core = core
    }

    /// The database managing this list, or nil while it is unmanaged.
    public var database: Database? { core.database }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public var count: Int { core.count }

    public subscript(position: Int) -> Element {
        get {
            core.read(checking: [position], unmanaged: { $0[position] }, managed: { list, location in
                location.decode(try location.database.element(ofList: list, at: UInt64(position)), as: Element.self)
            })
        }
        set {
            core.update("replace an element of", checking: [position],
                        unmanaged: { $0[position] = newValue },
                        managed: { list, location in
                            try location.withCValue(of: newValue) { value in
                                try CofferError.check(coffer_list_set(list, UInt64(position), &value))
                            }
                        })
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
        core.update("insert into", checking: [index], allowingEnd: true,
                    unmanaged: { $0.insert(element, at: index) },
                    managed: { list, location in
                        try location.withCValue(of: element) { value in
                            try CofferError.check(coffer_list_insert(list, UInt64(index), &value))
                        }
                    })
    }

    /// Removes the element at `index`; an embedded object is deleted with it.
    public func remove(at index: Int) {
        core.update("remove from", checking: [index], unmanaged: { _ = $0.remove(at: index) },
                    managed: { list, _ in try CofferError.check(coffer_list_remove(list, UInt64(index))) })
    }

    /// Removes the last element.
    public func removeLast() {
        remove(at: count - 1)
    }

    /// Removes every element.
    public func removeAll() {
        core.removeAll()
    }

    /// Moves the element at `from` so that it ends up at index `to`.
    public func move(from: Int, to: Int) {
        core.update("move an element of", checking: [from, to],
                    unmanaged: { $0.insert($0.remove(at: from), at: to) },
                    managed: { list, _ in try CofferError.check(coffer_list_move(list, UInt64(from), UInt64(to))) })
    }

    /// Swaps the elements at `i` and `j`.
    public func swapAt(_ i: Int, _ j: Int) {
        core.update("swap elements of", checking: [i, j], unmanaged: { $0.swapAt(i, j) },
                    managed: { list, _ in try CofferError.check(coffer_list_swap(list, UInt64(i), UInt64(j))) })
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

    /// Iterates a snapshot of the elements, read in one pass.
    public func makeIterator() -> IndexingIterator<[Element]> {
        elementSnapshot.makeIterator()
    }
}

extension List: ElementCollection {
    static var functions: CollectionFunctions { .list }
    static var getElement: (OpaquePointer?, UInt64, UnsafeMutablePointer<coffer_value>?) -> coffer_status { coffer_list_get }
    static func storedElements(of list: OpaquePointer, in database: Database) throws(CofferError) -> [StoredValue] {
        try database.elements(ofList: list)
    }
}

extension List: _Persistable {
    public static var _cofferKind: _ValueKind { Element._cofferKind.inside(.list) }
    public static var _cofferIsOptional: Bool { Element._cofferIsOptional }
    public static func _cofferDefaultValue() -> List<Element> { List() }

    public static func _cofferDecode(_ stored: _StoredValue) -> List<Element>? {
        guard case .list(let elements) = stored.value else { return nil }
        return decodedElements(elements).map { List($0) }
    }

    /// Another list or an array whose elements fit.
    public static func _cofferCast(_ value: Any) -> List<Element>? {
        castElements(value).map { List($0) }
    }

    public var _cofferEncoded: _StoredValue {
        _StoredValue(value: .list(storedElements))
    }

    public static func _cofferManagedView(_ property: _ManagedProperty) -> List<Element>? {
        List(property.location)
    }
}
