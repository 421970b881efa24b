// Where a managed collection lives (one property of one managed object), and
// opening its C handle in the current transaction with the owner's thread,
// deletion and write checks.

internal import CCoffer

/// Where a managed collection lives: one property of one managed object. Every
/// operation opens the collection in the database's current transaction, so a
/// collection is a live view that always reads the latest state.
struct CollectionLocation {
    let owner: ManagedState
    let index: Int

    var database: Database { owner.database }
    var property: PropertySchema { owner.binding.schema.properties[index] }
    var propertyId: UInt32 { owner.binding.propertyIds[index] }
    /// `Person.dogs`, for messages.
    var name: String { "\(owner.binding.schema.className).\(property.name)" }

    /// Runs `body` on the opened collection; stops the program on error, as a
    /// Realm collection does (writes outside a write transaction, a deleted owner,
    /// an index out of range). `action` names a write, nil for reads.
    func withCollection<Result>(
        _ action: String?,
        open: (OpaquePointer?, UInt32, UnsafeMutablePointer<OpaquePointer?>?) -> coffer_status,
        release: (OpaquePointer?) -> Void,
        _ body: (OpaquePointer) throws -> Result
    ) -> Result {
        let access = database.frozenAccess(); defer { access?.unlock() }
        owner.requireUsable()
        do {
            let txn: OpaquePointer
            if let action {
                txn = try database.requireWriteTransaction(for: "\(action) \(name)")
            } else {
                txn = try database.currentTransaction()
            }
            let object = try database.objectHandle(txn, owner.binding, owner.key)
            defer { coffer_object_release(object) }
            var handle: OpaquePointer?
            try CofferError.check(open(object, propertyId, &handle))
            defer {
                release(handle)
                if action != nil {
                    // Queries over this collection may now match other objects.
                    database.contentVersion &+= 1
                }
            }
            return try body(handle!)
        } catch {
            fatalError("Coffer: \(error)")
        }
    }

    /// `value` as a C value for this collection, with its objects resolved;
    /// `body` must use it before `arena` goes away.
    func cValue(_ value: StoredValue, _ arena: ValueArena) throws -> coffer_value {
        try arena.cValue(try database.prepared(value, update: .error))
    }

    /// Runs `body` with `element` as a C value for this collection, its objects
    /// resolved and its bytes alive until `body` returns.
    func withCValue<Element: _Persistable, Result>(
        of element: Element, _ body: (inout coffer_value) throws -> Result
    ) throws -> Result {
        let arena = ValueArena()
        var value = try cValue(element._cofferEncoded.value, arena)
        return try withExtendedLifetime(arena) { try body(&value) }
    }

    /// A stored element as the Swift type, or a stop naming what did not fit.
    func decode<Value: _Persistable>(_ stored: StoredValue, as type: Value.Type) -> Value {
        guard let value = Value._cofferDecode(_StoredValue(value: stored)) else {
            fatalError("Coffer: \(name) holds \(stored.summary), which is not a \(Value.self)")
        }
        return value
    }
}
