// Reading objects: all objects of a class as Results, and lookups by primary
// key.

internal import CCoffer

extension Database {
    /// Every object of `type`, in creation order, as a live ``Results``; for a
    /// ``Projection`` class, a projection of every object of its root class.
    ///
    /// ```swift
    /// let dogs = db.objects(Dog.self)
    /// print(dogs.count, dogs.first?.name ?? "none")
    /// let people: Results<PersonProjection> = db.objects(PersonProjection.self)
    /// ```
    ///
    /// As in Realm, a class that the database does not have (not in
    /// ``Configuration/objectTypes`` or the file) stops the program with a message
    /// naming it, as does a call from another thread.
    public func objects<Element: _ResultsElement>(_ type: Element.Type) -> Results<Element> {
        do {
            return Results(database: self, binding: try binding(for: type._cofferRootType))
        } catch {
            fail(error)
        }
    }

    /// The object of `type` whose primary key is `key`, or nil if there is none.
    ///
    /// ```swift
    /// let rex = db.object(ofType: Dog.self, forPrimaryKey: rexId)
    /// ```
    ///
    /// As in Realm, a class without primary key, a key of the wrong type or a class
    /// the database does not have stops the program with a message naming it.
    public func object<Element: Object, Key: _Persistable>(ofType type: Element.Type, forPrimaryKey key: Key) -> Element? {
        let access = self.frozenAccess(); defer { access?.unlock() }
        do throws(CofferError) {
            let binding = try binding(for: type)
            guard binding.schema.primaryKeyIndex != nil else {
                throw CofferError(.notFound, "class '\(binding.schema.className)' has no primary key")
            }
            let txn = try currentTransaction()
            var object: OpaquePointer?
            let status = try key._cofferEncoded.value.withCValue { value in
                coffer_object_find(txn, binding.classId, &value, &object)
            }
            if status == COFFER_ERR_NOT_FOUND {
                return nil
            }
            try CofferError.check(status)
            // The object keeps the handle the lookup loaded, so that its first
            // read or write does not find and load it again.
            return makeObject(type, binding, coffer_object_key_of(object), handle: object)
        } catch {
            fail(error)
        }
    }

    /// True if no class visible through this database has any object.
    public var isEmpty: Bool {
        let access = self.frozenAccess(); defer { access?.unlock() }
        do {
            let txn = try currentTransaction()
            for classId in 0..<coffer_db_class_count(handle) {
                var count: UInt64 = 0
                try CofferError.check(coffer_class_count(txn, coffer_class_id(classId), &count))
                if count > 0 {
                    return false
                }
            }
            return true
        } catch {
            fail(error)
        }
    }
}
