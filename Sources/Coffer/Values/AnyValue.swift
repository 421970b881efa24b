// AnyValue: the mixed value type, any scalar, a link or nested lists and
// dictionaries.

import Foundation

/// A value of any stored type, as Realm's `AnyRealmValue` (its cases in the
/// same order): `@Persisted var value: AnyValue`.
///
/// `.list` and `.dictionary` hold collections of further `AnyValue`s, nested up
/// to 100 levels (`COFFER_MAX_NESTING`; deeper values are refused with an
/// error naming the limit). As in Realm they hold a ``List`` and a ``Map``:
/// unmanaged ones for values made in memory (``fromArray(_:)``,
/// ``fromDictionary(_:)``, or `.list([...])` and `.dictionary([...])` with
/// literals), and live, managed ones when read from a managed object's mixed
/// property, from a list of mixed values at a position or from a map of mixed
/// values under a key. A live nested collection reads the latest state of the
/// database, is changed in place inside a write transaction
/// (`obj.value.listValue?.append(.int(1))`; outside one the program stops, as
/// for any managed collection), and is frozen when read from a frozen object.
/// It stands for its place (the property, then each position or key down to
/// it): assigning the property another list makes it read the new one.
/// Assigning an `AnyValue` holding a collection, managed or not, writes a copy
/// of its contents. `.object` links to an ``Object`` (not an
/// ``EmbeddedObject``).
public enum AnyValue {
    case none
    case int(Int)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case object(Object)
    case objectId(ObjectId)
    case decimal128(Decimal128)
    case uuid(UUID)
    /// A nested list: unmanaged when made in memory, live when read from a
    /// managed object.
    case list(List<AnyValue>)
    /// A nested dictionary: unmanaged when made in memory, live when read from
    /// a managed object.
    case dictionary(Map<String, AnyValue>)

    var storedValue: StoredValue {
        switch self {
        case .none: .null
        case .int(let v): .int(Int64(v))
        case .bool(let v): .bool(v)
        case .float(let v): .float(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .data(let v): .data(v)
        case .date(let v): .date(v)
        case .object(let v): .object(v)
        case .objectId(let v): .objectId(v)
        case .decimal128(let v): .decimal128(v)
        case .uuid(let v): .uuid(v)
        case .list(let v): .list(v.storedElements)
        case .dictionary(let v): .map(v.storedEntries)
        }
    }

    init?(_ stored: StoredValue) {
        switch stored {
        case .null: self = .none
        case .bool(let v): self = .bool(v)
        case .int(let v):
            guard let int = Int(exactly: v) else { return nil }
            self = .int(int)
        case .float(let v): self = .float(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .data(let v): self = .data(v)
        case .date(let v): self = .date(v)
        case .objectId(let v): self = .objectId(v)
        case .uuid(let v): self = .uuid(v)
        case .decimal128(let v): self = .decimal128(v)
        case .object(let v): self = .object(v)
        case .list(let values), .set(let values):
            var items: [AnyValue] = []
            for value in values {
                guard let item = AnyValue(value) else { return nil }
                items.append(item)
            }
            self = .list(List(items))
        case .map(let entries):
            var items: [String: AnyValue] = [:]
            for entry in entries {
                guard let item = AnyValue(entry.value) else { return nil }
                items[entry.key] = item
            }
            self = .dictionary(Map(items))
        case .link, .fields:
            return nil
        }
    }
}

extension AnyValue: Equatable {
    /// Values of the same case and contents; objects are equal when they are the
    /// same stored object. Nested lists and dictionaries compare their contents,
    /// element by element, whether unmanaged or live: two live ones are equal
    /// while they hold equal values, wherever they are stored, and a live one
    /// equals an unmanaged one with the same contents.
    public static func == (lhs: AnyValue, rhs: AnyValue) -> Bool {
        lhs.storedValue.isSame(as: rhs.storedValue)
    }
}

extension AnyValue: _PersistableInsideOptional {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .mixed) }
    /// A mixed property may always hold `.none`.
    public static var _cofferIsOptional: Bool { true }
    public static func _cofferDefaultValue() -> AnyValue { .none }
    public static func _cofferDecode(_ stored: _StoredValue) -> AnyValue? {
        AnyValue(stored.value)
    }

    /// A nested list or map as a live view of `place`; other values as read.
    public static func _cofferDecode(_ stored: _StoredValue, nestedAt place: _NestedPlace) -> AnyValue? {
        switch stored.value {
        case .list: .list(List(place.location))
        case .map: .dictionary(Map(place.location))
        default: AnyValue(stored.value)
        }
    }

    /// An `AnyValue`, or a plain value of a type it has a case for.
    public static func _cofferCast(_ value: Any) -> AnyValue? {
        if let v = value as? AnyValue { return v }
        guard let unwrapped = unwrapAny(value) else { return AnyValue.none }
        switch unwrapped {
        case let v as Int: return .int(v)
        case let v as Bool: return .bool(v)
        case let v as Float: return .float(v)
        case let v as Double: return .double(v)
        case let v as String: return .string(v)
        case let v as Data: return .data(v)
        case let v as Date: return .date(v)
        case let v as ObjectId: return .objectId(v)
        case let v as Decimal128: return .decimal128(v)
        case let v as UUID: return .uuid(v)
        case let v as Object: return .object(v)
        case let v as [Any]:
            var items: [AnyValue] = []
            for item in v {
                guard let cast = _cofferCast(item) else { return nil }
                items.append(cast)
            }
            return .list(List(items))
        case let v as [String: Any]:
            var items: [String: AnyValue] = [:]
            for (key, item) in v {
                guard let cast = _cofferCast(item) else { return nil }
                items[key] = cast
            }
            return .dictionary(Map(items))
        default: return nil
        }
    }

    public var _cofferEncoded: _StoredValue { _StoredValue(value: storedValue) }
}
