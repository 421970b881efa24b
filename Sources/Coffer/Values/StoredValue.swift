// StoredValue and ValueKind: a property value on its way to or from the C core,
// its kinds, and comparing and describing it.

import Foundation

/// The kinds of value a property can hold: one per scalar type of the C core,
/// links to objects, mixed values (``AnyValue``) and backlinks.
enum ValueKind: Sendable, Equatable {
    case bool, int, float, double, string, data, date, objectId, uuid, decimal128
    case link, mixed, linkingObjects
}

/// Whether a property holds one value or a collection of them.
enum CollectionKind: Sendable, Equatable {
    case none, list, set, map
}

/// A property value on its way to or from the C core, owning its bytes.
///
/// `object` is a link as Swift holds it (a managed or unmanaged ``Object``);
/// before reaching the C core it becomes `link` (an existing object) or
/// `fields` (a new embedded object). Collections hold their elements.
enum StoredValue {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case objectId(ObjectId)
    case uuid(UUID)
    case decimal128(Decimal128)
    case object(Object)
    case link(classId: UInt32, key: UInt64)
    case fields(classId: UInt32, [(property: UInt32, value: StoredValue)])
    case list([StoredValue])
    case set([StoredValue])
    case map([(key: String, value: StoredValue)])

    /// How the value reads in an error message.
    var summary: String {
        switch self {
        case .null: "nil"
        case .bool(let v): "\(v)"
        case .int(let v): "\(v)"
        case .float(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .data(let v): "\(v.count) bytes"
        case .date(let v): "\(v)"
        case .objectId(let v): "\(v)"
        case .uuid(let v): "\(v)"
        case .decimal128(let v): "\(v)"
        case .object(let v): "a \(type(of: v).className()) object"
        case .link(_, let key): "a link to object \(key)"
        case .fields: "a new embedded object"
        case .list(let v): "a list of \(v.count) values"
        case .set(let v): "a set of \(v.count) values"
        case .map(let v): "a map of \(v.count) entries"
        }
    }

    /// Equality as collections compare elements: scalars by value, objects by identity
    /// (the same Swift object, or the same stored object); maps by key, whatever
    /// their order (an encrypted file keeps its own).
    func isSame(as other: StoredValue) -> Bool {
        switch (self, other) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.float(let a), .float(let b)): a == b || (a.isNaN && b.isNaN)
        case (.double(let a), .double(let b)): a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        case (.date(let a), .date(let b)): a == b
        case (.objectId(let a), .objectId(let b)): a == b
        case (.uuid(let a), .uuid(let b)): a == b
        case (.decimal128(let a), .decimal128(let b)): a == b
        case (.object(let a), .object(let b)): a.isSameObject(as: b)
        case (.link(let c1, let k1), .link(let c2, let k2)): c1 == c2 && k1 == k2
        case (.list(let a), .list(let b)), (.set(let a), .set(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.isSame(as: $1) }
        case (.map(let a), .map(let b)):
            a.count == b.count && Self.sameEntries(a, b)
        default: false
        }
    }

    /// Whether every entry of `a` is in `b` with the same value (of as many entries).
    private static func sameEntries(_ a: [(key: String, value: StoredValue)],
                                    _ b: [(key: String, value: StoredValue)]) -> Bool {
        if zip(a, b).allSatisfy({ $0.key == $1.key && $0.value.isSame(as: $1.value) }) { return true }
        let other = Dictionary(b.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        return a.allSatisfy { entry in other[entry.key].map { entry.value.isSame(as: $0) } ?? false }
    }
}

/// The value a ``_Persistable`` type stores. Only Coffer creates and reads it.
public struct _StoredValue {
    let value: StoredValue
}

/// The kind of property a ``_Persistable`` type maps to. Only Coffer creates and reads it.
public struct _ValueKind: @unchecked Sendable {
    let kind: ValueKind
    var collection: CollectionKind = .none
    /// The linked class of a link (metatypes are immutable).
    var objectType: Object.Type? = nil
}

/// `nil` if `value` is nil or `NSNull`, else `value` with any `Optional` layers removed.
func unwrapAny(_ value: Any) -> Any? {
    if value is NSNull {
        return nil
    }
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .optional else {
        return value
    }
    guard let wrapped = mirror.children.first else {
        return nil
    }
    return unwrapAny(wrapped.value)
}
