// What a Results can hold: objects of an Object subclass, or Projections of
// them.

/// What a ``Results`` can hold: the objects of an ``Object`` subclass, or
/// ``Projection``s of them. Both read the objects of one stored class; a
/// projection wraps each object as it is read.
///
/// Coffer's own types conform; there is no need to conform others.
public protocol _ResultsElement {
    /// The stored class whose objects are read.
    static var _cofferRootType: Object.Type { get }
    /// The element for an object of ``_cofferRootType``.
    static func _cofferElement(for object: Object) -> Self
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
