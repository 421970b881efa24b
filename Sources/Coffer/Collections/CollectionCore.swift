// The storage plumbing that List, MutableSet and Map share: their contents in
// memory until the owning object is added, then a location in the database;
// opening the C collection in the current transaction (with the owner's thread
// and deletion checks), counting, clearing, index checks, and the one switch
// between the unmanaged and the managed form that every operation goes through.

internal import CCoffer

/// The C functions of one kind of collection handle.
struct CollectionFunctions: Sendable {
    /// `the list`, naming an unmanaged collection in messages.
    let noun: String
    /// `.list`, `.set` or `.map`.
    let kind: CollectionKind
    let open: @Sendable (OpaquePointer?, UInt32, UnsafeMutablePointer<OpaquePointer?>?) -> coffer_status
    let release: @Sendable (OpaquePointer?) -> Void
    let count: @Sendable (OpaquePointer?, UnsafeMutablePointer<UInt64>?) -> coffer_status
    let clear: @Sendable (OpaquePointer?) -> coffer_status

    static let list = CollectionFunctions(
        noun: "the list", kind: .list, open: coffer_object_get_list, release: coffer_list_release,
        count: coffer_list_count, clear: coffer_list_clear)
    static let set = CollectionFunctions(
        noun: "the set", kind: .set, open: coffer_object_get_set, release: coffer_set_release,
        count: coffer_set_count, clear: coffer_set_clear)
    static let map = CollectionFunctions(
        noun: "the map", kind: .map, open: coffer_object_get_map, release: coffer_map_release,
        count: coffer_map_count, clear: coffer_map_clear)
}

/// What an unmanaged collection keeps in memory: an array or a dictionary.
protocol InMemoryContents: Collection {
    mutating func removeAll(keepingCapacity: Bool)
}

extension Array: InMemoryContents {}
extension Dictionary: InMemoryContents {}

/// The contents of a collection property, in memory or in the database.
struct CollectionCore<Contents: InMemoryContents> {
    private enum Storage {
        case unmanaged(Contents)
        case managed(CollectionLocation)
    }

    private var storage: Storage
    let functions: CollectionFunctions

    init(_ contents: Contents, _ functions: CollectionFunctions) {
        storage = .unmanaged(contents)
        self.functions = functions
    }

    init(_ location: CollectionLocation, _ functions: CollectionFunctions) {
        storage = .managed(location)
        self.functions = functions
    }

    /// Where a managed collection lives; nil while it is unmanaged.
    var location: CollectionLocation? {
        if case .managed(let location) = storage { return location }
        return nil
    }

    /// The database managing the collection, or nil while it is unmanaged.
    var database: Database? { location?.database }

    var count: Int {
        read(unmanaged: \.count, managed: { handle, _ in try managedCount(handle) })
    }

    /// Runs `body` on the handle of the managed collection at `location`;
    /// `action` names a write, nil for reads.
    func withHandle<Result>(_ location: CollectionLocation, _ action: String?,
                            _ body: (OpaquePointer) throws -> Result) -> Result {
        location.withCollection(action, kind: functions.kind, open: functions.open, release: functions.release, body)
    }

    /// `unmanaged` on the contents in memory, or `managed` on the opened
    /// collection, after checking that every index in `indices` is in range.
    func read<Result>(checking indices: [Int] = [],
                      unmanaged: (Contents) -> Result,
                      managed: (OpaquePointer, CollectionLocation) throws -> Result) -> Result {
        switch storage {
        case .unmanaged(let contents):
            checkIndices(indices, contents.count, in: functions.noun, allowingEnd: false)
            return unmanaged(contents)
        case .managed(let location):
            return withHandle(location, nil) { handle in
                try checkManagedIndices(indices, handle, location, allowingEnd: false)
                return try managed(handle, location)
            }
        }
    }

    /// `unmanaged` on the contents in memory, or `managed` on the collection
    /// opened for the write `action` names (outside a write transaction the
    /// program stops), after checking that every index in `indices` is in
    /// range (`allowingEnd`: also `count`, an insertion point).
    mutating func update(_ action: String, checking indices: [Int] = [], allowingEnd: Bool = false,
                         unmanaged: (inout Contents) -> Void,
                         managed: (OpaquePointer, CollectionLocation) throws -> Void) {
        switch storage {
        case .unmanaged(var contents):
            checkIndices(indices, contents.count, in: functions.noun, allowingEnd: allowingEnd)
            unmanaged(&contents)
            storage = .unmanaged(contents)
        case .managed(let location):
            withHandle(location, action) { handle in
                try checkManagedIndices(indices, handle, location, allowingEnd: allowingEnd)
                try managed(handle, location)
            }
        }
    }

    /// Removes every element.
    mutating func removeAll() {
        let clear = functions.clear
        update("clear", unmanaged: { $0.removeAll(keepingCapacity: false) },
               managed: { handle, _ in try CofferError.check(clear(handle)) })
    }

    private func managedCount(_ handle: OpaquePointer) throws(CofferError) -> Int {
        var count: UInt64 = 0
        try CofferError.check(functions.count(handle, &count))
        return Int(count)
    }

    private func checkManagedIndices(_ indices: [Int], _ handle: OpaquePointer, _ location: CollectionLocation,
                                     allowingEnd: Bool) throws(CofferError) {
        guard !indices.isEmpty else { return }
        checkIndices(indices, try managedCount(handle), in: location.name, allowingEnd: allowingEnd)
    }
}

extension CollectionCore {
    /// Reads the elements of a list or set whole: in memory as they are, from
    /// the database as decoded values of `Element`.
    func elements<Element: _Persistable>(
        reading storedElements: (Database, OpaquePointer) throws(CofferError) -> [StoredValue]
    ) -> [Element] where Contents == [Element] {
        read(unmanaged: { $0 }, managed: { handle, location in
            let step: (Int) -> CollectionStep? = functions.kind == .list ? { .index($0) } : { _ in nil }
            return try storedElements(location.database, handle).enumerated().map {
                location.decode($0.element, as: Element.self, at: step($0.offset))
            }
        })
    }

    /// The elements of a list or set as stored, read in one pass.
    func storedElements<Element: _Persistable>(
        reading storedElements: (Database, OpaquePointer) throws(CofferError) -> [StoredValue]
    ) -> [StoredValue] where Contents == [Element] {
        read(unmanaged: { $0.map { $0._cofferEncoded.value } },
             managed: { handle, location in try storedElements(location.database, handle) })
    }

    /// The keys of the objects a managed list or set links to, in its order;
    /// `get` reads the element at a position.
    func objectKeys(at location: CollectionLocation,
                    get: (OpaquePointer?, UInt64, UnsafeMutablePointer<coffer_value>?) -> coffer_status) -> [UInt64] {
        withHandle(location, nil) { handle in
            let count = try managedCount(handle)
            var keys: [UInt64] = []
            keys.reserveCapacity(count)
            for index in 0..<UInt64(count) {
                var value = coffer_value()
                try CofferError.check(get(handle, index, &value))
                keys.append(value.u.link.key)
            }
            return keys
        }
    }
}

extension _ValueKind {
    /// The kind of a collection property of elements of this kind.
    func inside(_ collection: CollectionKind) -> _ValueKind {
        var kind = self
        kind.collection = collection
        return kind
    }
}

/// Stops the program with an index-out-of-range message naming the collection.
func checkIndex(_ index: Int, _ count: Int, in name: String, allowingEnd: Bool = false) {
    let limit = allowingEnd ? count : count - 1
    if index < 0 || index > limit {
        fatalError("Coffer: index \(index) is out of range for \(name), which has \(count) elements")
    }
}

/// ``checkIndex(_:_:in:allowingEnd:)`` for each index, in order.
func checkIndices(_ indices: [Int], _ count: Int, in name: String, allowingEnd: Bool) {
    for index in indices {
        checkIndex(index, count, in: name, allowingEnd: allowingEnd)
    }
}
