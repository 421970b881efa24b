// ObjectChange and PropertyChange: what an object observer is told, and the
// changed properties copied out of the C change set.

internal import CCoffer

/// A change of an observed object, as Realm's `ObjectChange`.
///
/// ```swift
/// let token = dog.observe { change in
///     switch change {
///     case .change(let dog, let properties):
///         for property in properties {
///             print("\(property.name): \(property.oldValue ?? "nil") -> \(property.newValue ?? "nil")")
///         }
///     case .deleted:
///         print("\(dog) was deleted")
///     case .error(let error):
///         print(error)
///     }
/// }
/// ```
public enum ObjectChange<T> {
    /// Observing could not begin (an unknown key path, an object deleted
    /// before); no call follows.
    case error(Error)
    /// Properties of the object changed, in schema order.
    case change(T, [PropertyChange])
    /// The object was deleted: the last call.
    case deleted
}

/// One changed property of an observed object, as Realm's `PropertyChange`.
public struct PropertyChange {
    /// The property's Swift name.
    public let name: String
    /// The value before the change: a Swift value of the property's type (an
    /// object for a link); nil for nil, and for list, set and map properties,
    /// whose elements are observed on the collection itself.
    public let oldValue: Any?
    /// The value after the change, as ``oldValue``.
    public let newValue: Any?
}

/// The changed properties of one object change set, copied from the C core
/// during its callback: plain values and links, never objects, so that it
/// can go to another thread.
struct ObjectChangeRecord: @unchecked Sendable {
    // @unchecked: StoredValue can hold an Object, but values copied here are
    // only plain values and links (.link), and the record is never changed.
    struct Property {
        let id: UInt32
        let old: StoredValue
        let new: StoredValue
    }

    let deleted: Bool
    let properties: [Property]

    /// Copies `changes`, borrowed for the duration of a callback.
    init(copying changes: OpaquePointer) {
        deleted = coffer_object_changes_deleted(changes) != 0
        var properties: [Property] = []
        for i in 0..<coffer_object_changes_count(changes) {
            var id: UInt32 = 0
            var old = coffer_value()
            var new = coffer_value()
            guard coffer_object_changes_property(changes, i, &id, &old, &new) == COFFER_OK else { continue }
            properties.append(Property(id: id, old: Self.copy(old), new: Self.copy(new)))
        }
        self.properties = properties
    }

    private static func copy(_ value: coffer_value) -> StoredValue {
        if value.type == COFFER_TYPE_LINK {
            return .link(classId: value.u.link.class_id, key: value.u.link.key)
        }
        return StoredValue(copying: value)
    }

    /// The changes as Realm reports them, their values read in `database`
    /// (links become its objects).
    func propertyChanges(_ binding: ClassBinding, in database: Database) -> [PropertyChange] {
        properties.compactMap { property in
            guard let index = binding.propertyIds.firstIndex(of: property.id) else { return nil }
            let schema = binding.schema.properties[index]
            return PropertyChange(name: schema.name, oldValue: Self.swiftValue(property.old, schema, database),
                                  newValue: Self.swiftValue(property.new, schema, database))
        }
    }

    private static func swiftValue(_ stored: StoredValue, _ schema: PropertySchema, _ database: Database) -> Any? {
        guard schema.collection == .none else { return nil }
        switch stored {
        case .null:
            return nil
        case .link(let classId, let key):
            let access = database.frozenAccess(); defer { access?.unlock() }
            return try? database.linkedObject(classId: classId, key: key)
        default:
            return schema.valueType._cofferDecode(_StoredValue(value: stored)).flatMap(unwrapOptional)
        }
    }

    /// `Optional(3)` as `3`, so that a property of type `Int?` reads as `Int`.
    private static func unwrapOptional(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.map { unwrapOptional($0.value) } ?? nil
    }
}

extension ObjectChange {
    /// The change `raw` reports for `object`; nil for the initial call, which
    /// Realm's object observers do not get, and for other kinds.
    init?(_ raw: RawChange, _ object: T?, _ binding: ClassBinding, in database: Database?) {
        switch raw {
        case .object(let record) where record.deleted:
            self = .deleted
        case .object(let record):
            guard let object, let database else { return nil }
            let changes = record.propertyChanges(binding, in: database)
            guard !changes.isEmpty else { return nil }
            self = .change(object, changes)
        case .error(let error):
            self = .error(error)
        case .initial, .collection, .map, .database:
            return nil
        }
    }
}
