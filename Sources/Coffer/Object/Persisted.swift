// @Persisted: the property wrapper that declares a stored property, and the box
// that holds its value or reaches the database.

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
    // The initializers and the subscript are inlinable so that a model class
    // creates its boxes with their concrete type and reaches them without a
    // key path walk; everything else happens in ``PersistedBox``.
    @usableFromInline let typedBox: PersistedBox<Value>
    @usableFromInline let isPrimaryKey: Bool
    @usableFromInline let isIndexed: Bool

    /// Every public initializer lands here.
    @inlinable
    init(box: PersistedBox<Value>, isPrimaryKey: Bool, isIndexed: Bool) {
        typedBox = box
        self.isPrimaryKey = isPrimaryKey
        self.isIndexed = isIndexed
    }

    // The initializers without `wrappedValue` start the property as its
    // type's default value, through the matching one with `wrappedValue`.

    /// A property that starts as its type's default value.
    @inlinable
    public init() {
        self.init(wrappedValue: Value._cofferDefaultValue())
    }

    /// The class's primary key when `primaryKey` is true: unique, indexed, and
    /// fixed once the object is added.
    @inlinable
    public init(primaryKey: Bool) where Value: _PrimaryKey {
        self.init(wrappedValue: Value._cofferDefaultValue(), primaryKey: primaryKey)
    }

    /// A property with an index when `indexed` is true, which makes equality
    /// lookups fast and writes a little slower.
    @inlinable
    public init(indexed: Bool) where Value: _Indexable {
        self.init(wrappedValue: Value._cofferDefaultValue(), indexed: indexed)
    }

    /// A property that starts as `wrappedValue`.
    @inlinable
    public init(wrappedValue: Value) {
        self.init(box: PersistedBox(wrappedValue), isPrimaryKey: false, isIndexed: false)
    }

    /// The class's primary key when `primaryKey` is true, starting as `wrappedValue`.
    @inlinable
    public init(wrappedValue: Value, primaryKey: Bool) where Value: _PrimaryKey {
        self.init(box: PersistedBox(wrappedValue), isPrimaryKey: primaryKey, isIndexed: false)
    }

    /// A property with an index when `indexed` is true, starting as `wrappedValue`.
    @inlinable
    public init(wrappedValue: Value, indexed: Bool) where Value: _Indexable {
        self.init(box: PersistedBox(wrappedValue), isPrimaryKey: false, isIndexed: indexed)
    }

    /// The objects that link to this one through `originProperty` of `Element`:
    ///
    /// ```swift
    /// @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
    /// ```
    @inlinable
    public init<Origin: Object>(originProperty: String) where Value == LinkingObjects<Origin> {
        self.init(box: PersistedBox(LinkingObjects(fromType: Origin.self, property: originProperty)), isPrimaryKey: false, isIndexed: false)
    }

    /// Unavailable: `@Persisted` works only inside an ``Object`` subclass.
    @available(*, unavailable, message: "@Persisted can only be used in a subclass of Object")
    public var wrappedValue: Value {
        get { fatalError("@Persisted can only be used in a subclass of Object") }
        set { fatalError("@Persisted can only be used in a subclass of Object") }
    }

    /// Reads and writes the property through its object: plain storage while the
    /// object is unmanaged, the database once it is managed.
    @inlinable
    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            object[keyPath: storageKeyPath].typedBox.read(in: object, wrapped: wrappedKeyPath, storage: storageKeyPath)
        }
        set {
            object[keyPath: storageKeyPath].typedBox.write(newValue, in: object, storage: storageKeyPath)
        }
    }
}

/// The storage of one property of one object, without its value type: what code
/// that walks every property of an object (adding it, copying it) works with.
@usableFromInline
class AnyPersistedBox {
    /// The property's position in its class's ``ModelSchema``; -1 until known.
    final var index = -1

    @usableFromInline
    init() {}

    /// The unmanaged value.
    var storedValue: StoredValue {
        fatalError("Coffer: AnyPersistedBox is abstract")
    }

    /// Sets the unmanaged value; false if `stored` does not fit the type.
    func setStoredValue(_ stored: StoredValue) -> Bool {
        fatalError("Coffer: AnyPersistedBox is abstract")
    }
}

/// The storage of one property of one object. A class, so that the copies Mirror
/// hands out during schema discovery and `Object(value:)` share it.
///
/// A property without initial value gets its default when the object is made,
/// so that it stays the same (a generated ObjectId must not change between
/// reads). The value is not optional: destroying a generic `Value?` asks the
/// runtime for the `Optional<Value>` type each time, which cost more than the
/// rest of an object's teardown.
@usableFromInline
final class PersistedBox<Value: _Persistable>: AnyPersistedBox {
    /// The unmanaged value; unused once the object is managed.
    var value: Value

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }

    override var storedValue: StoredValue {
        value._cofferEncoded.value
    }

    override func setStoredValue(_ stored: StoredValue) -> Bool {
        guard let decoded = Value._cofferDecode(_StoredValue(value: stored)) else { return false }
        value = decoded
        return true
    }

    /// The getter of the property of `object` that this box stores.
    @usableFromInline
    func read(in object: Object, wrapped: AnyKeyPath, storage: AnyKeyPath) -> Value {
        if let recorder = object.keyPathRecorder {
            return recorder.record(self, in: object, wrapped: wrapped, storage: storage)
        }
        guard let managed = object.managedState else {
            return value
        }
        return Value._cofferManagedValue(_ManagedProperty(owner: managed, index: schemaIndex(in: object, storage: storage)))
    }

    /// The setter of the property of `object` that this box stores.
    @usableFromInline
    func write(_ newValue: Value, in object: Object, storage: AnyKeyPath) {
        guard let managed = object.managedState else {
            value = newValue
            return
        }
        managed.write(newValue, at: schemaIndex(in: object, storage: storage))
    }

    /// The position of the property in the schema of `object`'s class: set when
    /// the object became managed, else looked up once per key path.
    func schemaIndex(in object: Object, storage: AnyKeyPath) -> Int {
        if index < 0 {
            index = ModelSchema.forObject(object).index(of: self, in: object, storage: storage)
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
    /// Where an ``AnyPersistedBox`` reference lies inside a value of this type,
    /// for ``ObjectLayout``; nil for properties without a box.
    static var boxOffset: Int? { get }
}

extension Persisted: PersistedProperty {
    var boxIdentity: ObjectIdentifier { ObjectIdentifier(typedBox) }
    var valueType: any _Persistable.Type { Value.self }
    var linkOrigin: (type: Object.Type, property: String)? {
        (typedBox.value as? any LinkOriginDescribing)?.linkOrigin
    }
    var storedValue: StoredValue { typedBox.storedValue }
    func setStoredValue(_ stored: StoredValue) -> Bool { typedBox.setStoredValue(stored) }
    static var boxOffset: Int? { MemoryLayout<Self>.offset(of: \Self.typedBox) }
}
