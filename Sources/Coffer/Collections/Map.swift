internal import CCoffer

/// A key type of ``Map``: `String`, as in Realm.
public protocol _MapKey: Hashable {
    var _cofferKey: String { get }
    init(_cofferKey: String)
}

extension String: _MapKey {
    public var _cofferKey: String { self }
    public init(_cofferKey: String) { self = _cofferKey }
}

/// A dictionary property from strings: `@Persisted var scores: Map<String, Int>`.
///
/// Values are any type a ``Persisted`` property stores, or optional links
/// (`Map<String, Dog?>`; a value becomes nil when its object is deleted). Keys
/// are non-empty, without `.` and not starting with `$`. A managed map iterates
/// in byte order of its keys on a plain file and in a stable, unspecified order
/// on an encrypted one; an unmanaged map in key order. Changes to a managed map
/// need a write transaction (outside one, or with a bad key, the program stops
/// with a message naming the key, as in Realm).
public final class Map<Key: _MapKey, Value: _Persistable>: Sequence {
    private enum Storage {
        case unmanaged([String: Value])
        case managed(CollectionLocation)
    }

    private var storage: Storage

    /// An empty unmanaged map.
    public init() {
        storage = .unmanaged([:])
    }

    init(_ location: CollectionLocation) {
        storage = .managed(location)
    }

    /// The database managing this map, or nil while it is unmanaged.
    public var database: Database? {
        if case .managed(let location) = storage { return location.database }
        return nil
    }

    public var count: Int {
        switch storage {
        case .unmanaged(let values):
            return values.count
        case .managed(let location):
            return location.withMap(nil) { map in
                var count: UInt64 = 0
                try CofferError.check(coffer_map_count(map, &count))
                return Int(count)
            }
        }
    }

    public var isEmpty: Bool { count == 0 }

    /// The value under `key`, or nil; setting nil removes the key.
    public subscript(key: Key) -> Value? {
        get {
            let name = key._cofferKey
            switch storage {
            case .unmanaged(let values):
                return values[name]
            case .managed(let location):
                let stored: StoredValue? = location.withMap(nil) { map in
                    var found: Int32 = 0
                    try CofferError.check(coffer_map_contains(map, name, name.utf8.count, &found))
                    guard found != 0 else { return nil }
                    var value = coffer_value()
                    try CofferError.check(coffer_map_get(map, name, name.utf8.count, &value))
                    return try location.database.mapValue(map, name, value)
                }
                return stored.map { location.decode($0, as: Value.self) }
            }
        }
        set {
            guard let newValue else {
                removeObject(for: key)
                return
            }
            let name = key._cofferKey
            switch storage {
            case .unmanaged(var values):
                values[name] = newValue
                storage = .unmanaged(values)
            case .managed(let location):
                location.withMap("set a value of") { map in
                    let arena = ValueArena()
                    var value = try location.cValue(newValue._cofferEncoded.value, arena)
                    try CofferError.check(coffer_map_set(map, name, name.utf8.count, &value))
                }
            }
        }
    }

    /// Removes `key` and its value, if present.
    public func removeObject(for key: Key) {
        let name = key._cofferKey
        switch storage {
        case .unmanaged(var values):
            values[name] = nil
            storage = .unmanaged(values)
        case .managed(let location):
            location.withMap("remove a key of") { map in
                try CofferError.check(coffer_map_remove(map, name, name.utf8.count, nil))
            }
        }
    }

    /// Removes `key` and its value, if present (Realm's spelling).
    public func removeObject(forKey key: Key) {
        removeObject(for: key)
    }

    /// Removes every entry.
    public func removeAll() {
        switch storage {
        case .unmanaged:
            storage = .unmanaged([:])
        case .managed(let location):
            location.withMap("clear") { map in
                try CofferError.check(coffer_map_clear(map))
            }
        }
    }

    /// The keys, in iteration order.
    public var keys: [Key] {
        entries.map(\.key)
    }

    /// The values, in the order of ``keys``.
    public var values: [Value] {
        entries.map(\.value)
    }

    /// Every entry, in iteration order, read in one pass.
    private var entries: [(key: Key, value: Value)] {
        switch storage {
        case .unmanaged(let values):
            return values.keys.sorted().map { (Key(_cofferKey: $0), values[$0]!) }
        case .managed(let location):
            return storedEntries.map { (Key(_cofferKey: $0.key), location.decode($0.value, as: Value.self)) }
        }
    }

    var storedEntries: [(key: String, value: StoredValue)] {
        switch storage {
        case .unmanaged(let values):
            return values.keys.sorted().map { ($0, values[$0]!._cofferEncoded.value) }
        case .managed(let location):
            return location.withMap(nil) { map in try location.database.entries(ofMap: map) }
        }
    }

    /// Iterates a snapshot of the entries.
    public func makeIterator() -> IndexingIterator<[(key: Key, value: Value)]> {
        entries.makeIterator()
    }
}

extension Map: _Persistable {
    public static var _cofferKind: _ValueKind {
        var kind = Value._cofferKind
        kind.collection = .map
        return kind
    }
    public static var _cofferIsOptional: Bool { Value._cofferIsOptional }
    public static func _cofferDefaultValue() -> Map<Key, Value> { Map() }

    public static func _cofferDecode(_ stored: _StoredValue) -> Map<Key, Value>? {
        guard case .map(let entries) = stored.value else { return nil }
        var values: [String: Value] = [:]
        for entry in entries {
            guard let value = Value._cofferDecode(_StoredValue(value: entry.value)) else { return nil }
            values[entry.key] = value
        }
        let map = Map()
        map.storage = .unmanaged(values)
        return map
    }

    /// Another map or a dictionary `[String: Any]` whose values fit.
    public static func _cofferCast(_ value: Any) -> Map<Key, Value>? {
        if let map = value as? Map<Key, Value> {
            return _cofferDecode(map._cofferEncoded)
        }
        guard let dictionary = value as? [String: Any] else { return nil }
        var values: [String: Value] = [:]
        for (key, item) in dictionary {
            guard let cast = Value._cofferCast(item) else { return nil }
            values[key] = cast
        }
        let map = Map()
        map.storage = .unmanaged(values)
        return map
    }

    public var _cofferEncoded: _StoredValue {
        _StoredValue(value: .map(storedEntries))
    }

    public static func _cofferManagedView(_ property: _ManagedProperty) -> Map<Key, Value>? {
        Map(CollectionLocation(owner: property.owner, index: property.index))
    }
}
