// CompiledQuery: a query compiled by the C core for one class of one database.

import Foundation
internal import CCoffer

/// A query compiled by the C core for one class of one database. Immutable;
/// freed with its last ``Results``.
///
/// A text the database compiled before, given arguments of the same plain
/// types (numbers, strings, dates, ...), is not rebound at once: it keeps the
/// prepared query and its own arguments, and ``Results/count`` of such a
/// query alone counts with `coffer_query_count_rebound()` (no parse, no new
/// query, no C results). The first use that needs a query of its own
/// (running it, observing it, describing it) rebinds it then; the argument
/// types matched, so that cannot fail on them. Like the ``Results`` that
/// hold it, it is used on its database's thread, or under a frozen
/// database's lock.
final class CompiledQuery {
    private var storedHandle: OpaquePointer?
    /// The prepared query and the C arguments not bound yet; nil once bound.
    private(set) var pending: PendingArguments?
    /// The text it was compiled from and its arguments (objects as links), so
    /// that a ``ThreadSafeReference`` can compile it again in another database.
    private(set) var text = ""
    private(set) var arguments: [StoredValue] = []
    /// The types of the C arguments it was bound with.
    private var argumentTypes: [coffer_type] = []

    /// A prepared query and the arguments to run it with instead of its own.
    struct PendingArguments {
        let prepared: CompiledQuery
        let values: [coffer_value]
        /// Holds the memory of the strings and bytes in `values`.
        let arena: ValueArena
    }

    /// The C query; a query waiting for its arguments is rebound here, once.
    var handle: OpaquePointer {
        if let storedHandle {
            return storedHandle
        }
        let pending = pending!
        var query: OpaquePointer?
        let status = pending.values.withUnsafeBufferPointer { buffer in
            coffer_query_rebind(pending.prepared.handle, buffer.baseAddress, buffer.count, &query)
        }
        guard status == COFFER_OK, let query else {
            // The arguments have the prepared query's types, which bound.
            fatalError("Coffer: rebinding the query '\(text)' failed: \(String(cString: coffer_last_error()))")
        }
        storedHandle = query
        self.pending = nil
        return query
    }

    /// Compiles `text` (stored property names, arguments `$0`, `$1`, ...).
    /// - Throws: ``CofferError`` `.query` with the C core's message (the offset
    ///   of a syntax error, the property or type at fault), or naming an
    ///   argument that cannot be compared (an object of another database).
    ///
    /// The text is parsed once per database: a text seen before is rebound to
    /// the new arguments (`coffer_query_rebind`), as a prepared statement is,
    /// or, when their types are the ones it was bound with, kept with them
    /// until it is needed (see ``pending``).
    convenience init(_ database: Database, _ binding: ClassBinding, text: String, arguments: [StoredValue]) throws(CofferError) {
        let resolved = try arguments.enumerated().map { (index, value) throws(CofferError) in
            try database.queryArgument(value, at: index)
        }
        let arena = ValueArena()
        var values: [coffer_value] = []
        values.reserveCapacity(resolved.count)
        for value in resolved {
            values.append(try arena.cValue(value))
        }
        let key = PreparedQueries.Key(classId: binding.classId, text: text)
        let prepared = database.preparedQueries[key]
        if let prepared, database.writeTransaction == nil, prepared.binds(values) {
            self.init(pending: PendingArguments(prepared: prepared, values: values, arena: arena))
        } else {
            var query: OpaquePointer?
            let status: coffer_status
            if let prepared {
                status = values.withUnsafeBufferPointer { buffer in
                    coffer_query_rebind(prepared.handle, buffer.baseAddress, buffer.count, &query)
                }
            } else {
                status = text.withCString { cText in
                    values.withUnsafeBufferPointer { buffer in
                        coffer_query_compile(database.handle, binding.classId, cText, text.utf8.count,
                                             buffer.baseAddress, buffer.count, &query)
                    }
                }
            }
            try CofferError.check(status)
            self.init(handle: query!)
        }
        self.text = text
        self.arguments = resolved
        self.argumentTypes = values.map(\.type)
        if prepared == nil {
            database.preparedQueries[key] = self
        }
    }

    private init(handle: OpaquePointer) {
        self.storedHandle = handle
    }

    private init(pending: PendingArguments) {
        self.pending = pending
    }

    deinit {
        coffer_query_free(storedHandle)
    }

    /// Whether `values` can stand for this query's own arguments without a
    /// check that could fail: the same number, each of the same plain type
    /// (not null, a list, a link or an object) as the one it was bound with.
    private func binds(_ values: [coffer_value]) -> Bool {
        guard values.count == argumentTypes.count else { return false }
        for (value, bound) in zip(values, argumentTypes) where value.type != bound || !Self.isPlain(bound) {
            return false
        }
        return true
    }

    private static func isPlain(_ type: coffer_type) -> Bool {
        switch type {
        case COFFER_TYPE_BOOL, COFFER_TYPE_INT, COFFER_TYPE_FLOAT, COFFER_TYPE_DOUBLE, COFFER_TYPE_STRING,
             COFFER_TYPE_BINARY, COFFER_TYPE_DATE, COFFER_TYPE_OBJECT_ID, COFFER_TYPE_UUID, COFFER_TYPE_DECIMAL128:
            return true
        default:
            return false
        }
    }

    /// The number of objects of its class that match, counted in `txn`
    /// without a query or results of its own when it waits for its
    /// arguments (`coffer_query_count_rebound()`); nil when it is bound.
    /// Used in read transactions only; write transactions keep the path they
    /// had (a query rebound at once, counted through results).
    func countRebound(_ txn: OpaquePointer) throws(CofferError) -> Int? {
        guard let pending else { return nil }
        var count: UInt64 = 0
        let status = pending.values.withUnsafeBufferPointer { buffer in
            coffer_query_count_rebound(txn, pending.prepared.handle, buffer.baseAddress, buffer.count, &count)
        }
        try CofferError.check(status)
        return Int(count)
    }

    /// The query in the C core's canonical form.
    var description: String {
        String(cString: coffer_query_description(handle))
    }
}

extension Database {
    /// A query argument as the C core takes it: objects of this database become links.
    func queryArgument(_ value: StoredValue, at index: Int) throws(CofferError) -> StoredValue {
        switch value {
        case .object(let object):
            let className = type(of: object).className()
            guard let managed = object.managedState else {
                throw CofferError(.query, "argument $\(index) is an unmanaged \(className) object; a query can only compare objects stored in the database")
            }
            guard managed.database === self else {
                throw CofferError(.query, "argument $\(index) is a \(className) object of another Database")
            }
            return .link(classId: managed.binding.classId, key: managed.key)
        case .list(let items), .set(let items):
            var converted: [StoredValue] = []
            for item in items {
                converted.append(try queryArgument(item, at: index))
            }
            return .list(converted)
        case .map, .fields:
            throw CofferError(.query, "argument $\(index) is \(value.summary), which a query cannot compare")
        default:
            return value
        }
    }
}

/// Query arguments given as `Any`, as `filter("age > %@", 3)` takes them.
enum QueryArgument {
    /// `value` as a stored value: any type a property stores, an object, nil, or
    /// an array or set of them (for `IN`).
    static func stored(_ value: Any, at index: Int) throws(CofferError) -> StoredValue {
        guard let unwrapped = unwrapAny(value) else {
            return .null
        }
        if let persistable = unwrapped as? any _Persistable {
            return persistable._cofferEncoded.value
        }
        if let text = unwrapped as? Substring {
            return .string(String(text))
        }
        if let character = unwrapped as? Character {
            return .string(String(character))  // as NSPredicate's %c
        }
        if let integer = unwrapped as? any BinaryInteger {
            guard let exact = Int64(exactly: integer) else {
                throw CofferError(.query, "argument \(index) is \(integer), which does not fit a 64-bit integer")
            }
            return .int(exact)
        }
        if let array = unwrapped as? [Any] {
            return .list(try array.map { (item) throws(CofferError) in try stored(item, at: index) })
        }
        if let set = unwrapped as? Set<AnyHashable> {
            return .list(try set.map { (item) throws(CofferError) in try stored(item.base, at: index) })
        }
        throw CofferError(.query, "argument \(index) is a \(type(of: unwrapped)), which a query cannot compare")
    }
}

/// The queries a database has compiled, by class and text, so that running one
/// again with other arguments rebinds it instead of parsing it again. Bounded:
/// it starts afresh when full. Used only on the database's own thread.
struct PreparedQueries {
    struct Key: Hashable {
        let classId: UInt32
        let text: String
    }

    private static let capacity = 64
    private var queries: [Key: CompiledQuery] = [:]

    subscript(key: Key) -> CompiledQuery? {
        get { queries[key] }
        set {
            if newValue != nil && queries.count >= Self.capacity {
                queries.removeAll(keepingCapacity: true)
            }
            queries[key] = newValue
        }
    }
}
