// Pending writes: assignments to the properties of one managed object,
// gathered in a write transaction and written in one record write
// (coffer_object_set_fields) instead of one per property.

internal import CCoffer

/// The assignments to one managed object not yet handed to the C core.
///
/// Setting `dog.age` and then `dog.name` writes the record once: the values
/// wait here until anything else reaches the database — a read, a query, a
/// write to another object, an add or delete, the commit — which first
/// writes them (``Database/flushPendingWrites()``, called by
/// ``Database/currentTransaction()`` and every path that needs the write
/// transaction). Only values that cannot fail in the C core once the
/// object is known to exist wait: plain values, strings and bytes of a
/// property that is not the primary key. Links, embedded objects and
/// collections are written at once, after the values waiting.
struct PendingWrites {
    /// The object whose assignments wait; nil when none do. Not retained:
    /// an object that goes away while its assignments wait writes them
    /// first (``ManagedState``'s deinit), and a reference here would keep
    /// the object, and through it the database, alive.
    private var waiting: Unmanaged<ManagedState>?
    /// The values assigned, by property index (the last one of each).
    private(set) var values: [(index: Int, value: StoredValue)] = []

    /// Whether `value` for property `index` of `binding` may wait.
    static func canWait(_ value: StoredValue, at index: Int, of binding: ClassBinding) -> Bool {
        guard !binding.linksEmbedded[index], index != binding.schema.primaryKeyIndex else { return false }
        switch value {
        case .null, .bool, .int, .float, .double, .string, .data, .date, .objectId, .uuid, .decimal128:
            return true
        case .object, .link, .fields, .list, .set, .map:
            return false
        }
    }

    /// Whether assignments wait, for any object.
    var isEmpty: Bool { waiting == nil }

    /// Whether the assignments waiting are `managed`'s.
    func isWaiting(for managed: ManagedState) -> Bool {
        waiting?.toOpaque() == Unmanaged.passUnretained(managed).toOpaque()
    }

    /// Adds an assignment to `managed`, which must be the waiting object or
    /// come when none waits.
    mutating func add(_ value: StoredValue, at index: Int, of managed: ManagedState) {
        if waiting == nil {
            waiting = Unmanaged.passUnretained(managed)
        }
        if let slot = values.firstIndex(where: { $0.index == index }) {
            values[slot].value = value
        } else {
            values.append((index, value))
        }
    }

    /// Takes what waits, leaving nothing. Only for a waiting object that is
    /// alive (not from its deinit).
    mutating func take() -> (object: ManagedState, values: [(index: Int, value: StoredValue)])? {
        guard let waiting else { return nil }
        let taken = (waiting.takeUnretainedValue(), values)
        discard()
        return taken
    }

    /// Takes the values waiting, leaving nothing.
    mutating func takeValues() -> [(index: Int, value: StoredValue)] {
        let taken = values
        discard()
        return taken
    }

    /// Forgets what waits (the transaction ended without it).
    mutating func discard() {
        waiting = nil
        values.removeAll(keepingCapacity: true)
    }
}

extension Database {
    /// Writes the assignments waiting in ``pendingWrites`` in one call.
    /// - Throws: `.notFound` if the object was deleted meanwhile (which only
    ///   unchecked C calls can do), or what the C core reports.
    func flushPendingWrites() throws(CofferError) {
        guard !pendingWrites.isEmpty, let (managed, values) = pendingWrites.take() else { return }
        try writeFields(values, of: try managed.objectHandle(), binding: managed.binding)
    }

    /// Writes `values` of the object `object` of `binding` in one call.
    func writeFields(_ values: [(index: Int, value: StoredValue)], of object: OpaquePointer,
                     binding: ClassBinding) throws(CofferError) {
        var fields: [coffer_field] = []
        fields.reserveCapacity(values.count)
        var arena: ValueArena?
        for (index, value) in values {
            let cValue: coffer_value
            if let plain = try value.plainCValue() {
                cValue = plain
            } else {
                if arena == nil { arena = ValueArena() }
                cValue = try arena!.cValue(value)
            }
            fields.append(coffer_field(property: binding.propertyIds[index], value: cValue))
        }
        let status = withExtendedLifetime(arena) {
            coffer_object_set_fields(object, fields, fields.count)
        }
        if status == COFFER_ERR_NOT_FOUND {
            throw binding.deletedError
        }
        try CofferError.check(status)
    }

    /// Sets property `index` of `managed` to `value` when it can wait for
    /// the object's other assignments: checks now what the C core would
    /// (the object exists), and writes what waits for another object first.
    /// False when the value must be written at once.
    func deferWrite(_ managed: ManagedState, _ index: Int, _ value: StoredValue) throws(CofferError) -> Bool {
        let binding = managed.binding
        guard PendingWrites.canWait(value, at: index, of: binding) else { return false }
        if !pendingWrites.isEmpty && !pendingWrites.isWaiting(for: managed) {
            try flushPendingWrites()
        }
        let object = try managed.objectHandle(flushing: false)
        guard coffer_object_is_valid(object) != 0 else {
            throw binding.deletedError
        }
        pendingWrites.add(value, at: index, of: managed)
        return true
    }
}
