// Results: a live, lazy collection of objects of one class, its sources and
// snapshots.

internal import CCoffer

/// Objects of one class, as a live, lazy collection: every object of the class,
/// or the objects of a ``List`` or ``LinkingObjects``, narrowed and ordered by
/// queries. `Results` of a ``Projection`` class hold a projection of each object.
/// `Results` of values (`Results<Int>`) are the values of a ``List`` seen
/// sorted or distinct, as Realm's: `let ages: Results<Int> = dog.ages.sorted()`.
///
/// `Results` reads the database when it is used, not when it is made. Its
/// queries run in the C core on the database's current snapshot the first time
/// the results are counted, indexed or looped over, and run again whenever that
/// snapshot changes or the database is written through (objects added, changed
/// or deleted), so results always match the data they are read with. Without
/// a sort, objects come in creation order (a list's in list order). A `for`
/// loop runs over the objects present when it starts, so deleting inside it
/// is safe.
///
/// ```swift
/// let dogs = db.objects(Dog.self)
/// let puppies = dogs.where { $0.age < 2 }.sorted(by: \.name)
/// let rexes = dogs.filter("name BEGINSWITH[c] %@", "rex")
/// for dog in puppies { print(dog.name) }
/// let oldest: Int? = puppies.max(of: \.age)
/// ```
///
/// `Results` is not `Sendable`: it belongs to its database's thread.
public struct Results<Element: _ResultsContent>: RandomAccessCollection, CustomStringConvertible {
    /// The database the objects are read from (`database`); nil for the
    /// values of an unmanaged list.
    let storedDatabase: Database?
    /// The class of the objects (`binding`); nil for results of values.
    let storedBinding: ClassBinding?
    let source: ResultsSource
    /// Applied in order to the source's objects.
    let queries: [CompiledQuery]
    /// The list, set or linking objects property the source reads, for
    /// observing these results as that collection seen through their
    /// queries; nil for other sources.
    let observedList: CollectionLocation?
    /// The values read, for results of values; nil for results of objects.
    let valueSource: ResultsValueSource<Element>?
    private let cache = ResultsCache()

    init(database: Database, binding: ClassBinding, source: ResultsSource = .all, queries: [CompiledQuery] = [],
         observedList: CollectionLocation? = nil) {
        self.storedDatabase = database
        self.storedBinding = binding
        self.source = source
        self.queries = queries
        self.observedList = observedList
        self.valueSource = nil
    }

    /// Results of values, reading `values`.
    init(values: ResultsValueSource<Element>) {
        storedDatabase = values.database
        storedBinding = nil
        source = .all
        queries = []
        observedList = nil
        valueSource = values
    }

    /// The database of results of objects.
    private var objectDatabase: Database { storedDatabase! }

    /// The class of results of objects.
    var binding: ClassBinding { storedBinding! }

    /// Positions are 0 up to ``count``.
    public typealias Index = Int

    /// Always 0.
    public var startIndex: Int { 0 }

    /// Same as ``count``.
    public var endIndex: Int { count }

    /// The number of objects; constant-time for every object of a class.
    public var count: Int {
        if let valueSource { return valueSource.count() }
        let database = objectDatabase
        let access = database.frozenAccess(); defer { access?.unlock() }
        do {
            if case .all = source, queries.isEmpty {
                let txn = try database.currentTransaction()
                var count: UInt64 = 0
                try CofferError.check(coffer_class_count(txn, binding.classId, &count))
                return Int(count)
            }
            if let keys = cache.keys(at: database.contentVersion) {
                return keys.count
            }
            if case .all = source, queries.count == 1, database.writeTransaction == nil,
               cache.results(at: database.contentVersion) == nil,
               let count = try queries[0].countRebound(try database.currentTransaction()) {
                // A prepared query with new arguments, counted without results
                // (in read transactions: see CompiledQuery.countRebound).
                return count
            }
            var count: UInt64 = 0
            try CofferError.check(coffer_results_count(try currentResults(), &count))
            return Int(count)
        } catch {
            database.fail(error)
        }
    }

    /// The object at `position`; stops the program if it is out of range.
    public subscript(position: Int) -> Element {
        if let valueSource { return valueSource.element(position) }
        let database = objectDatabase
        let keys = currentKeys()
        precondition(keys.indices.contains(position),
                     "Coffer: index \(position) is out of range for Results<\(Element.self)> of \(keys.count) objects")
        return database.makeElement(Element.self, binding, keys[position])
    }

    /// An iterator over the objects present now.
    public func makeIterator() -> Iterator {
        if let valueSource { return Iterator(values: valueSource.elements()) }
        return Iterator(database: objectDatabase, binding: binding, keys: currentKeys())
    }

    /// Iterates over the objects a ``Results`` had when the loop began. The
    /// objects' values are read a page at a time (one C call per page, when
    /// the loop reaches it); a property is decoded when it is read.
    public struct Iterator: IteratorProtocol {
        let database: Database!
        let binding: ClassBinding!
        let keys: [UInt64]
        /// The values, for results of values.
        private let values: [Element]?
        var position = 0
        private var page: PackedPage?
        private var pageStart = 0
        private var pageEnd = 0

        init(database: Database, binding: ClassBinding, keys: [UInt64]) {
            self.database = database
            self.binding = binding
            self.keys = keys
            self.values = nil
        }

        init(values: [Element]) {
            database = nil
            binding = nil
            keys = []
            self.values = values
        }

        /// The next object (or value), or nil after the last.
        public mutating func next() -> Element? {
            if let values {
                guard position < values.count else { return nil }
                defer { position += 1 }
                return values[position]
            }
            guard position < keys.count else { return nil }
            defer { position += 1 }
            if position >= pageEnd || !(page?.isCurrent(in: database) ?? false) {
                readPage()
            }
            guard let page, page.exists(row: position - pageStart) else {
                return database.makeElement(Element.self, binding, keys[position])
            }
            return database.makeElement(Element.self, binding, keys[position], page: page, row: position - pageStart)
        }

        /// Packs the objects from `position` on, in the current transaction;
        /// none when that fails (the objects then read one by one, and report
        /// the failure themselves).
        private mutating func readPage() {
            let access = database.frozenAccess(); defer { access?.unlock() }
            pageStart = position
            pageEnd = Swift.min(keys.count, position + Iterator.pageSize)
            page = try? keys[pageStart..<pageEnd].withUnsafeBufferPointer { keys throws(CofferError) in
                let txn = try database.currentTransaction()
                var results: OpaquePointer?
                try CofferError.check(coffer_results_from_keys(txn, binding.classId, keys.baseAddress, keys.count, &results))
                defer { coffer_results_free(results) }
                return try PackedPage.read(results!, start: 0, count: keys.count, binding: binding, database: database)
            }
        }

        /// Objects per page.
        static var pageSize: Int { 256 }
    }

    /// `Results<Dog>(3 objects)`; results of values show them: `Results<Int>[1, 2, 3]`.
    public var description: String {
        if let valueSource { return "Results<\(Element.self)>\(valueSource.elements())" }
        return "Results<\(Element.self)>(\(count) objects)"
    }

    /// What `body` returns; its error stops the program, for the calls that do
    /// not throw, as in Realm.
    func trapping<T>(_ body: () throws -> T) -> T {
        do {
            return try body()
        } catch {
            objectDatabase.fail(error)
        }
    }

    /// The C results for the current snapshot, computed once per snapshot and write.
    func currentResults() throws(CofferError) -> OpaquePointer {
        let database = objectDatabase
        let txn = try database.currentTransaction()
        let version = database.contentVersion
        if let cached = cache.results(at: version) {
            return cached
        }
        var results: OpaquePointer?
        var filters = queries[...]
        switch source {
        case .all:
            if let first = filters.popFirst() {
                // Run, not filter every object: the query engine can answer
                // from an index.
                try CofferError.check(coffer_query_run(txn, first.handle, &results))
            } else {
                try CofferError.check(coffer_results_all(txn, binding.classId, &results))
            }
        case .keys(let read):
            let keys = read()
            let status = keys.withUnsafeBufferPointer {
                coffer_results_from_keys(txn, binding.classId, $0.baseAddress, $0.count, &results)
            }
            try CofferError.check(status)
        }
        for query in filters {
            var next: OpaquePointer?
            let status = coffer_results_filter(results, query.handle, &next)
            coffer_results_free(results)
            try CofferError.check(status)
            results = next
        }
        cache.store(results!, at: version)
        return results!
    }

    /// Takes `keys` as the objects of these results in the database's
    /// current snapshot, in order, without running their queries: for
    /// frozen results made from an observer's change, which knows them.
    func adoptKeys(_ keys: [UInt64]) {
        let database = objectDatabase
        let access = database.frozenAccess(); defer { access?.unlock() }
        cache.adopt(keys, at: database.contentVersion)
    }

    /// The keys of the objects now, in order.
    func currentKeys() -> [UInt64] {
        let database = objectDatabase
        let access = database.frozenAccess(); defer { access?.unlock() }
        do {
            // Frozen results may have adopted their keys (adoptKeys(_:)).
            if database.isFrozen, let keys = cache.keys(at: database.contentVersion) {
                return keys
            }
            let results = try currentResults()
            if let keys = cache.keys(at: database.contentVersion) {
                return keys
            }
            var count: UInt64 = 0
            try CofferError.check(coffer_results_count(results, &count))
            var keys = [UInt64](repeating: 0, count: Int(count))
            if count > 0 {
                let status = keys.withUnsafeMutableBufferPointer {
                    coffer_results_copy_keys(results, 0, $0.count, $0.baseAddress)
                }
                try CofferError.check(status)
            }
            cache.store(keys, at: database.contentVersion)
            return keys
        } catch {
            database.fail(error)
        }
    }
}

/// Where the objects of a ``Results`` come from before its queries.
enum ResultsSource {
    /// Every object of the class.
    case all
    /// The objects with these keys, read anew for every snapshot (a list, backlinks).
    case keys(() -> [UInt64])
}

/// The C results and object keys of a ``Results`` for one database content version.
final class ResultsCache {
    private var version: UInt64 = 0
    private var results: OpaquePointer?
    private var keys: [UInt64]?

    deinit {
        coffer_results_free(results)
    }

    func results(at version: UInt64) -> OpaquePointer? {
        version == self.version ? results : nil
    }

    func keys(at version: UInt64) -> [UInt64]? {
        version == self.version ? keys : nil
    }

    /// Results of a new version; the old ones are freed, whether or not their
    /// transaction has ended.
    func store(_ results: OpaquePointer, at version: UInt64) {
        coffer_results_free(self.results)
        self.results = results
        self.version = version
        keys = nil
    }

    func store(_ keys: [UInt64], at version: UInt64) {
        if version == self.version {
            self.keys = keys
        }
    }

    /// Keys known for `version` without C results (these are made when
    /// something needs them).
    func adopt(_ keys: [UInt64], at version: UInt64) {
        coffer_results_free(results)
        results = nil
        self.version = version
        self.keys = keys
    }
}
