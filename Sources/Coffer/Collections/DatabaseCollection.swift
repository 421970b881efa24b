// DatabaseCollection: the public protocol that List, MutableSet and
// LinkingObjects share, as Realm's collections share RealmCollection, and the
// members every one of them has through it: integer positions and projectTo.

/// A collection of values or objects that belongs to an object: a ``List``,
/// a ``MutableSet`` or ``LinkingObjects``, as Realm's `RealmCollection`.
///
/// Positions are integers from 0. A managed collection is a live view of the
/// database; an unmanaged one holds its elements in memory.
public protocol DatabaseCollection: RandomAccessCollection where Index == Int {
    /// The database managing this collection, or nil while it is unmanaged.
    var database: Database? { get }
}

extension DatabaseCollection {
    /// Always 0.
    public var startIndex: Int { 0 }

    /// Same as `count`.
    public var endIndex: Int { count }
}

extension DatabaseCollection where Element: Object {
    /// The collection's objects mapped to one of their properties, for
    /// ``Projection``s: `\Person.friends.projectTo.firstName`.
    public var projectTo: ElementMapper<Element> { ElementMapper(self) }
}
