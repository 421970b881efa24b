/// Objects are stored as links: `@Persisted var owner: Person?` or the elements
/// of a `List<Person>`. A link property must be optional, as in Realm.
extension Object: _PersistableInsideOptional {
    public static var _cofferKind: _ValueKind {
        _ValueKind(kind: .link, objectType: self)
    }

    /// Only reached for a required link, which schema discovery rejects.
    public static func _cofferDefaultValue() -> Self {
        Self()
    }

    public static func _cofferDecode(_ stored: _StoredValue) -> Self? {
        guard case .object(let object) = stored.value else { return nil }
        return object as? Self
    }

    public var _cofferEncoded: _StoredValue {
        _StoredValue(value: .object(self))
    }
}
