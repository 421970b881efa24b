// Where a managed collection lives (one property of one managed object, and
// for a collection nested in a mixed value the steps down to it), and opening
// its C handle in the current transaction with the owner's thread, deletion
// and write checks.

internal import CCoffer

/// Where a managed collection lives: one property of one managed object, then,
/// for a list or map nested in a mixed value, the positions and keys that lead
/// down to it (`path`, empty for the property's own collection). Every
/// operation opens the collection in the database's current transaction, so a
/// collection is a live view that always reads the latest state.
struct CollectionLocation {
    let owner: ManagedState
    let index: Int
    var path: [CollectionStep] = []

    var database: Database { owner.database }
    var property: PropertySchema { owner.binding.schema.properties[index] }
    var propertyId: UInt32 { owner.binding.propertyIds[index] }
    /// `Person.dogs`, or `Bag.anything[2]["key"]` for a nested collection, for messages.
    var name: String {
        "\(owner.binding.schema.className).\(property.name)" + path.map(\.description).joined()
    }

    /// The collection nested in this one at `step`.
    func appending(_ step: CollectionStep) -> CollectionLocation {
        var nested = self
        nested.path.append(step)
        return nested
    }

    /// The same place under `owner`, the same object in another database.
    func moved(to owner: ManagedState) -> CollectionLocation {
        CollectionLocation(owner: owner, index: index, path: path)
    }

    /// Runs `body` on the opened collection; stops the program on error, as a
    /// Realm collection does (writes outside a write transaction, a deleted owner,
    /// an index out of range). `action` names a write, nil for reads; `kind`
    /// is the kind of collection at the end of ``path``, and `open` opens the
    /// property's own collection.
    func withCollection<Result>(
        _ action: String?, kind: CollectionKind,
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
            let handle = try path.isEmpty
                ? openHandle { open(object, propertyId, $0) }
                : openNested(object, leaf: kind)
            defer {
                release(handle)
                if action != nil {
                    // Queries over this collection may now match other objects.
                    database.contentVersion &+= 1
                }
            }
            return try body(handle)
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

    /// A stored element as the Swift type, or a stop naming what did not fit;
    /// `step` is where the element lies, so that a list or map nested in a
    /// mixed value reads as a live view of that place (nil in a set).
    func decode<Value: _Persistable>(_ stored: StoredValue, as type: Value.Type, at step: CollectionStep?) -> Value {
        let place = _NestedPlace(parent: self, step: step)
        guard let value = Value._cofferDecode(_StoredValue(value: stored), nestedAt: place) else {
            fatalError("Coffer: \(name) holds \(stored.summary), which is not a \(Value.self)")
        }
        return value
    }
}
