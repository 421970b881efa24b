// MigrationObject: an old or new object during a migration, read and written by
// property name, and converting its values to and from the C core.

import Foundation
internal import CCoffer

/// An object during a migration, read and written by property name, as Realm's
/// `MigrationObject`: an old object (the file as it was, with the old schema,
/// read-only) or a new object (with the new schema).
///
/// ```swift
/// newObject!["fullName"] = "\(oldObject!["firstName"]!) \(oldObject!["lastName"]!)"
/// ```
///
/// Reading gives `Bool`, `Int`, `Float`, `Double`, `String`, `Data`, `Date`,
/// ``ObjectId``, `UUID`, ``Decimal128`` or nil; a link gives a `MigrationObject`
/// of the same side, a list or set `[Any?]`, a map `[String: Any?]`. Writing takes
/// the same (any integer type; an integer for a `Double` or `Float` property; a
/// new `MigrationObject` for a link; an array for a list or set, a dictionary for
/// a map; enums that adopt ``PersistableEnum`` as their raw value). An unknown
/// property, a write to an old object or a value that does not fit becomes the
/// migration's ``Migration/error``.
public final class MigrationObject {
    enum Side { case old, new }

    let migration: Migration
    let side: Side
    let classId: UInt32
    let key: UInt64

    init(migration: Migration, side: Side, classId: UInt32, key: UInt64) {
        self.migration = migration
        self.side = side
        self.classId = classId
        self.key = key
    }

    var database: OpaquePointer { side == .old ? migration.oldDatabase : migration.newDatabase }
    var transaction: OpaquePointer { side == .old ? migration.oldTransaction : migration.newTransaction }

    /// The object's class name.
    public var className: String {
        migration.requireRunning()
        guard let schema = coffer_db_class_schema(database, classId) else { return "" }
        return String(cString: schema.pointee.name)
    }

    /// The value of property `key`, or nil (also after a failure).
    public subscript(key: String) -> Any? {
        get {
            migration.record { () throws(CofferError) -> Any? in
                let property = try propertyId(key)
                let object = try handle()
                defer { coffer_object_release(object) }
                var value = coffer_value()
                try CofferError.check(coffer_object_get_value(object, property, &value))
                return try MigrationValues.read(value, in: self) { kind throws(CofferError) in
                    try CCollectionReading.open(kind, object: object, property: property)
                }
            } ?? nil
        }
        set {
            migration.record { () throws(CofferError) in
                guard side == .new else {
                    throw CofferError(.readOnly, "property '\(className).\(key)' of an old object cannot be written; write the new object")
                }
                let property = try propertyId(key)
                let arena = ValueArena()
                var value = try MigrationValues.cValue(newValue as Any, classId: classId, property: property, in: migration, arena: arena)
                let object = try handle()
                defer { coffer_object_release(object) }
                try CofferError.check(coffer_object_set_value(object, property, &value))
            }
        }
    }

    /// The C handle of the object, which the caller releases.
    func handle() throws(CofferError) -> OpaquePointer {
        if classId == UInt32.max {
            throw CofferError(.notFound, "the object was never created")
        }
        var object: OpaquePointer?
        try CofferError.check(coffer_object_get(transaction, classId, key, &object))
        return object!
    }

    private func propertyId(_ name: String) throws(CofferError) -> UInt32 {
        var property: coffer_property_id = 0
        try CofferError.check(coffer_db_find_property(database, classId, name, &property))
        return property
    }
}

/// Values between Swift and the C core inside a migration, where classes are
/// known only by their stored schema.
enum MigrationValues {
    /// The Swift value of `value`; `open` opens the collection it stands for.
    static func read(_ value: coffer_value, in owner: MigrationObject, open: CollectionOpener) throws(CofferError) -> Any? {
        let readNested = { (element: coffer_value, open: CollectionOpener) throws(CofferError) -> Any? in
            try read(element, in: owner, open: open)
        }
        switch value.type {
        case COFFER_TYPE_LINK:
            guard value.u.link.class_id != UInt32.max else { return nil }
            return MigrationObject(migration: owner.migration, side: owner.side, classId: value.u.link.class_id, key: value.u.link.key)
        case COFFER_TYPE_LIST:
            let list = try open(.list)
            defer { coffer_list_release(list) }
            return try CCollectionReading.elements(ofList: list, readNested)
        case COFFER_TYPE_SET:
            let set = try open(.set)
            defer { coffer_set_release(set) }
            return try CCollectionReading.elements(ofSet: set, readNested)
        case COFFER_TYPE_MAP:
            let map = try open(.map)
            defer { coffer_map_release(map) }
            var entries: [String: Any?] = [:]
            for entry in try CCollectionReading.entries(ofMap: map, readNested) {
                entries[entry.key] = entry.value
            }
            return entries
        default:
            return plain(StoredValue(copying: value))
        }
    }

    private static func plain(_ value: StoredValue) -> Any? {
        switch value {
        case .bool(let v): v
        case .int(let v): Int(v)
        case .float(let v): v
        case .double(let v): v
        case .string(let v): v
        case .data(let v): v
        case .date(let v): v
        case .objectId(let v): v
        case .uuid(let v): v
        case .decimal128(let v): v
        default: nil
        }
    }

    /// Fields for a new object of class `classId` of the new schema.
    static func fields(_ value: Any, classId: UInt32, in migration: Migration, arena: ValueArena) throws(CofferError) -> [coffer_field] {
        let db = migration.newDatabase
        guard let schema = coffer_db_class_schema(db, classId) else {
            throw CofferError(.notFound, "no class \(classId) in the new schema")
        }
        let className = String(cString: schema.pointee.name)
        var fields: [coffer_field] = []
        if let dictionary = value as? [String: Any] {
            for (name, element) in dictionary {
                var property: coffer_property_id = 0
                try CofferError.check(coffer_db_find_property(db, classId, name, &property))
                fields.append(coffer_field(property: property, value: try cValue(element, classId: classId, property: property, in: migration, arena: arena)))
            }
        } else if let array = value as? [Any] {
            let count = schema.pointee.property_count
            guard array.count == count else {
                throw CofferError(.invalidArgument, "class '\(className)' has \(count) properties, but the array given has \(array.count) values")
            }
            for (index, element) in array.enumerated() {
                let property = UInt32(index)
                fields.append(coffer_field(property: property, value: try cValue(element, classId: classId, property: property, in: migration, arena: arena)))
            }
        } else {
            throw CofferError(.invalidArgument, "class '\(className)' cannot take its values from a \(type(of: value)); give a dictionary or an array")
        }
        return fields
    }

    /// The C form of `value` for property `property` of class `classId` (new schema).
    static func cValue(_ value: Any, classId: UInt32, property: UInt32, in migration: Migration,
                       arena: ValueArena) throws(CofferError) -> coffer_value {
        guard let schema = coffer_db_class_schema(migration.newDatabase, classId) else {
            throw CofferError(.notFound, "no class \(classId) in the new schema")
        }
        let spec = schema.pointee.properties[Int(property)]
        let where_ = "property '\(String(cString: schema.pointee.name)).\(String(cString: spec.name))'"
        let stored = try storedValue(value, type: spec.type, collection: spec.collection, where: where_)
        return try arena.cValue(stored)
    }

    private static func storedValue(_ value: Any, type: coffer_type, collection: UInt32, where place: String) throws(CofferError) -> StoredValue {
        guard let unwrapped = unwrapAny(value) else { return .null }
        if collection != UInt32(COFFER_COLLECTION_NONE) || type == COFFER_TYPE_MIXED {
            if let array = unwrapped as? [Any] {
                var items: [StoredValue] = []
                for item in array {
                    items.append(try storedValue(item, type: type, collection: 0, where: place))
                }
                return collection == UInt32(COFFER_COLLECTION_SET) ? .set(items) : .list(items)
            }
            if let dictionary = unwrapped as? [String: Any] {
                var entries: [(key: String, value: StoredValue)] = []
                for (key, item) in dictionary.sorted(by: { $0.key < $1.key }) {
                    entries.append((key, try storedValue(item, type: type, collection: 0, where: place)))
                }
                return .map(entries)
            }
        }
        if let object = unwrapped as? MigrationObject {
            guard object.side == .new else {
                throw CofferError(.type, "\(place) cannot link to an old object of class '\(object.className)'; link to its new object")
            }
            return .link(classId: object.classId, key: object.key)
        }
        let stored: StoredValue
        switch unwrapped {
        case let v as Bool: stored = .bool(v)
        case let v as any BinaryInteger:
            guard let int = Int64(exactly: v) else {
                throw CofferError(.type, "\(place): the integer \(v) does not fit in 64 bits")
            }
            if type == COFFER_TYPE_DOUBLE { return .double(Double(int)) }
            if type == COFFER_TYPE_FLOAT { return .float(Float(int)) }
            stored = .int(int)
        case let v as Float: stored = .float(v)
        case let v as Double: stored = type == COFFER_TYPE_FLOAT ? .float(Float(v)) : .double(v)
        case let v as String: stored = .string(v)
        case let v as Data: stored = .data(v)
        case let v as Date: stored = .date(v)
        case let v as ObjectId: stored = .objectId(v)
        case let v as UUID: stored = .uuid(v)
        case let v as Decimal128: stored = .decimal128(v)
        case let v as AnyValue: stored = v._cofferEncoded.value
        case let v as any _Persistable: stored = v._cofferEncoded.value
        default:
            throw CofferError(.type, "\(place) cannot hold a value of type \(Swift.type(of: unwrapped))")
        }
        return stored
    }
}
