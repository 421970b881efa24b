// AnyValue's helpers from Realm's AnyRealmValue: making nested collections
// from arrays and dictionaries, and reading each case's value.

import Foundation

extension AnyValue {
    /// A nested list of `array`'s values in an unmanaged ``List``, as Realm's
    /// `AnyRealmValue.fromArray`: `obj.value = .fromArray([.int(1), .string("a")])`.
    public static func fromArray(_ array: [AnyValue]) -> AnyValue {
        .list(List(array))
    }

    /// A nested dictionary of `dictionary`'s values in an unmanaged ``Map``, as
    /// Realm's `AnyRealmValue.fromDictionary`: `.fromDictionary(["key": .string("x")])`.
    public static func fromDictionary(_ dictionary: [String: AnyValue]) -> AnyValue {
        .dictionary(Map(dictionary))
    }

    /// The list of a `.list`, else nil. Read from a managed object it is live:
    /// `obj.value.listValue?.append(.int(1))` inside a write transaction
    /// changes the stored list.
    public var listValue: List<AnyValue>? {
        if case .list(let value) = self { return value }
        return nil
    }

    /// The map of a `.dictionary`, else nil. Read from a managed object it is
    /// live: `obj.value.dictionaryValue?["key"] = .string("x")` inside a write
    /// transaction changes the stored dictionary.
    public var dictionaryValue: Map<String, AnyValue>? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    /// The integer of an `.int`, else nil.
    public var intValue: Int? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The Boolean of a `.bool`, else nil.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number of a `.float`, else nil.
    public var floatValue: Float? {
        if case .float(let value) = self { return value }
        return nil
    }

    /// The number of a `.double`, else nil.
    public var doubleValue: Double? {
        if case .double(let value) = self { return value }
        return nil
    }

    /// The text of a `.string`, else nil.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The bytes of a `.data`, else nil.
    public var dataValue: Data? {
        if case .data(let value) = self { return value }
        return nil
    }

    /// The date of a `.date`, else nil.
    public var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }

    /// The id of an `.objectId`, else nil.
    public var objectIdValue: ObjectId? {
        if case .objectId(let value) = self { return value }
        return nil
    }

    /// The number of a `.decimal128`, else nil.
    public var decimal128Value: Decimal128? {
        if case .decimal128(let value) = self { return value }
        return nil
    }

    /// The UUID of a `.uuid`, else nil.
    public var uuidValue: UUID? {
        if case .uuid(let value) = self { return value }
        return nil
    }

    /// The object of an `.object` if it is a `T`, else nil: `value.object(Dog.self)`.
    public func object<T: Object>(_ type: T.Type) -> T? {
        if case .object(let value) = self { return value as? T }
        return nil
    }

    /// The object of an `.object`, whatever its class, else nil.
    public var dynamicObject: Object? {
        if case .object(let value) = self { return value }
        return nil
    }
}
