// Writing objects: add, create, delete and deleteAll, and what a primary-key
// conflict does (UpdatePolicy). As in Realm, add, create and delete do not
// throw: misuse stops the program with a message naming the object and
// property; their `try` twins (tryAdd, tryCreate, tryDelete) throw instead,
// for values that come from users.

internal import CCoffer

extension Database {
    /// What ``add(_:update:)`` and ``create(_:value:update:)`` do when an object
    /// with the same primary key exists.
    public enum UpdatePolicy: Sendable {
        /// Fail as a duplicate: ``Database/add(_:update:)`` stops the program,
        /// ``Database/tryAdd(_:update:)`` throws ``CofferError`` `.primaryKeyExists`.
        case error
        /// Update the existing object, writing only the properties whose value differs.
        case modified
        /// Update the existing object, writing every property given.
        case all

        var cValue: Int32 {
            switch self {
            case .error: Int32(COFFER_UPDATE_ERROR)
            case .modified: Int32(COFFER_UPDATE_MODIFIED)
            case .all: Int32(COFFER_UPDATE_ALL)
            }
        }
    }

    /// Adds an unmanaged object to the database; it becomes managed and live.
    ///
    /// Adding an object this database already manages does nothing. With
    /// `.modified` or `.all`, an existing object with the same primary key is
    /// updated instead, and `object` becomes a managed view of it.
    ///
    /// ```swift
    /// try db.write {
    ///     db.add(rex)
    /// }
    /// ```
    ///
    /// As in Realm, this call does not throw: a misuse stops the program with a
    /// message naming the class and property (outside a write transaction, a
    /// primary key that exists with `.error`, an object of another database, a
    /// value the database rejects). Use ``tryAdd(_:update:)`` for objects built
    /// from user input, to get a ``CofferError`` instead.
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        do {
            try tryAdd(object, update: update)
        } catch {
            fail(error)
        }
    }

    /// Adds an unmanaged object as ``add(_:update:)`` does, throwing where that
    /// stops the program.
    ///
    /// ```swift
    /// do {
    ///     try db.write { try db.tryAdd(Dog(value: ["id": enteredId])) }
    /// } catch let error as CofferError where error.code == .primaryKeyExists {
    ///     print("that id is taken")
    /// }
    /// ```
    ///
    /// - Throws: ``CofferError``: `.notInWriteTransaction` outside a write
    ///   transaction; `.primaryKeyExists` (with `.error`); `.invalidArgument` for an
    ///   update policy on a class without primary key; `.misuse` for an object
    ///   managed by another database or whose adding was cancelled; `.notFound` or
    ///   `.schema` if the class is not in the database; `.type` for a value the
    ///   database rejects. On error nothing of the object is written.
    public func tryAdd(_ object: Object, update: UpdatePolicy = .error) throws {
        let txn = try requireWriteTransaction(for: "add objects")
        var className: String { type(of: object).className() }
        if let managed = object.managedState {
            guard managed.database === self else {
                throw CofferError(.misuse, "the \(className) object is already managed by another Database")
            }
            guard !managed.addWasCancelled else {
                throw CofferError(.misuse, "the \(className) object was added in a write transaction that was cancelled; add a new object instead")
            }
            return
        }
        if object is EmbeddedObject {
            throw CofferError(.invalidArgument, "the \(className) object is embedded: it cannot be added on its own; assign it to a property or list of its parent")
        }
        let binding = try binding(for: type(of: object))
        try checkUpdatePolicy(update, binding)
        let values = FieldValues.storedValues(of: object, schema: binding.schema)
        // Properties holding objects are written once this object is managed,
        // so that objects linking back to it (friends of friends) find it.
        var plain: [(Int, StoredValue)] = []
        var linking: [(offset: Int, element: StoredValue)] = []
        plain.reserveCapacity(values.count)
        for (index, value) in values.enumerated() where binding.isStored[index] {
            if value.holdsObjects {
                linking.append((index, value))
            } else {
                plain.append((index, value))
            }
        }
        let (key, created, handle) = try createObject(txn, binding, plain, update)
        let managed = ManagedState(database: self, binding: binding, key: key, handle: handle)
        if created {
            managed.addedIn = writeOutcome
        }
        object.managedState = managed
        if !linking.isEmpty {
            do {
                try setFields(txn, binding, key, linking, update)
            } catch {
                if created {
                    // Nothing of the object may stay when its links fail.
                    if let handle = try? objectHandle(txn, binding, key) {
                        coffer_object_delete(handle)
                        coffer_object_release(handle)
                    }
                    object.managedState = nil
                }
                throw error
            }
            adoptEmbedded(Dictionary(uniqueKeysWithValues: linking.map { ($0.offset, $0.element) }), owner: managed)
        }
    }

    /// Adds every object of `objects`, as ``add(_:update:)`` does.
    ///
    /// New objects of one class that hold no links or collections are written
    /// many per call into the C core, so adding many costs less than adding
    /// each one.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        do {
            try tryAdd(objects, update: update)
        } catch {
            fail(error)
        }
    }

    /// Adds every object of `objects`, as ``tryAdd(_:update:)`` does, stopping at
    /// the first error: the objects before it are added and managed, it and the
    /// ones after it are not.
    public func tryAdd<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) throws where S.Element: Object {
        guard update == .error else {
            // Whether each object was created or updated is known one by one only.
            for object in objects {
                try tryAdd(object, update: update)
            }
            return
        }
        let txn = try requireWriteTransaction(for: "add objects")
        var batch = AddBatch()
        for object in objects {
            guard object.managedState == nil, !(object is EmbeddedObject) else {
                try addBatch(&batch, txn)
                try tryAdd(object, update: update)
                continue
            }
            let binding = try binding(for: type(of: object))
            let values = FieldValues.storedValues(of: object, schema: binding.schema)
            guard !binding.schema.isEmbedded, !values.contains(where: \.holdsObjects) else {
                try addBatch(&batch, txn)
                try tryAdd(object, update: update)
                continue
            }
            if batch.binding !== binding || batch.objects.count == AddBatch.limit {
                try addBatch(&batch, txn)
                batch.binding = binding
            }
            batch.objects.append(object)
            batch.values.append(values)
        }
        try addBatch(&batch, txn)
    }

    /// Writes the objects of `batch` with one coffer_objects_create() call and
    /// makes the ones written managed; empties it.
    private func addBatch(_ batch: inout AddBatch, _ txn: OpaquePointer) throws {
        defer { batch = AddBatch() }
        guard let binding = batch.binding, !batch.objects.isEmpty else { return }
        let arena = ValueArena()
        var fields: [coffer_field] = []
        var perObject = 0
        for values in batch.values {
            var count = 0
            for (index, value) in values.enumerated() where binding.isStored[index] {
                fields.append(coffer_field(property: binding.propertyIds[index], value: try arena.cValue(value)))
                count += 1
            }
            perObject = count
        }
        var keys = [UInt64](repeating: 0, count: batch.objects.count)
        var done = 0
        let status = coffer_objects_create(txn, binding.classId, fields, perObject, batch.objects.count,
                                           Int32(COFFER_UPDATE_ERROR), &keys, &done)
        if done > 0 {
            contentVersion &+= 1
            let outcome = writeOutcome
            for (object, key) in zip(batch.objects.prefix(done), keys) {
                let managed = ManagedState(database: self, binding: binding, key: key)
                managed.addedIn = outcome
                object.managedState = managed
            }
        }
        try CofferError.check(status)
    }

    /// Creates a managed object of `type` from `value` and returns it.
    ///
    /// `value` is a dictionary of property names to values, an array of every
    /// property's value in declaration order, or another ``Object``, as for
    /// ``Object/init(value:)``. Properties not given take their initial values.
    /// With `.modified` or `.all` and a primary key given that exists, only the
    /// properties given are written to the existing object.
    ///
    /// ```swift
    /// let rex = db.create(Dog.self, value: ["name": "Rex", "age": 3])
    /// ```
    ///
    /// As in Realm, this call does not throw: an unknown property, a value of the
    /// wrong type, an existing primary key with `.error` or a call outside a write
    /// transaction stops the program with a message naming the class and
    /// property. Use ``tryCreate(_:value:update:)`` for values that come from
    /// users.
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) -> T {
        do {
            return try tryCreate(type, value: value, update: update)
        } catch {
            fail(error)
        }
    }

    /// Creates a managed object as ``create(_:value:update:)`` does, throwing
    /// where that stops the program.
    ///
    /// ```swift
    /// let dog = try db.tryCreate(Dog.self, value: decodedJSON)
    /// ```
    ///
    /// - Throws: ``CofferError``: as ``tryAdd(_:update:)``, and `.notFound` naming an
    ///   unknown property, `.type` naming the property whose value does not fit,
    ///   `.invalidArgument` for an array of the wrong length or an unusable `value`.
    @discardableResult
    public func tryCreate<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) throws -> T {
        let txn = try requireWriteTransaction(for: "create objects")
        let binding = try binding(for: type)
        let schema = binding.schema
        try checkUpdatePolicy(update, binding)
        let given = try FieldValues.parse(value, for: schema)
        var fields: [(Int, StoredValue)]
        if update != .error, let keyIndex = schema.primaryKeyIndex, let keyValue = given[keyIndex],
           try primaryKeyExists(txn, binding, keyValue) {
            fields = given.sorted { $0.key < $1.key }
        } else {
            let initial = FieldValues.storedValues(of: T(), schema: schema)
            fields = initial.enumerated().map { ($0, given[$0] ?? $1) }
        }
        fields = fields.filter { schema.properties[$0.0].isStored }
        let (key, created, handle) = try createObject(txn, binding, fields, update)
        let object = makeObject(type, binding, key, handle: handle)
        if created {
            object.managedState?.addedIn = writeOutcome
        }
        return object
    }

    /// Deletes a managed object; it becomes invalidated.
    ///
    /// As in Realm, this call does not throw: outside a write transaction, for an
    /// unmanaged object, an object of another database or one deleted already,
    /// it stops the program with a message naming the class. Use
    /// ``tryDelete(_:)`` to get a ``CofferError`` instead.
    public func delete(_ object: Object) {
        do {
            try tryDelete(object)
        } catch {
            fail(error)
        }
    }

    /// Deletes a managed object as ``delete(_:)`` does, throwing where that stops
    /// the program.
    ///
    /// - Throws: ``CofferError``: `.notInWriteTransaction`; `.invalidArgument` for
    ///   an unmanaged object; `.misuse` for an object of another database;
    ///   `.notFound` if it was deleted already.
    public func tryDelete(_ object: Object) throws {
        let txn = try requireWriteTransaction(for: "delete objects")
        let className = type(of: object).className()
        guard let managed = object.managedState else {
            throw CofferError(.invalidArgument, "the \(className) object is not managed by a database, so it cannot be deleted")
        }
        guard managed.database === self else {
            throw CofferError(.misuse, "the \(className) object is managed by another Database")
        }
        guard !managed.addWasCancelled else {
            throw CofferError(.misuse, "the \(className) object was added in a write transaction that was cancelled")
        }
        _ = txn
        let status = coffer_object_delete(try managed.objectHandle())
        if status == COFFER_ERR_NOT_FOUND {
            throw managed.binding.deletedError
        }
        try CofferError.check(status)
        contentVersion &+= 1
    }

    /// Deletes every object of `objects` (a ``Results`` or any sequence of managed
    /// objects), as ``delete(_:)`` does.
    public func delete<S: Sequence>(_ objects: S) where S.Element: Object {
        for object in Array(objects) {
            delete(object)
        }
    }

    /// Deletes every object of `objects`, as ``tryDelete(_:)`` does, stopping at
    /// the first error.
    public func tryDelete<S: Sequence>(_ objects: S) throws where S.Element: Object {
        for object in Array(objects) {
            try tryDelete(object)
        }
    }

    /// Deletes every object of every class visible through this database.
    ///
    /// Outside a write transaction it stops the program, as Realm does.
    public func deleteAll() {
        do throws(CofferError) {
            let txn = try requireWriteTransaction(for: "delete objects")
            for classId in 0..<coffer_db_class_count(handle) {
                try CofferError.check(coffer_class_clear(txn, coffer_class_id(classId)))
            }
            contentVersion &+= 1
        } catch {
            fail(error)
        }
    }

    private func checkUpdatePolicy(_ update: UpdatePolicy, _ binding: ClassBinding) throws(CofferError) {
        if update != .error && binding.schema.primaryKeyIndex == nil {
            throw CofferError(.invalidArgument, "class '\(binding.schema.className)' has no primary key, so it cannot be updated with UpdatePolicy.\(update)")
        }
    }

    private func primaryKeyExists(_ txn: OpaquePointer, _ binding: ClassBinding, _ key: StoredValue) throws(CofferError) -> Bool {
        let arena = ValueArena()
        var value = try arena.cValue(key)
        var object: OpaquePointer?
        let status = coffer_object_find(txn, binding.classId, &value, &object)
        if status == COFFER_ERR_NOT_FOUND {
            return false
        }
        try CofferError.check(status)
        coffer_object_release(object)
        return true
    }

    /// Creates (or, with an update policy, updates) a stored object from values by
    /// property position; says whether a new object was created, and gives its
    /// handle, owned by the caller.
    private func createObject(_ txn: OpaquePointer, _ binding: ClassBinding, _ values: [(Int, StoredValue)],
                              _ update: UpdatePolicy) throws -> (key: UInt64, created: Bool, handle: OpaquePointer) {
        if binding.schema.isEmbedded {
            throw CofferError(.invalidArgument, "class '\(binding.schema.className)' is embedded: its objects are created through a property or list of their parent")
        }
        let resolved = try values.map { ($0.0, try prepared($0.1, update: update)) }
        // Without an update policy a call that succeeds has created the object;
        // with one, the count says whether it created or updated.
        var before: UInt64 = 0
        if update != .error {
            try CofferError.check(coffer_class_count(txn, binding.classId, &before))
        }
        let arena = ValueArena()
        var fields: [coffer_field] = []
        fields.reserveCapacity(resolved.count)
        for (index, value) in resolved {
            fields.append(coffer_field(property: binding.propertyIds[index], value: try arena.cValue(value)))
        }
        var object: OpaquePointer?
        try CofferError.check(coffer_object_create(txn, binding.classId, fields, fields.count, update.cValue, &object))
        let key = coffer_object_key_of(object)
        var after: UInt64 = 1
        if update != .error {
            let status = coffer_class_count(txn, binding.classId, &after)
            if status != COFFER_OK {
                coffer_object_release(object)
                throw CofferError.last(status)
            }
        }
        contentVersion &+= 1
        return (key, after > before, object!)
    }

    /// Writes properties of an existing object in one step, resolving objects to links.
    private func setFields(_ txn: OpaquePointer, _ binding: ClassBinding, _ key: UInt64,
                           _ values: [(offset: Int, element: StoredValue)], _ update: UpdatePolicy) throws {
        let resolved = try values.map { ($0.offset, try prepared($0.element, update: update)) }
        let arena = ValueArena()
        var fields: [coffer_field] = []
        for (index, value) in resolved {
            fields.append(coffer_field(property: binding.propertyIds[index], value: try arena.cValue(value)))
        }
        let handle = try objectHandle(txn, binding, key)
        defer { coffer_object_release(handle) }
        try CofferError.check(coffer_object_set_fields(handle, fields, fields.count))
    }

    /// The outcome flag of the current write transaction, made on first use.
    private var writeOutcome: WriteOutcome {
        if let currentWriteOutcome {
            return currentWriteOutcome
        }
        let outcome = WriteOutcome()
        currentWriteOutcome = outcome
        return outcome
    }
}

/// New objects of one class waiting to be written by one call.
private struct AddBatch {
    /// Objects per call.
    static let limit = 1000
    var binding: ClassBinding?
    var objects: [Object] = []
    var values: [[StoredValue]] = []
}
