/// Declares a property of an ``Object`` that Coffer stores.
///
/// ```swift
/// final class Dog: Object {
///     @Persisted(primaryKey: true) var id: ObjectId
///     @Persisted(indexed: true) var name = ""
///     @Persisted var breed: String?
///     @Persisted var age = 0
///     var nickname = ""          // not stored: no @Persisted
/// }
/// ```
///
/// A property without an initial value starts as its type's default: false, 0, "",
/// empty data, the current date, a newly generated ``ObjectId``, a random `UUID`,
/// zero, the first case of a ``PersistableEnum``, or nil for an optional.
///
/// Before an object is added to a ``Database`` its properties are plain Swift
/// storage. Once it is managed, every read and write goes to the database: reads
/// see the database's current snapshot, and writes need a write transaction.
/// `@Persisted` can only be used in subclasses of ``Object``.
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    let box: PersistedBox<Value>
    let isPrimaryKey: Bool
    let isIndexed: Bool

    /// A property that starts as its type's default value.
    public init() {
        box = PersistedBox(nil)
        isPrimaryKey = false
        isIndexed = false
    }

    /// A property that starts as `wrappedValue`.
    public init(wrappedValue: Value) {
        box = PersistedBox(wrappedValue)
        isPrimaryKey = false
        isIndexed = false
    }

    /// The class's primary key when `primaryKey` is true: unique, indexed, and
    /// fixed once the object is added.
    public init(primaryKey: Bool) where Value: _PrimaryKey {
        box = PersistedBox(nil)
        isPrimaryKey = primaryKey
        isIndexed = false
    }

    /// The class's primary key when `primaryKey` is true, starting as `wrappedValue`.
    public init(wrappedValue: Value, primaryKey: Bool) where Value: _PrimaryKey {
        box = PersistedBox(wrappedValue)
        isPrimaryKey = primaryKey
        isIndexed = false
    }

    /// A property with an index when `indexed` is true, which makes equality
    /// lookups fast and writes a little slower.
    public init(indexed: Bool) where Value: _Indexable {
        box = PersistedBox(nil)
        isPrimaryKey = false
        isIndexed = indexed
    }

    /// A property with an index when `indexed` is true, starting as `wrappedValue`.
    public init(wrappedValue: Value, indexed: Bool) where Value: _Indexable {
        box = PersistedBox(wrappedValue)
        isPrimaryKey = false
        isIndexed = indexed
    }

    /// The objects that link to this one through `originProperty` of `Element`:
    ///
    /// ```swift
    /// @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
    /// ```
    public init<Origin: Object>(originProperty: String) where Value == LinkingObjects<Origin> {
        box = PersistedBox(LinkingObjects(fromType: Origin.self, property: originProperty))
        isPrimaryKey = false
        isIndexed = false
    }

    /// Unavailable: `@Persisted` works only inside an ``Object`` subclass.
    @available(*, unavailable, message: "@Persisted can only be used in a subclass of Object")
    public var wrappedValue: Value {
        get { fatalError("@Persisted can only be used in a subclass of Object") }
        set { fatalError("@Persisted can only be used in a subclass of Object") }
    }

    /// Reads and writes the property through its object: plain storage while the
    /// object is unmanaged, the database once it is managed.
    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            let box = object[keyPath: storageKeyPath].box
            if let recorder = object.keyPathRecorder {
                return recorder.record(box, in: object, wrapped: wrappedKeyPath, storage: storageKeyPath)
            }
            guard let managed = object.managedState else {
                return box.unmanagedValue
            }
            let index = box.schemaIndex(in: object, storage: storageKeyPath)
            if let view = Value._cofferManagedView(_ManagedProperty(owner: managed, index: index)) {
                return view
            }
            return managed.read(Value.self, at: index)
        }
        set {
            let box = object[keyPath: storageKeyPath].box
            guard let managed = object.managedState else {
                box.value = newValue
                return
            }
            managed.write(newValue, at: box.schemaIndex(in: object, storage: storageKeyPath))
        }
    }
}

/// The storage of one property of one object. A class, so that the copies Mirror
/// hands out during schema discovery and `Object(value:)` share it.
final class PersistedBox<Value: _Persistable> {
    /// nil until read or written, when a property without initial value gets its default.
    var value: Value?
    /// The property's position in its class's ``ObjectSchema``, once looked up.
    var index = -1

    init(_ value: Value?) {
        self.value = value
    }

    /// The value, fixing the default on first read so that it stays the same
    /// (a generated ObjectId must not change between reads).
    var unmanagedValue: Value {
        if let value {
            return value
        }
        let initial = Value._cofferDefaultValue()
        value = initial
        return initial
    }

    func schemaIndex<O: Object>(in object: O, storage: AnyKeyPath) -> Int {
        if index < 0 {
            index = ObjectSchema.forObject(object).index(of: self, in: object, storage: storage)
        }
        return index
    }
}

/// What schema discovery and value copying need from a `Persisted` found by Mirror.
protocol PersistedProperty {
    var isPrimaryKey: Bool { get }
    var isIndexed: Bool { get }
    var boxIdentity: ObjectIdentifier { get }
    var valueType: any _Persistable.Type { get }
    /// The origin class and property of linking objects; nil for other properties.
    var linkOrigin: (type: Object.Type, property: String)? { get }
    /// The unmanaged value.
    var storedValue: StoredValue { get }
    /// Sets the unmanaged value; false if `stored` does not fit the type.
    func setStoredValue(_ stored: StoredValue) -> Bool
}

extension Persisted: PersistedProperty {
    var boxIdentity: ObjectIdentifier { ObjectIdentifier(box) }
    var valueType: any _Persistable.Type { Value.self }
    var linkOrigin: (type: Object.Type, property: String)? {
        (box.unmanagedValue as? any LinkOriginDescribing)?.linkOrigin
    }
    var storedValue: StoredValue { box.unmanagedValue._cofferEncoded.value }
    func setStoredValue(_ stored: StoredValue) -> Bool {
        guard let value = Value._cofferDecode(_StoredValue(value: stored)) else { return false }
        box.value = value
        return true
    }
}
