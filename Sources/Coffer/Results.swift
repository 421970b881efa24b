internal import CCoffer

/// The objects of one class, as a live, lazy collection.
///
/// `Results` reads the database when it is used, not when it is made: `count` is
/// constant-time, and the object keys are listed on the first subscript or loop
/// and listed again whenever the database's snapshot changes or objects are added
/// or deleted through it. Objects come in creation order. A `for` loop runs over
/// the objects present when it starts, so deleting inside it is safe.
///
/// ```swift
/// let dogs = db.objects(Dog.self)
/// for dog in dogs { print(dog.name) }
/// let first = dogs.first
/// ```
///
/// Filtering, sorting and aggregates come with the query language of the C core.
/// `Results` is not `Sendable`: it belongs to its database's thread.
public struct Results<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    /// The database the objects are read from.
    public let database: Database
    let binding: ClassBinding
    private let cache = KeyCache()

    init(database: Database, binding: ClassBinding) {
        self.database = database
        self.binding = binding
    }

    /// Positions are 0 up to ``count``.
    public typealias Index = Int

    /// Always 0.
    public var startIndex: Int { 0 }

    /// Same as ``count``.
    public var endIndex: Int { count }

    /// The number of objects, in constant time.
    public var count: Int {
        do {
            let txn = try database.currentTransaction()
            if let keys = cache.keys(at: database.contentVersion) {
                return keys.count
            }
            var count: UInt64 = 0
            try CofferError.check(coffer_class_count(txn, binding.classId, &count))
            return Int(count)
        } catch {
            database.fail(error)
        }
    }

    /// The object at `position`; stops the program if it is out of range.
    public subscript(position: Int) -> Element {
        let keys = currentKeys()
        precondition(keys.indices.contains(position),
                     "Coffer: index \(position) is out of range for Results<\(Element.self)> of \(keys.count) objects")
        return database.makeObject(Element.self, binding, keys[position])
    }

    /// An iterator over the objects present now.
    public func makeIterator() -> Iterator {
        Iterator(database: database, binding: binding, keys: currentKeys())
    }

    /// Iterates over the objects a ``Results`` had when the loop began.
    public struct Iterator: IteratorProtocol {
        let database: Database
        let binding: ClassBinding
        let keys: [UInt64]
        var position = 0

        /// The next object, or nil after the last.
        public mutating func next() -> Element? {
            guard position < keys.count else { return nil }
            defer { position += 1 }
            return database.makeObject(Element.self, binding, keys[position])
        }
    }

    /// `Results<Dog>(3 objects)`.
    public var description: String {
        "Results<\(Element.self)>(\(count) objects)"
    }

    private func currentKeys() -> [UInt64] {
        do {
            let txn = try database.currentTransaction()
            if let keys = cache.keys(at: database.contentVersion) {
                return keys
            }
            var iterator: OpaquePointer?
            try CofferError.check(coffer_class_iterate(txn, binding.classId, &iterator))
            defer { coffer_iter_free(iterator) }
            var keys: [UInt64] = []
            var object: OpaquePointer?
            while true {
                let status = coffer_iter_next(iterator, &object)
                if status == COFFER_DONE { break }
                try CofferError.check(status)
                keys.append(coffer_object_key_of(object))
            }
            cache.store(keys, at: database.contentVersion)
            return keys
        } catch {
            database.fail(error)
        }
    }
}

/// The object keys a ``Results`` listed, and the database content version they belong to.
final class KeyCache {
    private var version: UInt64 = 0
    private var cached: [UInt64]?

    func keys(at version: UInt64) -> [UInt64]? {
        version == self.version ? cached : nil
    }

    func store(_ keys: [UInt64], at version: UInt64) {
        self.version = version
        cached = keys
    }
}
