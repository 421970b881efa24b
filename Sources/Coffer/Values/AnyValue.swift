// AnyValue: the mixed value type, any scalar, a link or nested lists and
// dictionaries.

import Foundation

/// A value of any stored type, as Realm's `AnyRealmValue` (its cases in the
/// same order): `@Persisted var value: AnyValue`.
///
/// `.list` and `.dictionary` hold nested collections of further `AnyValue`s, up
/// to 100 levels. They are values: reading the property reads the whole nested
/// collection, and assigning writes it whole. `.object` links to an ``Object``
/// (not an ``EmbeddedObject``).
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
    case list([AnyValue])
    case dictionary([String: AnyValue])

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
        case .list(let v): .list(v.map(\.storedValue))
        case .dictionary(let v): .map(v.keys.sorted().map { ($0, v[$0]!.storedValue) })
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
            self = .list(items)
        case .map(let entries):
            var items: [String: AnyValue] = [:]
            for entry in entries {
                guard let item = AnyValue(entry.value) else { return nil }
                items[entry.key] = item
            }
            self = .dictionary(items)
        case .link, .fields:
            return nil
        }
    }
}

extension AnyValue: Equatable {
    /// Values of the same case and contents; objects are equal when they are the
    /// same stored object.
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
            return .list(items)
        case let v as [String: Any]:
            var items: [String: AnyValue] = [:]
            for (key, item) in v {
                guard let cast = _cofferCast(item) else { return nil }
                items[key] = cast
            }
            return .dictionary(items)
        default: return nil
        }
    }

    public var _cofferEncoded: _StoredValue { _StoredValue(value: storedValue) }
}
