// Migration: the running schema upgrade given to a migration block, enumerating,
// creating, deleting and renaming.

internal import CCoffer

/// The block that upgrades a file's objects when ``Database/Configuration/schemaVersion``
/// is higher than the file's: it gets the running ``Migration`` and the file's old
/// schema version.
///
/// ```swift
/// config.schemaVersion = 2
/// config.migrationBlock = { migration, oldSchemaVersion in
///     if oldSchemaVersion < 2 {
///         migration.enumerateObjects(ofType: "Person") { oldObject, newObject in
///             let first = oldObject!["firstName"] as! String
///             let last = oldObject!["lastName"] as! String
///             newObject!["fullName"] = "\(first) \(last)"
///         }
///     }
/// }
/// ```
///
/// It runs once, on the thread that opens the database, inside the write
/// transaction that applies the new schema: the file changes only if the block
/// returns normally and every call it made succeeded. Otherwise opening throws
/// and the file stays exactly as it was, at its old version.
///
/// The block is `@Sendable` because it is part of ``Database/Configuration``, a
/// `Sendable` value that any thread or task may use to open a database: the
/// block may run on any of them, so it must not capture state that is unsafe to
/// share.
///
/// Unlike Realm's, the block may throw: a thrown error aborts the migration and
/// is what opening the database throws. A block that does not throw (every Realm
/// migration block) fits the type as it is.
public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: UInt64) throws -> Void

/// A migration in progress: read the objects as they were, write them with the
/// new schema, rename properties, delete or create objects.
///
/// As in Realm, its methods do not throw. The first failure among them (an
/// unknown class or property, a value of the wrong type, a rename the schema
/// does not allow) is kept and makes every later call do nothing: when the
/// migration block returns, opening the database throws that ``CofferError``
/// and leaves the file untouched. ``error`` tells the block whether one
/// happened.
///
/// A `Migration` and its ``MigrationObject``s are valid only while the
/// migration block runs; using one afterwards stops the program.
public final class Migration {
    let handle: OpaquePointer
    private(set) var isFinished = false

    /// The first failure of a call made during the migration, nil while none failed.
    public private(set) var error: CofferError?

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    /// The database being opened, with the new schema.
    var newDatabase: OpaquePointer { coffer_migration_db(handle) }
    /// The write transaction that applies the new schema.
    var newTransaction: OpaquePointer { coffer_migration_txn(handle) }
    /// A read-only view of the file before the migration, with the old schema.
    var oldDatabase: OpaquePointer { coffer_migration_old_db(handle) }
    /// A snapshot of the file before the migration.
    var oldTransaction: OpaquePointer { coffer_migration_old_txn(handle) }

    /// Calls `block` once for every object of class `typeName` that existed
    /// before the migration, in creation order: `oldObject` reads it with the old
    /// schema, `newObject` reads and writes it with the new one. `newObject` is
    /// nil if the new schema no longer has the class or the object was deleted
    /// during the migration; `oldObject` is nil only after a failure. Objects
    /// created by the migration are not visited.
    ///
    /// An error thrown by `block` stops the enumeration and is rethrown.
    public func enumerateObjects(ofType typeName: String,
                                 _ block: (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) throws -> Void) rethrows {
        guard let keys = record({ () throws(CofferError) in try objectKeys(ofType: typeName) }) else { return }
        let oldClass = classId(typeName, in: oldDatabase)
        let newClass = classId(typeName, in: newDatabase)
        for key in keys {
            guard error == nil else { return }
            let oldObject = oldClass.map { MigrationObject(migration: self, side: .old, classId: $0, key: key) }
            var newObject: MigrationObject?
            if let newClass, objectExists(newTransaction, newClass, key) {
                newObject = MigrationObject(migration: self, side: .new, classId: newClass, key: key)
            }
            try block(oldObject, newObject)
            // Counted once the block has run, so the open's progress follows the work.
            record { () throws(CofferError) in try CofferError.check(coffer_migration_count_visited(handle, 1)) }
        }
    }

    /// Renames property `oldName` of class `typeName` to `newName`, keeping its
    /// values, links, collections and index. `oldName` must be in the old schema
    /// only and `newName` in the new one, both of the same type (an optional
    /// property cannot become required). Call it before the migration writes any
    /// object.
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        record { () throws(CofferError) in
            try CofferError.check(coffer_migration_rename_property(handle, typeName, oldName, newName))
        }
    }

    /// Deletes every object of class `typeName`; if the new schema no longer has
    /// the class, it is removed from the file too.
    ///
    /// - Returns: true if there were objects to delete, false if none (or no such class).
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        requireRunning()
        guard error == nil else { return false }
        let oldClass = classId(typeName, in: oldDatabase)
        let newClass = classId(typeName, in: newDatabase)
        guard oldClass != nil || newClass != nil else { return false }
        let deleted = record { () throws(CofferError) -> Bool in
            var count: UInt64 = 0
            if let newClass {
                try CofferError.check(coffer_class_count(newTransaction, newClass, &count))
            } else if let oldClass {
                try CofferError.check(coffer_class_count(oldTransaction, oldClass, &count))
            }
            try CofferError.check(coffer_migration_delete_data(handle, typeName))
            return count > 0
        }
        return deleted ?? false
    }

    /// Creates an object of class `typeName` (new schema) from `value`: a
    /// dictionary of property names to values, or an array of every property's
    /// value in schema order. Properties not given get their defaults. Values are
    /// as ``MigrationObject``'s subscript takes them.
    ///
    /// After a failure the object returned reads nil and ignores writes.
    @discardableResult
    public func create(_ typeName: String, value: Any = [String: Any]()) -> MigrationObject {
        let created = record { () throws(CofferError) -> MigrationObject in
            guard let cls = classId(typeName, in: newDatabase) else {
                throw CofferError(.notFound, "class '\(typeName)' is not in the new schema, so no object of it can be created")
            }
            let arena = ValueArena()
            let fields = try MigrationValues.fields(value, classId: cls, in: self, arena: arena)
            var object: OpaquePointer?
            try CofferError.check(coffer_object_create(newTransaction, cls, fields, fields.count, Int32(COFFER_UPDATE_ERROR), &object))
            defer { coffer_object_release(object) }
            return MigrationObject(migration: self, side: .new, classId: cls, key: coffer_object_key_of(object))
        }
        return created ?? MigrationObject(migration: self, side: .new, classId: UInt32.max, key: UInt64.max)
    }

    /// Deletes an object (a `newObject` of ``enumerateObjects(ofType:_:)`` or one
    /// made by ``create(_:value:)``), with the cascades of ``Database/delete(_:)``.
    public func delete(_ object: MigrationObject) {
        record { () throws(CofferError) in
            guard object.side == .new else {
                throw CofferError(.readOnly, "an old object of class '\(object.className)' cannot be deleted; delete its new object")
            }
            let handle = try object.handle()
            defer { coffer_object_release(handle) }
            try CofferError.check(coffer_object_delete(handle))
        }
    }

    // MARK: Helpers

    /// Runs `body` unless a call failed already; keeps its error as the migration's.
    @discardableResult
    func record<T>(_ body: () throws(CofferError) -> T) -> T? {
        requireRunning()
        guard error == nil else { return nil }
        do {
            return try body()
        } catch {
            self.error = error
            return nil
        }
    }

    func requireRunning() {
        if isFinished {
            fatalError("Coffer: a Migration or MigrationObject was used after its migration block returned")
        }
    }

    func finish() {
        isFinished = true
    }

    func classId(_ name: String, in db: OpaquePointer) -> UInt32? {
        var cls: coffer_class_id = 0
        return coffer_db_find_class(db, name, &cls) == COFFER_OK ? cls : nil
    }

    private func objectExists(_ txn: OpaquePointer, _ cls: UInt32, _ key: UInt64) -> Bool {
        var object: OpaquePointer?
        guard coffer_object_get(txn, cls, key, &object) == COFFER_OK else { return false }
        coffer_object_release(object)
        return true
    }

    /// The keys of the objects of `typeName` before the migration, read first so
    /// that the block may write freely while it is called. They are not counted
    /// in the open's progress yet: ``enumerateObjects(ofType:_:)`` counts each
    /// object after its block has run.
    private func objectKeys(ofType typeName: String) throws(CofferError) -> [UInt64] {
        final class Collected { var keys: [UInt64] = [] }
        let collected = Collected()
        let status = withExtendedLifetime(collected) {
            coffer_migration_enumerate_v2(handle, typeName, { _, old, _, ctx in
                let collected = Unmanaged<Collected>.fromOpaque(ctx!).takeUnretainedValue()
                collected.keys.append(coffer_object_key_of(old))
                return COFFER_OK
            }, Unmanaged.passUnretained(collected).toOpaque(), COFFER_MIGRATION_COUNT_LATER.rawValue)
        }
        try CofferError.check(status)
        return collected.keys
    }
}
