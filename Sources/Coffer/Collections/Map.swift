// Map: the dictionary property keyed by strings, its key-based operations on top
// of CollectionCore, and its _Persistable conformance.

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
///
/// ``AnyValue/dictionary(_:)`` holds a `Map<String, AnyValue>`: unmanaged when
/// made in memory, and the live map nested in a mixed value when read from a
/// managed object.
public final class Map<Key: _MapKey, Value: _Persistable>: Sequence {
    var core: CollectionCore<[String: Value]>

    /// An empty unmanaged map.
    public init() {
        core = CollectionCore([:], .map)
    }

    /// An unmanaged map of `values`.
    init(_ values: [String: Value]) {
        core = CollectionCore(values, .map)
    }

    init(_ location: CollectionLocation) {
        core = CollectionCore(location, .map)
    }

    /// The database managing this map, or nil while it is unmanaged.
    public var database: Database? { core.database }

    public var count: Int { core.count }

    public var isEmpty: Bool { count == 0 }

    /// The value under `key`, or nil; setting nil removes the key.
    public subscript(key: Key) -> Value? {
        get {
            let name = key._cofferKey
            return core.read(unmanaged: { $0[name] }, managed: { map, location in
                var found: Int32 = 0
                try CofferError.check(coffer_map_contains(map, name, name.utf8.count, &found))
                guard found != 0 else { return nil }
                var value = coffer_value()
                try CofferError.check(coffer_map_get(map, name, name.utf8.count, &value))
                let stored = try location.database.mapValue(map, name, value, shallow: Value._cofferReadsNestedAsViews)
                return location.decode(stored, as: Value.self, at: .key(name))
            })
        }
        set {
            guard let newValue else {
                removeObject(for: key)
                return
            }
            let name = key._cofferKey
            core.update("set a value of", unmanaged: { $0[name] = newValue }, managed: { map, location in
                try location.withCValue(of: newValue) { value in
                    try CofferError.check(coffer_map_set(map, name, name.utf8.count, &value))
                }
            })
        }
    }

    /// Removes `key` and its value, if present.
    public func removeObject(for key: Key) {
        let name = key._cofferKey
        core.update("remove a key of", unmanaged: { $0[name] = nil }, managed: { map, _ in
            try CofferError.check(coffer_map_remove(map, name, name.utf8.count, nil))
        })
    }

    /// Removes `key` and its value, if present (Realm's spelling).
    public func removeObject(forKey key: Key) {
        removeObject(for: key)
    }

    /// Removes every entry.
    public func removeAll() {
        core.removeAll()
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
        core.read(unmanaged: { values in
            values.keys.sorted().map { (Key(_cofferKey: $0), values[$0]!) }
        }, managed: { map, location in
            try location.database.entries(ofMap: map, shallow: Value._cofferReadsNestedAsViews).map { (Key(_cofferKey: $0.key), location.decode($0.value, as: Value.self, at: .key($0.key))) }
        })
    }

    var storedEntries: [(key: String, value: StoredValue)] {
        core.read(unmanaged: { values in
            values.keys.sorted().map { ($0, values[$0]!._cofferEncoded.value) }
        }, managed: { map, location in try location.database.entries(ofMap: map) })
    }

    /// Iterates a snapshot of the entries.
    public func makeIterator() -> IndexingIterator<[(key: Key, value: Value)]> {
        entries.makeIterator()
    }
}

extension Map: _Persistable {
    public static var _cofferKind: _ValueKind { Value._cofferKind.inside(.map) }
    public static var _cofferIsOptional: Bool { Value._cofferIsOptional }
    public static func _cofferDefaultValue() -> Map<Key, Value> { Map() }

    public static func _cofferDecode(_ stored: _StoredValue) -> Map<Key, Value>? {
        guard case .map(let entries) = stored.value else { return nil }
        var values: [String: Value] = [:]
        for entry in entries {
            guard let value = Value._cofferDecode(_StoredValue(value: entry.value)) else { return nil }
            values[entry.key] = value
        }
        return Map(values)
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
        return Map(values)
    }

    public var _cofferEncoded: _StoredValue {
        _StoredValue(value: .map(storedEntries))
    }

    public static func _cofferManagedView(_ property: _ManagedProperty) -> Map<Key, Value>? {
        Map(property.location)
    }
}
