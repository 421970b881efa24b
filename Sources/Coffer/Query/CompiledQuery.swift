// CompiledQuery: a query compiled by the C core for one class of one database.

import Foundation
internal import CCoffer

/// A query compiled by the C core for one class of one database. Immutable;
/// freed with its last ``Results``.
final class CompiledQuery {
    let handle: OpaquePointer
    /// The text it was compiled from and its arguments (objects as links), so
    /// that a ``ThreadSafeReference`` can compile it again in another database.
    private(set) var text = ""
    private(set) var arguments: [StoredValue] = []

    /// Compiles `text` (stored property names, arguments `$0`, `$1`, ...).
    /// - Throws: ``CofferError`` `.query` with the C core's message (the offset
    ///   of a syntax error, the property or type at fault), or naming an
    ///   argument that cannot be compared (an object of another database).
    ///
    /// The text is parsed once per database: a text seen before is rebound to
    /// the new arguments (`coffer_query_rebind`), as a prepared statement is.
    convenience init(_ database: Database, _ binding: ClassBinding, text: String, arguments: [StoredValue]) throws(CofferError) {
        let resolved = try arguments.enumerated().map { (index, value) throws(CofferError) in
            try database.queryArgument(value, at: index)
        }
        let arena = ValueArena()
        var values: [coffer_value] = []
        for value in resolved {
            values.append(try arena.cValue(value))
        }
        var query: OpaquePointer?
        let key = PreparedQueries.Key(classId: binding.classId, text: text)
        let status: coffer_status
        if let prepared = database.preparedQueries[key] {
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
        self.text = text
        self.arguments = resolved
        if database.preparedQueries[key] == nil {
            database.preparedQueries[key] = self
        }
    }

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        coffer_query_free(handle)
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
