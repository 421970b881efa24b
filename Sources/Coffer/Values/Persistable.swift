// _Persistable and its relatives: what a @Persisted property can store, and the
// conformances of the standard scalar types.

import Foundation

/// A type that a ``Persisted`` property can store.
///
/// Coffer provides the conformances: `Bool`, `Int`, `Int8`, `Int16`, `Int32`, `Int64`,
/// `Float`, `Double`, `String`, `Data`, `Date`, ``ObjectId``, `UUID`, ``Decimal128``,
/// enums that adopt ``PersistableEnum``, ``AnyValue``, `Optional` of any of these,
/// ``Object`` subclasses (as optional links or collection elements), ``List``,
/// ``MutableSet``, ``Map`` and ``LinkingObjects``. Do not
/// conform your own types to it; its requirements are Coffer's own and may change.
public protocol _Persistable {
    /// The kind of property this type maps to.
    static var _cofferKind: _ValueKind { get }
    /// True for `Optional` types: the property may hold nil.
    static var _cofferIsOptional: Bool { get }
    /// The value of a property declared without an initial value.
    static func _cofferDefaultValue() -> Self
    /// The Swift value of a stored value, or nil if it does not fit this type.
    static func _cofferDecode(_ stored: _StoredValue) -> Self?
    /// A value given as `Any` (to `Object(value:)` or `create`) as this type, or nil.
    static func _cofferCast(_ value: Any) -> Self?
    /// The value to store.
    var _cofferEncoded: _StoredValue { get }
    /// The Swift value of a value stored at `place` of a managed object: as
    /// ``_cofferDecode(_:)``, but a list or map nested in a mixed value
    /// becomes a live view of that place.
    static func _cofferDecode(_ stored: _StoredValue, nestedAt place: _NestedPlace) -> Self?
    /// A live view of a managed property (a collection or backlinks), or nil for
    /// types whose value is read from the database.
    static func _cofferManagedView(_ property: _ManagedProperty) -> Self?
    /// The getter's value of a managed property: its live view, or the value
    /// read from the database. A requirement so that each type's witness is
    /// specialized: a getter then never asks the runtime for `Optional<Self>`.
    static func _cofferManagedValue(_ property: _ManagedProperty) -> Self
}

extension _Persistable {
    public static var _cofferIsOptional: Bool { false }
    public static func _cofferCast(_ value: Any) -> Self? { value as? Self }
    public static func _cofferManagedView(_ property: _ManagedProperty) -> Self? { nil }
    public static func _cofferManagedValue(_ property: _ManagedProperty) -> Self {
        if let view = _cofferManagedView(property) {
            return view
        }
        return property.owner.read(Self.self, at: property.index)
    }
    public static func _cofferDecode(_ stored: _StoredValue, nestedAt place: _NestedPlace) -> Self? {
        _cofferDecode(stored)
    }
}

extension _Persistable {
    /// True for mixed values (``AnyValue``), which read a nested list or map as
    /// a live view of its place: their reads need not fetch its contents.
    static var _cofferReadsNestedAsViews: Bool {
        let kind = _cofferKind
        return kind.kind == .mixed && kind.collection == .none
    }
}

/// Where a value of a managed object lies: a property, or an element of one of
/// its collections. Only Coffer creates and reads it.
public struct _NestedPlace {
    /// The property (`step` nil) or the collection holding the value.
    let parent: CollectionLocation
    /// The element's position or key in `parent`; nil for the property itself.
    let step: CollectionStep?

    /// Where a collection held at this place lives.
    var location: CollectionLocation { step.map { parent.appending($0) } ?? parent }
}

/// One property of one managed object. Only Coffer creates and reads it.
public struct _ManagedProperty {
    let owner: ManagedState
    let index: Int
}

/// A ``_Persistable`` type that may be wrapped in `Optional`.
public protocol _PersistableInsideOptional: _Persistable {}

/// A type that can be a primary key: integers, `String`, ``ObjectId``, `UUID` and
/// their optionals.
public protocol _PrimaryKey: _Persistable {}

/// A type that can be indexed: `Bool`, integers, `String`, `Date`, ``ObjectId``,
/// `UUID` and their optionals.
public protocol _Indexable: _Persistable {}

extension Optional: _Persistable where Wrapped: _PersistableInsideOptional {
    public static var _cofferKind: _ValueKind { Wrapped._cofferKind }
    public static var _cofferIsOptional: Bool { true }
    public static func _cofferDefaultValue() -> Self { nil }
    public static func _cofferDecode(_ stored: _StoredValue) -> Self? {
        if case .null = stored.value {
            return .some(nil)
        }
        return Wrapped._cofferDecode(stored).map { .some($0) }
    }
    public static func _cofferDecode(_ stored: _StoredValue, nestedAt place: _NestedPlace) -> Self? {
        if case .null = stored.value {
            return .some(nil)
        }
        return Wrapped._cofferDecode(stored, nestedAt: place).map { .some($0) }
    }
    public static func _cofferCast(_ value: Any) -> Self? {
        guard let unwrapped = unwrapAny(value) else {
            return .some(nil)
        }
        return Wrapped._cofferCast(unwrapped).map { .some($0) }
    }
    public var _cofferEncoded: _StoredValue {
        self?._cofferEncoded ?? _StoredValue(value: .null)
    }
}

extension Optional: _PrimaryKey where Wrapped: _PrimaryKey & _PersistableInsideOptional {}
extension Optional: _Indexable where Wrapped: _Indexable & _PersistableInsideOptional {}

/// Integers are stored as 64-bit integers; a stored value outside the range of the
/// Swift type does not decode.
public protocol _PersistableInteger: FixedWidthInteger, _PersistableInsideOptional, _PrimaryKey, _Indexable {}

extension _PersistableInteger {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .int) }
    public static func _cofferDefaultValue() -> Self { 0 }
    public static func _cofferDecode(_ stored: _StoredValue) -> Self? {
        guard case .int(let v) = stored.value else { return nil }
        return Self(exactly: v)
    }
    public static func _cofferCast(_ value: Any) -> Self? {
        if let v = value as? Self { return v }
        if let v = value as? any BinaryInteger { return Self(exactly: v) }
        return nil
    }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .int(Int64(self))) }
}

extension Int: _PersistableInteger {}
extension Int8: _PersistableInteger {}
extension Int16: _PersistableInteger {}
extension Int32: _PersistableInteger {}
extension Int64: _PersistableInteger {}

extension Bool: _PersistableInsideOptional, _Indexable {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .bool) }
    public static func _cofferDefaultValue() -> Bool { false }
    public static func _cofferDecode(_ stored: _StoredValue) -> Bool? {
        guard case .bool(let v) = stored.value else { return nil }
        return v
    }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .bool(self)) }
}

extension Float: _PersistableInsideOptional {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .float) }
    public static func _cofferDefaultValue() -> Float { 0 }
    public static func _cofferDecode(_ stored: _StoredValue) -> Float? {
        guard case .float(let v) = stored.value else { return nil }
        return v
    }
    /// Doubles are rounded to the nearest float; integers must be exact.
    public static func _cofferCast(_ value: Any) -> Float? {
        if let v = value as? Float { return v }
        if let v = value as? Double { return Float(v) }
        if let v = value as? any BinaryInteger { return Float(exactly: v) }
        return nil
    }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .float(self)) }
}

extension Double: _PersistableInsideOptional {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .double) }
    public static func _cofferDefaultValue() -> Double { 0 }
    public static func _cofferDecode(_ stored: _StoredValue) -> Double? {
        guard case .double(let v) = stored.value else { return nil }
        return v
    }
    public static func _cofferCast(_ value: Any) -> Double? {
        if let v = value as? Double { return v }
        if let v = value as? Float { return Double(v) }
        if let v = value as? any BinaryInteger { return Double(exactly: v) }
        return nil
    }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .double(self)) }
}

extension String: _PersistableInsideOptional, _PrimaryKey, _Indexable {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .string) }
    public static func _cofferDefaultValue() -> String { "" }
    public static func _cofferDecode(_ stored: _StoredValue) -> String? {
        guard case .string(let v) = stored.value else { return nil }
        return v
    }
    public static func _cofferCast(_ value: Any) -> String? {
        if let v = value as? String { return v }
        if let v = value as? Substring { return String(v) }
        return nil
    }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .string(self)) }
}

extension Data: _PersistableInsideOptional {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .data) }
    public static func _cofferDefaultValue() -> Data { Data() }
    public static func _cofferDecode(_ stored: _StoredValue) -> Data? {
        guard case .data(let v) = stored.value else { return nil }
        return v
    }
    public static func _cofferCast(_ value: Any) -> Data? {
        if let v = value as? Data { return v }
        if let v = value as? [UInt8] { return Data(v) }
        return nil
    }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .data(self)) }
}

extension Date: _PersistableInsideOptional, _Indexable {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .date) }
    /// The current time, as in Realm.
    public static func _cofferDefaultValue() -> Date { Date() }
    public static func _cofferDecode(_ stored: _StoredValue) -> Date? {
        guard case .date(let v) = stored.value else { return nil }
        return v
    }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .date(self)) }
}

extension ObjectId: _PersistableInsideOptional, _PrimaryKey, _Indexable {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .objectId) }
    /// A newly generated id, as in Realm, so that an `ObjectId` primary key needs no initial value.
    public static func _cofferDefaultValue() -> ObjectId { .generate() }
    public static func _cofferDecode(_ stored: _StoredValue) -> ObjectId? {
        guard case .objectId(let v) = stored.value else { return nil }
        return v
    }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .objectId(self)) }
}

extension UUID: _PersistableInsideOptional, _PrimaryKey, _Indexable {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .uuid) }
    /// A new random UUID, as in Realm.
    public static func _cofferDefaultValue() -> UUID { UUID() }
    public static func _cofferDecode(_ stored: _StoredValue) -> UUID? {
        guard case .uuid(let v) = stored.value else { return nil }
        return v
    }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .uuid(self)) }
}

extension Decimal128: _PersistableInsideOptional {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .decimal128) }
    public static func _cofferDefaultValue() -> Decimal128 { Decimal128() }
    public static func _cofferDecode(_ stored: _StoredValue) -> Decimal128? {
        guard case .decimal128(let v) = stored.value else { return nil }
        return v
    }
    /// Integers and doubles convert; strings are parsed.
    public static func _cofferCast(_ value: Any) -> Decimal128? {
        if let v = value as? Decimal128 { return v }
        if let v = value as? Int { return Decimal128(v) }
        if let v = value as? Double { return Decimal128(v) }
        if let v = value as? String { return try? Decimal128(string: v) }
        return nil
    }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .decimal128(self)) }
}
