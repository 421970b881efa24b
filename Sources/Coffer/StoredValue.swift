import Foundation

/// The kinds of value a property can hold, one per scalar type of the C core.
enum ValueKind: Sendable {
    case bool, int, float, double, string, data, date, objectId, uuid, decimal128
}

/// A property value on its way to or from the C core, owning its bytes.
enum StoredValue: Equatable {
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
        }
    }
}

/// The value a ``_Persistable`` type stores. Only Coffer creates and reads it.
public struct _StoredValue {
    let value: StoredValue
}

/// The kind of property a ``_Persistable`` type maps to. Only Coffer creates and reads it.
public struct _ValueKind: Sendable {
    let kind: ValueKind
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
