// ClassBinding: an Object subclass bound to a class of one open database, and
// reading and writing property values through it.

internal import CCoffer

/// An ``Object`` subclass bound to a class of one open database: its class id and
/// the property id of each of its properties, checked against the stored schema.
final class ClassBinding {
    let schema: ModelSchema
    let classId: coffer_class_id
    let propertyIds: [coffer_property_id]
    /// Per property: true if it holds a value of its own (not backlinks).
    let isStored: [Bool]
    /// Per property: true for a link to an embedded class, whose objects become
    /// managed views of their stored copies once written.
    let linksEmbedded: [Bool]
    /// The properties a ``PackedPage`` holds: the stored ones that are not
    /// collections, in the binding's order.
    let packedPropertyIds: [coffer_property_id]
    /// Per property: its position in a packed row, or -1 when not packed.
    let packedSlots: [Int]
    /// Bytes of strings per object, learnt from the pages read so far.
    var packedBytesPerRow = 64

    init(schema: ModelSchema, classId: coffer_class_id, propertyIds: [coffer_property_id]) {
        self.schema = schema
        self.classId = classId
        self.propertyIds = propertyIds
        isStored = schema.properties.map(\.isStored)
        linksEmbedded = schema.properties.map { $0.kind == .link && $0.objectType is EmbeddedObject.Type }
        var packed: [coffer_property_id] = []
        var slots: [Int] = []
        for (index, property) in schema.properties.enumerated() {
            if property.isStored && property.cCollection == COFFER_COLLECTION_NONE && property.kind != .link {
                slots.append(packed.count)
                packed.append(propertyIds[index])
            } else {
                slots.append(-1)
            }
        }
        packedPropertyIds = packed
        packedSlots = slots
    }

    /// The error for an object of this class that is gone.
    var deletedError: CofferError {
        CofferError(.notFound, "the \(schema.className) object has been deleted or invalidated")
    }
}

extension Database {
    /// The binding of `type`, made on first use.
    /// - Throws: ``CofferError`` `.notFound` if the database has no such class,
    ///   `.schema` if its properties do not match the Swift class's.
    func binding(for type: Object.Type) throws(CofferError) -> ClassBinding {
        let access = self.frozenAccess(); defer { access?.unlock() }
        try checkThread()
        let id = ObjectIdentifier(type)
        if let known = bindings[id] {
            return known
        }
        let schema = try ModelSchema.of(type)
        var classId: coffer_class_id = 0
        guard coffer_db_find_class(handle, schema.className, &classId) == COFFER_OK,
              let stored = coffer_db_class_schema(handle, classId)
        else {
            var reason = ""
            if configuration.objectTypes?.isEmpty ?? true {
                reason = ProgramSchema.isAmbiguous(schema.className)
                    ? " (several classes of this program are named '\(schema.className)', so none was added on its own)"
                    : " (it was not found among this program's classes, or a class it links to is missing)"
            }
            throw CofferError(.notFound, "class '\(schema.className)' is not in this database\(reason); list \(type).self in Database.Configuration.objectTypes")
        }
        var propertyIds: [coffer_property_id] = []
        for property in schema.properties {
            var propertyId: coffer_property_id = 0
            guard coffer_db_find_property(handle, classId, property.persistedName, &propertyId) == COFFER_OK else {
                throw CofferError(.schema, "class '\(schema.className)' in the database has no property '\(property.persistedName)', which the Swift class declares")
            }
            let storedProperty = stored.pointee.properties[Int(propertyId)]
            let storedKey = storedProperty.flags & UInt32(COFFER_PROPERTY_PRIMARY_KEY) != 0
            let storedOptional = storedProperty.flags & UInt32(COFFER_PROPERTY_OPTIONAL) != 0
            if storedProperty.type != property.cType || storedOptional != property.isOptional || storedKey != property.isPrimaryKey
                || storedProperty.collection != property.cCollection {
                let inFile = String(cString: coffer_type_name(storedProperty.type)) + (storedOptional ? "?" : "") + (storedKey ? ", primary key" : "")
                let inSwift = property.typeDescription + (property.isPrimaryKey ? ", primary key" : "")
                throw CofferError(.schema, "class '\(schema.className)': property '\(property.persistedName)' is \(inFile) in the database but \(inSwift) in Swift")
            }
            let storedTarget = storedProperty.object_class.map { String(cString: $0) }
            if let target = property.objectType?.className(), storedTarget != target {
                throw CofferError(.schema, "class '\(schema.className)': property '\(property.persistedName)' refers to class '\(storedTarget ?? "none")' in the database but '\(target)' in Swift")
            }
            propertyIds.append(propertyId)
        }
        let binding = ClassBinding(schema: schema, classId: classId, propertyIds: propertyIds)
        bindings[id] = binding
        return binding
    }

    /// A managed object of `type` for the stored object `key`; its values are
    /// read from row `row` of `page` while that is current.
    func makeObject<Element: Object>(_ type: Element.Type, _ binding: ClassBinding, _ key: UInt64,
                                     handle: OpaquePointer? = nil, page: PackedPage? = nil, row: Int = 0) -> Element {
        let object = type.init()
        let managed = ManagedState(database: self, binding: binding, key: key, handle: handle)
        if let page {
            managed.page = page
            managed.pageRow = row
        }
        object.managedState = managed
        return object
    }

    /// The ``Results`` element for the stored object `key`: the object, or a projection of it.
    func makeElement<Element: _ResultsContent>(_ type: Element.Type, _ binding: ClassBinding, _ key: UInt64,
                                               page: PackedPage? = nil, row: Int = 0) -> Element {
        Element._cofferElement(for: makeObject(Element._cofferRootType, binding, key, page: page, row: row))
    }

    /// The C handle of a stored object, to be released by the caller.
    /// - Throws: `.notFound` saying the object was deleted.
    func objectHandle(_ txn: OpaquePointer, _ binding: ClassBinding, _ key: UInt64) throws(CofferError) -> OpaquePointer {
        var object: OpaquePointer?
        let status = coffer_object_get(txn, binding.classId, key, &object)
        if status == COFFER_ERR_NOT_FOUND {
            throw binding.deletedError
        }
        try CofferError.check(status)
        return object!
    }

    /// The value of a property of a managed object; stops the program on failure,
    /// for property getters, which cannot throw. `shallow` as for
    /// ``decoded(_:shallow:open:)``.
    func readValue(_ managed: ManagedState, _ index: Int, shallow: Bool = false) -> StoredValue {
        let access = self.frozenAccess(); defer { access?.unlock() }
        do throws(CofferError) {
            let binding = managed.binding
            let object = try managed.objectHandle()
            if !binding.isStored[index] {
                return .null
            }
            let propertyId = binding.propertyIds[index]
            var value = coffer_value()
            let status = coffer_object_get_value(object, propertyId, &value)
            if status == COFFER_ERR_NOT_FOUND {
                throw binding.deletedError
            }
            try CofferError.check(status)
            return try decoded(value, shallow: shallow) { kind throws(CofferError) in
                try CCollectionReading.open(kind, object: object, property: propertyId)
            }
        } catch {
            fail(error)
        }
    }

    /// Sets a property of a managed object; stops the program outside a write
    /// transaction or on failure, for property setters, which cannot throw.
    func writeValue(_ managed: ManagedState, _ index: Int, _ value: StoredValue) {
        let binding = managed.binding
        do {
            _ = try requireWriteTransaction(for: "modify \(binding.schema.className).\(binding.schema.properties[index].name)",
                                            flushing: false)
            if try deferWrite(managed, index, value) {
                contentVersion &+= 1
                return
            }
            try flushPendingWrites()
            let resolved = try prepared(value, update: .error)
            let object = try managed.objectHandle()
            let status = try resolved.withCValue { (cValue: inout coffer_value) in
                coffer_object_set_value(object, binding.propertyIds[index], &cValue)
            }
            if status == COFFER_ERR_NOT_FOUND {
                throw binding.deletedError
            }
            try CofferError.check(status)
            contentVersion &+= 1
            if binding.linksEmbedded[index] {
                adoptEmbedded([index: value], owner: managed)
            }
        } catch let error as CofferError {
            fail(error)
        } catch {
            fatalError("Coffer: \(error)")
        }
    }
}

extension Database {
    /// True if the database has a class named `name`; its id in `classId`.
    func classExists(_ name: String, _ classId: inout UInt32) -> Bool {
        var id: coffer_class_id = 0
        guard coffer_db_find_class(handle, name, &id) == COFFER_OK else { return false }
        classId = id
        return true
    }
}
