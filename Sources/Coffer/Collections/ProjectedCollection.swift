// ProjectedCollection and ElementMapper: the objects of a collection seen
// through one of their properties, as a Projection declares them.

/// The objects of a ``List``, ``MutableSet`` or ``LinkingObjects``, seen
/// through one of their properties: `person.friends.projectTo.firstName`.
///
/// It is what a ``Projection`` declares to show a collection of objects as
/// a collection of values:
///
/// ```swift
/// @Projected(\Person.friends.projectTo.firstName) var friendsFirstNames: ProjectedCollection<String>
/// ```
///
/// The collection is live: it reads the underlying collection and its objects
/// every time it is used. Setting an element sets that property of the object
/// at that position (in a write transaction, for a managed object).
public struct ProjectedCollection<Element>: RandomAccessCollection, CustomStringConvertible {
    private let countElements: () -> Int
    private let read: (Int) -> Element
    private let write: (Int, Element) -> Void

    init<Object>(_ objects: ObjectsAt<Object>, _ keyPath: KeyPath<Object, Element>) {
        countElements = objects.count
        read = { objects.object($0)[keyPath: keyPath] }
        write = { position, value in
            guard let writable = keyPath as? ReferenceWritableKeyPath<Object, Element> else {
                fatalError("Coffer: cannot set an element of a collection projected through the read-only key path \(keyPath)")
            }
            objects.object(position)[keyPath: writable] = value
        }
    }

    /// Positions are 0 up to ``count``.
    public typealias Index = Int

    /// Always 0.
    public var startIndex: Int { 0 }

    /// Same as ``count``.
    public var endIndex: Int { countElements() }

    /// The number of objects in the underlying collection.
    public var count: Int { countElements() }

    /// The property of the object at `position`; out of range stops the program,
    /// as the underlying collection's subscript does.
    public subscript(position: Int) -> Element {
        get { read(position) }
        nonmutating set { write(position, newValue) }
    }

    /// `ProjectedCollection<String>["Ali", "Jo"]`.
    public var description: String {
        "ProjectedCollection<\(Element.self)>\(Array(self))"
    }
}

/// The objects of a collection, waiting for the property to project them to:
/// `projectTo.firstName` gives a ``ProjectedCollection`` of first names.
@dynamicMemberLookup
public struct ElementMapper<Element: Object> {
    private let objects: ObjectsAt<Element>

    init<Base: RandomAccessCollection>(_ base: Base) where Base.Element == Element, Base.Index == Int {
        objects = ObjectsAt(count: { base.count }, object: { base[$0] })
    }

    /// The collection's objects seen through their property at `keyPath`.
    public subscript<V>(dynamicMember keyPath: KeyPath<Element, V>) -> ProjectedCollection<V> {
        ProjectedCollection(objects, keyPath)
    }
}

/// Reads a live collection of objects: its count and the object at a position.
struct ObjectsAt<Object> {
    let count: () -> Int
    let object: (Int) -> Object
}
