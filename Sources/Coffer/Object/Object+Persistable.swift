// Objects as stored values: links to objects and embedded objects as
// _Persistable types.

import Foundation

/// Objects are stored as links: `@Persisted var owner: Person?` or the elements
/// of a `List<Person>`. A link property must be optional, as in Realm.
extension Object: _PersistableInsideOptional {
    public static var _cofferKind: _ValueKind {
        _ValueKind(kind: .link, objectType: self)
    }

    /// Only reached for a required link, which schema discovery rejects with a
    /// schema error. A class reached again while its own default is being made
    /// (`@Persisted var next: Node`) would make objects without end: that stops
    /// with a message naming the rule instead of overflowing the stack.
    public static func _cofferDefaultValue() -> Self {
        let key = "Coffer.requiredLinkDefault.\(ObjectIdentifier(self))"
        let thread = Thread.current.threadDictionary
        if thread[key] != nil {
            fatalError("class '\(self)': a link to \(self) must be optional (\(self)?), as in Realm; a required link "
                       + "would create objects without end")
        }
        thread[key] = true
        defer { thread.removeObject(forKey: key) }
        return Self()
    }

    public static func _cofferDecode(_ stored: _StoredValue) -> Self? {
        guard case .object(let object) = stored.value else { return nil }
        return object as? Self
    }

    /// An object of this class, or a new unmanaged one from a dictionary or
    /// array of its property values (as `init(value:)` takes them).
    public static func _cofferCast(_ value: Any) -> Self? {
        if let object = value as? Self {
            return object
        }
        guard value is [String: Any] || value is [Any],
              let schema = try? ModelSchema.of(self),
              let values = try? FieldValues.parse(value, for: schema)
        else { return nil }
        let object = Self()
        return schema.setUnmanagedValues(values, of: object) ? object : nil
    }

    public var _cofferEncoded: _StoredValue {
        _StoredValue(value: .object(self))
    }
}
