// The marker protocols that decide which Query operators a property type offers.

import Foundation

// The marker protocols that decide which operators a typed ``Query`` offers for
// a property type. Coffer provides every conformance; do not add your own.

/// A type whose properties can be compared with `==`, `!=` and `in(_:)` in a
/// ``Query``: every scalar type, ``AnyValue``, ``PersistableEnum``s, objects
/// (compared by identity) and their optionals.
public protocol _QueryEquatable: _Persistable {}

/// A type whose properties can be ordered with `<`, `<=`, `>`, `>=` in a
/// ``Query``: numbers, dates, strings, ``AnyValue`` and their optionals.
public protocol _QueryComparable: _QueryEquatable {}

/// A type that has a minimum and maximum in a ``Query`` or a ``Results``
/// aggregate, and can be tested against a range: numbers and dates.
public protocol _QueryMinMax: _QueryComparable {}

/// A number, which also has a sum and an average: integers, `Float`, `Double`
/// and ``Decimal128``.
public protocol _QueryNumeric: _QueryMinMax {}

/// A type that the string operators of a ``Query`` apply to: `String` and `Data`.
public protocol _QueryString: _QueryEquatable {}

/// An `Optional`, so that a ``Query`` can follow an optional link and take
/// ranges of optional numbers.
public protocol _QueryOptional {
    /// The wrapped type.
    associatedtype _QueryWrapped
}

/// A property that holds many values in a ``Query``: the collections
/// (``List``, ``MutableSet``, ``LinkingObjects``) and ``QueryValues``, the
/// values of a property over the objects of a collection.
public protocol _QueryMany {
    /// The type of each value.
    associatedtype _QueryElement
}

/// A collection property: ``List``, ``MutableSet`` and ``LinkingObjects``,
/// which have a `count` and `contains(_:)` in a ``Query``.
public protocol _QueryCollection: _QueryMany {}

/// The values of one property over the objects of a collection, as a ``Query``
/// sees them: `$0.dogs.age` is a `Query<QueryValues<Int>>`.
///
/// A comparison holds if any of the values satisfies it, as in Realm
/// (`$0.dogs.age > 10`: some dog is older than 10); `min`, `max`, `sum` and
/// `avg` aggregate them. It is a type for queries only and has no values.
public struct QueryValues<Element>: _QueryMany {
    /// The type of each value.
    public typealias _QueryElement = Element

    private init() {}
}

extension Optional: _QueryOptional {
    /// The wrapped type.
    public typealias _QueryWrapped = Wrapped
}

extension Optional: _QueryEquatable where Wrapped: _QueryEquatable & _PersistableInsideOptional {}
extension Optional: _QueryComparable where Wrapped: _QueryComparable & _PersistableInsideOptional {}
extension Optional: _QueryMinMax where Wrapped: _QueryMinMax & _PersistableInsideOptional {}
extension Optional: _QueryNumeric where Wrapped: _QueryNumeric & _PersistableInsideOptional {}
extension Optional: _QueryString where Wrapped: _QueryString & _PersistableInsideOptional {}

extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Decimal128: _QueryNumeric {}
extension Date: _QueryMinMax {}
extension String: _QueryComparable, _QueryString {}
extension Data: _QueryString {}
extension Bool: _QueryEquatable {}
extension ObjectId: _QueryEquatable {}
extension UUID: _QueryEquatable {}
extension AnyValue: _QueryComparable {}
extension Object: _QueryEquatable {}

extension List: _QueryCollection {
    /// The element type.
    public typealias _QueryElement = Element
}

extension MutableSet: _QueryCollection {
    /// The element type.
    public typealias _QueryElement = Element
}

extension LinkingObjects: _QueryCollection {
    /// The element type.
    public typealias _QueryElement = Element
}

/// A ``Map`` property, which has `keys`, `values`, `count` and a subscript in a ``Query``.
public protocol _QueryMap {
    /// The type of the map's values.
    associatedtype _QueryMapValue
}

extension Map: _QueryMap {
    /// The value type.
    public typealias _QueryMapValue = Value
}

/// Options of the string operators of a ``Query``, as in Realm.
public struct StringOptions: OptionSet, Sendable {
    /// The bits of the options.
    public let rawValue: Int8

    /// Options from their bits.
    public init(rawValue: Int8) {
        self.rawValue = rawValue
    }

    /// Letters match in either case (`[c]` in the query language): "Rex" matches "rex".
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// Letters match with or without accents (`[d]`): "Zoë" matches "Zoe".
    public static let diacriticInsensitive = StringOptions(rawValue: 2)

    /// `[c]`, `[d]`, `[cd]` or nothing.
    var modifier: String {
        var letters = ""
        if contains(.caseInsensitive) { letters += "c" }
        if contains(.diacriticInsensitive) { letters += "d" }
        return letters.isEmpty ? "" : "[\(letters)]"
    }
}
