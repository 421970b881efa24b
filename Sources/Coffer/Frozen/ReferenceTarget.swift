// _ReferenceTarget: what a ThreadSafeReference keeps of an object, results or
// collection — classes, keys, query texts and arguments, never a live object —
// so that another database on the same file can find it again.

internal import CCoffer

/// What a ``ThreadSafeReference`` keeps of the value it refers to; its parts
/// are internal to Coffer.
public struct _ReferenceTarget {
    /// An object by its class and key.
    struct ObjectAddress {
        let type: Object.Type
        let key: UInt64
    }

    /// Where the objects of referred ``Results`` come from.
    enum ResultsSource {
        case all
        /// The objects of a list, set or backlinks, as they were when the
        /// reference was made.
        case keys([UInt64])
    }

    enum Kind {
        case object(ObjectAddress)
        /// Results of `type`'s objects narrowed by queries: their texts and
        /// arguments, links naming their class (class ids differ between databases).
        case results(type: Object.Type, source: ResultsSource, queries: [(text: String, arguments: [StoredValue])],
                     linkClasses: [UInt32: String])
        /// The collection property at `property` of an object.
        case collection(owner: ObjectAddress, property: Int)
    }

    let kind: Kind
    /// The version the value was read at: a database behind it moves there
    /// before resolving, so that it sees what the sender saw.
    let version: UInt64
    /// The file (or in-memory identifier) it belongs to, for messages and checks.
    let file: String
    /// The type of the collection an ``AnyDatabaseCollection`` wraps, which
    /// resolves the reference for it.
    var erasedType: Any.Type?

    /// The target of a value of `database` read in its current transaction.
    init(_ kind: Kind, in database: Database) throws(CofferError) {
        if database.isFrozen {
            throw CofferError(.misuse, "a frozen value can be passed to other threads as it is (wrap it in Frozen for Sendable); ThreadSafeReference is for live values")
        }
        if database.isInWriteTransaction {
            throw CofferError(.misuse, "cannot make a ThreadSafeReference inside a write transaction: another thread cannot see what it has not committed")
        }
        self.kind = kind
        version = try Database.version(of: try database.currentTransaction())
        file = database.configuration.fileDescription
    }
}

extension Database.Configuration {
    /// The file path, or `in-memory 'name'`, naming the database in messages.
    var fileDescription: String {
        if let inMemoryIdentifier { return "in-memory '\(inMemoryIdentifier)'" }
        return (try? filePath()) ?? fileURL?.path ?? "?"
    }
}

extension Object {
    /// The address of this managed object; stops the program for an
    /// unmanaged or deleted one, naming the class and what was attempted.
    func referenceAddress(for action: String) -> (ManagedState, _ReferenceTarget.ObjectAddress) {
        guard let managed = managedState else {
            fatalError("Coffer: an unmanaged \(Self.className()) object cannot be \(action); add it to a Database first")
        }
        if isInvalidated {
            fatalError("Coffer: the \(Self.className()) object has been deleted or invalidated and cannot be \(action)")
        }
        return (managed, _ReferenceTarget.ObjectAddress(type: type(of: self), key: managed.key))
    }
}

extension Database {
    /// The managed state of the object at `address` in this database, or nil
    /// if it does not exist in the current snapshot.
    func existingState(_ address: _ReferenceTarget.ObjectAddress) throws(CofferError) -> ManagedState? {
        let state = ManagedState(database: self, binding: try binding(for: address.type), key: address.key)
        return state.exists ? state : nil
    }

    /// `value` with each link's class id (as `linkClasses` names it) replaced by
    /// this database's id of the class of that name.
    func relinked(_ value: StoredValue, _ linkClasses: [UInt32: String]) throws(CofferError) -> StoredValue {
        switch value {
        case .link(let classId, let key):
            var id: UInt32 = 0
            guard let name = linkClasses[classId], classExists(name, &id) else {
                throw CofferError(.notFound, "a query argument links to class '\(linkClasses[classId] ?? "?")', which this Database does not have")
            }
            return .link(classId: id, key: key)
        case .list(let items):
            var converted: [StoredValue] = []
            for item in items { converted.append(try relinked(item, linkClasses)) }
            return .list(converted)
        default:
            return value
        }
    }

    /// The names of the classes of the links in `values`, by class id.
    func linkClassNames(in values: [StoredValue]) -> [UInt32: String] {
        var names: [UInt32: String] = [:]
        func visit(_ value: StoredValue) {
            switch value {
            case .link(let classId, _):
                if let schema = coffer_db_class_schema(handle, classId) {
                    names[classId] = String(cString: schema.pointee.name)
                }
            case .list(let items):
                items.forEach(visit)
            default:
                break
            }
        }
        values.forEach(visit)
        return names
    }
}
