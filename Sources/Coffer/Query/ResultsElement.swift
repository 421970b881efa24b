// What a Results can hold: objects of an Object subclass, Projections of
// them, or values (the values of a list seen sorted or distinct).

import Foundation

/// What a ``Results`` can hold, as Realm's `RealmCollectionValue`: objects
/// (``_ResultsElement``) or values (``_ResultsValue``, `Results<Int>`).
///
/// Coffer's own types conform; there is no need to conform others.
public protocol _ResultsContent {
    /// The stored class whose objects are read; results of values have none.
    static var _cofferRootType: Object.Type { get }
    /// The element for an object of ``_cofferRootType``.
    static func _cofferElement(for object: Object) -> Self
}

extension _ResultsContent {
    /// Results of values read no objects: reaching this is a bug of Coffer's,
    /// and stops the program naming the element type.
    public static var _cofferRootType: Object.Type {
        fatalError("Coffer: Results<\(Self.self)> hold values, not the objects of a class")
    }

    /// Results of values read no objects (see ``_cofferRootType``).
    public static func _cofferElement(for object: Object) -> Self {
        fatalError("Coffer: Results<\(Self.self)> hold values, not the objects of a class")
    }
}

/// What a ``Results`` of objects can hold: the objects of an ``Object``
/// subclass, or ``Projection``s of them. Both read the objects of one stored
/// class; a projection wraps each object as it is read.
///
/// Coffer's own types conform; there is no need to conform others.
public protocol _ResultsElement: _ResultsContent {
    /// The object this element is or shows.
    var _cofferObject: Object { get }
}

extension Object: _ResultsElement {
    public static var _cofferRootType: Object.Type { self }

    public static func _cofferElement(for object: Object) -> Self {
        unsafeDowncast(object, to: self)
    }

    public var _cofferObject: Object { self }
}

/// What a ``Results`` of values can hold: the values a ``List`` holds, seen
/// sorted or distinct (`let ages: Results<Int> = dog.ages.sorted()`), as
/// Realm's `Results<Int>`. Every value type a list holds conforms, and
/// optionals of them.
public protocol _ResultsValue: _ResultsContent, _Persistable {}

extension Bool: _ResultsValue {}
extension Int: _ResultsValue {}
extension Int8: _ResultsValue {}
extension Int16: _ResultsValue {}
extension Int32: _ResultsValue {}
extension Int64: _ResultsValue {}
extension Float: _ResultsValue {}
extension Double: _ResultsValue {}
extension String: _ResultsValue {}
extension Data: _ResultsValue {}
extension Date: _ResultsValue {}
extension ObjectId: _ResultsValue {}
extension UUID: _ResultsValue {}
extension Decimal128: _ResultsValue {}
extension AnyValue: _ResultsValue {}
extension Optional: _ResultsContent where Wrapped: _ResultsValue & _PersistableInsideOptional {}
extension Optional: _ResultsValue where Wrapped: _ResultsValue & _PersistableInsideOptional {}
