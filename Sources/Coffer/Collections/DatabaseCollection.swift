// DatabaseCollection: the public protocol that Results, List, MutableSet and
// LinkingObjects share, as Realm's collections share RealmCollection, and the
// members every one of them has through it: positions, the database,
// key-value reading and writing, and projectTo.

import Foundation

/// A collection of objects or values of a database: ``Results``, ``List``,
/// ``MutableSet``, ``LinkingObjects`` and ``AnyDatabaseCollection``, as Realm's
/// `RealmCollection`. Generic code over it works with all of them:
///
/// ```swift
/// func oldest<C: DatabaseCollection>(_ dogs: C) -> Dog? where C.Element == Dog {
///     dogs.sorted(byKeyPath: "age", ascending: false).first
/// }
/// oldest(db.objects(Dog.self)); oldest(person.dogs); oldest(owner.dogs.filter("age > 2"))
/// ```
///
/// Positions are integers from 0. A managed collection is a live view of the
/// database; an unmanaged one holds its elements in memory. Collections of
/// objects also have queries, sorts and aggregates (``where(_:)``,
/// ``filter(_:_:)``, ``sorted(byKeyPath:ascending:)``, ``min(ofProperty:)``,
/// ...), which give live ``Results``.
public protocol DatabaseCollection<Element>: RandomAccessCollection, CustomStringConvertible, ThreadConfined
where Index == Int {
    /// Realm's name for `Element`, used in constraints such as
    /// `where C.ElementType == Dog`.
    typealias ElementType = Element

    /// The database managing this collection, or nil while it is unmanaged;
    /// read it as ``database``.
    var _cofferDatabase: Database? { get }

    /// True when the collection can no longer be read: its object was deleted
    /// (a list, set or linking objects). ``Results`` re-read the database, so
    /// they are never invalidated.
    var isInvalidated: Bool { get }

    /// The position of the first element equal to `object` (objects: the same
    /// stored object), or nil.
    func index(of object: Element) -> Int?

    /// Sets the property named `key` of every object of the collection, as
    /// ``Object/setValue(_:forKey:)`` does; a managed object needs a write
    /// transaction. A collection of values stops the program, as it has no
    /// properties.
    func setValue(_ value: Any?, forKey key: String)

    /// The collection's objects as live ``Results`` of `type` (its own
    /// element type), for the queries of collections of objects; not for use
    /// outside Coffer.
    func _cofferQueryResults<Target: _ResultsElement>(of type: Target.Type) -> Results<Target>
}

extension DatabaseCollection {
    /// Always 0.
    public var startIndex: Int { 0 }

    /// Same as `count`.
    public var endIndex: Int { count }

    /// The database managing this collection, or nil while it is unmanaged.
    public var database: Database? { _cofferDatabase }

    /// The elements at `indexes`, in order; an index out of range stops the program.
    public func objects(at indexes: IndexSet) -> [Element] {
        indexes.map { self[$0] }
    }

    /// The property named `key` of every object, in order, as an array of
    /// optionals (`dogs.value(forKey: "name") as? [String]`), as Realm's
    /// `value(forKey:)`; `"self"` gives the elements themselves. An unknown
    /// property stops the program, naming the class and the key.
    public func value(forKey key: String) -> Any? {
        map { element -> Any? in
            if key == "self" { return element }
            return keyValueObject(of: element, for: "value(forKey: \"\(key)\")").value(forKey: key)
        }
    }

    /// ``value(forKey:)`` for a key path through links: `"owner.name"`.
    public func value(forKeyPath keyPath: String) -> Any? {
        map { element -> Any? in
            if keyPath == "self" { return element }
            var current: Any? = keyValueObject(of: element, for: "value(forKeyPath: \"\(keyPath)\")")
            for key in keyPath.split(separator: ".") {
                guard let object = current as? Object else { return nil }
                current = object.value(forKey: String(key))
            }
            return current
        }
    }

    /// Sets the property on each object in turn; ``Results`` do it in one call
    /// into the C core.
    public func setValue(_ value: Any?, forKey key: String) {
        for element in self {
            keyValueObject(of: element, for: "setValue(_:forKey: \"\(key)\")").setValue(value, forKey: key)
        }
    }

    /// The object an element is or shows, for key-value access; a value
    /// stops the program naming the call.
    private func keyValueObject(of element: Element, for call: String) -> Object {
        if let object = element as? Object { return object }
        if let projected = element as? any _ResultsElement { return projected._cofferObject }
        fatalError("Coffer: \(call) reads properties of objects; a \(Self.self) holds \(Element.self) values")
    }
}

extension DatabaseCollection where Element: Object {
    /// The collection's objects mapped to one of their properties, for
    /// ``Projection``s: `\Person.friends.projectTo.firstName`.
    public var projectTo: ElementMapper<Element> { ElementMapper(self) }
}
