// Object: the base class of stored models, unmanaged or managed, its identity,
// invalidation and value initializer.

internal import CCoffer

/// The base class of stored models.
///
/// Subclass it and mark the stored properties with ``Persisted``:
///
/// ```swift
/// final class Dog: Object {
///     @Persisted(primaryKey: true) var id: ObjectId
///     @Persisted(indexed: true) var name = ""
///     @Persisted var breed: String?
/// }
///
/// let rex = Dog(value: ["name": "Rex", "breed": "Beagle"])
/// try db.write { db.add(rex) }
/// ```
///
/// An object starts unmanaged, a plain Swift object. ``Database/add(_:update:)``
/// makes it managed and live: its properties then read and write the database,
/// and it can be used only on the thread of its ``database``. Properties without
/// `@Persisted` are ignored. Objects are reference types that are not `Sendable`.
///
/// The class name in the database is the Swift class name without its module.
open class Object {
    /// The database and key of a managed object; nil while unmanaged.
    var managedState: ManagedState? {
        didSet {
            guard let managedState else { return }
            managedState.binding.schema.assignIndexes(to: self)
            if managedState.binding.schema.hasAttachedProperties {
                for (index, child) in ModelSchema.persistedChildren(of: self).enumerated() {
                    (child.property as? any OwnerAttached)?.attach(to: self, at: index)
                }
            }
        }
    }

    /// Set on the throwaway objects that find the properties a key path reads;
    /// their getters then report to it instead of reading.
    var keyPathRecorder: KeyPathRecorder?

    /// An unmanaged object whose properties have their initial values.
    public required init() {}

    /// An unmanaged object whose properties are taken from `value`:
    ///
    /// - a dictionary `[String: Any]` from property names to values; properties not
    ///   named keep their initial values;
    /// - an array with one value for every property, in declaration order;
    /// - another ``Object`` with properties of the same names.
    ///
    /// Integers convert between integer types when the value fits; an enum property
    /// accepts its raw value; nil or `NSNull` sets an optional property to nil.
    ///
    /// A value that does not fit (an unknown property name, a value of the wrong
    /// type, nil for a required property, an array of the wrong length) stops the
    /// program with a message naming the class and property, as Realm does. Use
    /// ``Database/tryCreate(_:value:update:)`` to get a thrown ``CofferError`` instead.
    public convenience init(value: Any) {
        self.init()
        do {
            let schema = try ModelSchema.of(type(of: self))
            let values = try FieldValues.parse(value, for: schema)
            _ = schema.setUnmanagedValues(values, of: self)
        } catch {
            fatalError("Coffer: \(error)")
        }
    }

    /// The database managing this object, or nil while it is unmanaged.
    public var database: Database? {
        managedState?.database
    }

    /// True once the object was deleted, or when the write transaction that added
    /// it was cancelled. An invalidated object cannot be read or written. Always
    /// false for an unmanaged object.
    public var isInvalidated: Bool {
        guard let managed = managedState else {
            return false
        }
        return managed.isGone
    }

    /// True if both are managed, by the same database, and are the same stored object.
    public func isSameObject(as other: Object?) -> Bool {
        guard let other else { return false }
        if other === self { return true }
        guard let mine = managedState, let theirs = other.managedState else { return false }
        return mine.database === theirs.database && mine.binding === theirs.binding && mine.key == theirs.key
    }

    /// Override to store properties under other names: Swift name → stored name.
    ///
    /// ```swift
    /// final class Person: Object {
    ///     @Persisted var firstName = ""
    ///     override class func propertiesMapping() -> [String: String] {
    ///         ["firstName": "first_name"]
    ///     }
    /// }
    /// ```
    ///
    /// Code uses the Swift names; the file holds the stored ones, so other programs
    /// reading it (from C or Python) see `first_name`.
    open class func propertiesMapping() -> [String: String] {
        [:]
    }

    /// The class's name in the database: the Swift class name without its module.
    public class func className() -> String {
        String(describing: self)
    }
}

/// What makes an ``Object`` managed: its database, its class there and its key.
///
/// It keeps the C handle of its object for the transaction it was opened in, so
/// that reading ten properties opens (and, in an encrypted file, decrypts) the
/// object once, not ten times. The C core reloads a handle's record after any
/// write in its transaction, so the handle always reads current values; a
/// handle of an ended transaction is never used again (the transaction freed it).
final class ManagedState {
    let database: Database
    let binding: ClassBinding
    let key: UInt64
    /// The write transaction that added the object, for objects added through
    /// this state.
    var addedIn: WriteOutcome?
    /// True when the write transaction that added the object was cancelled: its
    /// key may then be given to another object, so it must not be used again.
    var addWasCancelled: Bool { addedIn?.cancelled ?? false }
    /// True once the object was deleted or its add cancelled: it cannot be used.
    var isGone: Bool { addWasCancelled || !exists }
    private var handle: OpaquePointer?
    /// ``Database/transactionSerial`` when `handle` was opened.
    private var handleSerial: UInt64 = 0
    /// The page of a ``Results`` iteration holding the object's values, and its
    /// row there; used while the database is as the page was read.
    var page: PackedPage?
    var pageRow = 0

    init(database: Database, binding: ClassBinding, key: UInt64, handle: OpaquePointer? = nil) {
        self.database = database
        self.binding = binding
        self.key = key
        if let handle {
            self.handle = handle
            handleSerial = database.transactionSerial
        }
    }

    deinit {
        let access = database.frozenAccess(); defer { access?.unlock() }
        if database.pendingWrites.isWaiting(for: self) {
            writePendingBeforeGoing()
        }
        // Given back early so that long loops do not pile handles up in the
        // transaction; from another thread (which only unchecked code can
        // reach) it is left for the transaction to free.
        if let handle, handleSerial == database.transactionSerial, database.isOnOwnerThread {
            coffer_object_release(handle)
        }
    }

    /// Writes the assignments waiting for this object, which is going away.
    private func writePendingBeforeGoing() {
        let values = database.pendingWrites.takeValues()
        do throws(CofferError) {
            let txn = try database.currentTransaction(flushing: false)
            if let handle, handleSerial == database.transactionSerial {
                try database.writeFields(values, of: handle, binding: binding)
            } else {
                let opened = try database.objectHandle(txn, binding, key)
                defer { coffer_object_release(opened) }
                try database.writeFields(values, of: opened, binding: binding)
            }
        } catch {
            database.fail(error)
        }
    }

    /// The object's C handle in the current transaction, opened on first use;
    /// `flushing` as for ``Database/currentTransaction(flushing:)``.
    /// - Throws: `.notFound` saying the object was deleted.
    func objectHandle(flushing: Bool = true) throws(CofferError) -> OpaquePointer {
        let txn = try database.currentTransaction(flushing: flushing)
        if let handle, handleSerial == database.transactionSerial {
            return handle
        }
        let opened = try database.objectHandle(txn, binding, key)
        handle = opened
        handleSerial = database.transactionSerial
        return opened
    }

    var exists: Bool {
        let access = database.frozenAccess(); defer { access?.unlock() }
        do {
            return coffer_object_is_valid(try objectHandle()) != 0
        } catch let error where error.code == .notFound {
            return false
        } catch {
            database.fail(error)
        }
    }

    func read<Value: _Persistable>(_ type: Value.Type, at index: Int) -> Value {
        requireUsable()
        let stored = packedValue(at: index) ?? database.readValue(self, index, shallow: Value._cofferReadsNestedAsViews)
        let place = _NestedPlace(parent: CollectionLocation(owner: self, index: index), step: nil)
        guard let value = Value._cofferDecode(_StoredValue(value: stored), nestedAt: place) else {
            let property = binding.schema.properties[index]
            fatalError("Coffer: \(binding.schema.className).\(property.name) holds \(stored.summary), which is not a \(Value.self)")
        }
        return value
    }

    func write<Value: _Persistable>(_ value: Value, at index: Int) {
        requireUsable()
        database.writeValue(self, index, value._cofferEncoded.value)
    }

    /// Property `index` from the page the object was read in, if that is
    /// still current and the database may be used here (as the C core's path
    /// checks it); nil otherwise.
    private func packedValue(at index: Int) -> StoredValue? {
        guard let page else { return nil }
        guard page.isCurrent(in: database), (try? database.checkThread()) != nil else {
            self.page = nil  // the database moved on
            return nil
        }
        return page.storedValue(row: pageRow, index: index)
    }

    func requireUsable() {
        if addWasCancelled {
            fatalError("Coffer: this \(binding.schema.className) object was added in a write transaction that was cancelled; it is invalidated")
        }
    }
}

/// Whether a write transaction was cancelled, shared by the objects added in
/// it: one flag per transaction rather than a weak reference per object.
final class WriteOutcome {
    var cancelled = false
}
