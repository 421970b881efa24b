// List: the ordered collection property, its list-only operations (positions,
// insert, move, swap) on top of CollectionCore, and how it decodes and casts
// as a _Persistable (the rest comes from ElementCollection).

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
///
/// ``AnyValue/list(_:)`` holds a `List<AnyValue>`: unmanaged when made in
/// memory, and the live list nested in a mixed value when read from a managed
/// object (its messages name the path, as `Bag.anything[0]["key"]`).
public final class List<Element: _Persistable>: DatabaseCollection, MutableCollection {
    var core = CollectionCore<[Element]>([], .list)

    /// An empty unmanaged list.
    public init() {}

    public subscript(position: Int) -> Element {
        get {
            core.read(checking: [position], unmanaged: { $0[position] }, managed: { list, location in
                let shallow = Element._cofferReadsNestedAsViews
                let stored = try location.database.element(ofList: list, at: UInt64(position), shallow: shallow)
                return location.decode(stored, as: Element.self, at: .index(position))
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

    /// Adds every element of `objects` at the end, in order, as Realm's
    /// `append(objectsIn:)`; the same as ``append(contentsOf:)``.
    public func append<S: Sequence>(objectsIn objects: S) where S.Element == Element {
        append(contentsOf: objects)
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
}

extension List: ElementCollection {
    static var functions: ElementCollectionFunctions { .list }
}

extension List: _Persistable {
    public static func _cofferDecode(_ stored: _StoredValue) -> List<Element>? {
        guard case .list(let elements) = stored.value else { return nil }
        return decodedElements(elements).map { List($0) }
    }

    /// Another list or an array whose elements fit.
    public static func _cofferCast(_ value: Any) -> List<Element>? {
        castElements(value).map { List($0) }
    }
}
