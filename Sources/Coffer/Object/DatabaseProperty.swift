// DatabaseProperty: a stored property declared without @Persisted, read and
// written through `.value`, as Realm's RealmProperty<T?> in models written
// before @Persisted; and OwnerAttached, how such properties learn their object.

/// A stored property declared as a constant, its value read and written through
/// ``value``, as Realm's `RealmProperty`:
///
/// ```swift
/// final class Dog: Object {
///     @Persisted var name = ""
///     let age = DatabaseProperty<Int?>()
/// }
/// dog.age.value = 3
/// ```
///
/// It is stored under its Swift name like a `@Persisted` property and is found
/// by queries by that name (`filter("age > 2")`). While its object is unmanaged
/// the value lives in memory; once the object is managed, ``value`` reads and
/// writes the database (writes need a write transaction, as for `@Persisted`).
/// Prefer `@Persisted var age: Int?` in new code.
public final class DatabaseProperty<Value: _Persistable> {
    private var unmanagedValue: Value
    /// The managed object this property belongs to; weak, as the object owns it.
    private weak var owner: Object?
    private var index = -1

    /// A property holding the type's initial value (nil for an optional).
    public init() {
        unmanagedValue = Value._cofferDefaultValue()
    }

    /// The value: in memory while the object is unmanaged, else in the database.
    public var value: Value {
        get {
            if let managed = owner?.managedState {
                return managed.read(Value.self, at: index)
            }
            return unmanagedValue
        }
        set {
            if let managed = owner?.managedState {
                managed.write(newValue, at: index)
            } else {
                unmanagedValue = newValue
            }
        }
    }
}

/// A property declared without `@Persisted` that reads through its object once
/// the object is managed: told the object and its schema position then.
protocol OwnerAttached {
    func attach(to object: Object, at index: Int)
}

extension DatabaseProperty: OwnerAttached {
    func attach(to object: Object, at index: Int) {
        owner = object
        self.index = index
    }
}

/// Found by Mirror as a stored property of its class, without a box.
extension DatabaseProperty: PersistedProperty {
    var isPrimaryKey: Bool { false }
    var isIndexed: Bool { false }
    var boxIdentity: ObjectIdentifier { ObjectIdentifier(self) }
    var valueType: any _Persistable.Type { Value.self }
    var linkOrigin: (type: Object.Type, property: String)? { nil }
    var storedValue: StoredValue { unmanagedValue._cofferEncoded.value }

    func setStoredValue(_ stored: StoredValue) -> Bool {
        guard let decoded = Value._cofferDecode(_StoredValue(value: stored)) else { return false }
        unmanagedValue = decoded
        return true
    }

    static var boxOffset: Int? { nil }
}
