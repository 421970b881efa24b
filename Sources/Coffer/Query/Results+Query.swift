// Narrowing and ordering Results: where, filter, sorted and distinct, which
// stop the program on a bad query as Realm's do, and their throwing `try`
// twins for query text that comes from users.

internal import CCoffer

extension Results where Element: _ResultsElement {
    /// These results narrowed by a typed query, as Realm's `where`:
    ///
    /// ```swift
    /// let puppies = dogs.where { $0.age < 2 && $0.name.starts(with: "R") }
    /// let walked = dogs.where { $0.owner.name == "Ali" }
    /// ```
    ///
    /// See ``Query`` for what a query can say. A key path that is not a chain of
    /// `@Persisted` properties, or a query the C core rejects, stops the program
    /// with a message naming it, as in Realm.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        let (text, arguments) = QueryWriter.write(isIncluded(Query<Element>.root).node)
        return trapping { try appending(text, arguments) }
    }

    /// These results narrowed by a query string in Coffer's query language
    /// (Realm's), with arguments given NSPredicate-style as `%@` (or any C format
    /// specifier NSPredicate accepts: `%d`, `%i`, `%ld`, `%lld`, `%u`, `%f`,
    /// `%lf`, `%s`, `%c`, ...) or by position as `$0`, `$1`, ...:
    ///
    /// ```swift
    /// let found = dogs.filter("age > %@ AND name BEGINSWITH %@", 3, "R")
    /// let older = dogs.filter("age > %d", 2)
    /// let same = dogs.filter("age > $0 AND name BEGINSWITH $1", 3, "R")
    /// let named = dogs.filter("name IN %@", ["Rex", "Fido"])
    /// let owned = dogs.filter("owner == %@", ali)
    /// ```
    ///
    /// Property names are the Swift ones, also for classes that map them with
    /// ``Object/propertiesMapping()``. `%K` inserts a key path given as an
    /// argument. An argument is any value a property stores, nil, a stored
    /// object, or an array or set of them (for `IN`). The string may end with
    /// `SORT(...)`, `DISTINCT(...)` and `LIMIT(n)`.
    ///
    /// As in Realm, an invalid query stops the program with the C core's message
    /// (a syntax error's offset and what was expected, the unknown property, the
    /// mismatched types). For query text that comes from users, use
    /// ``tryFilter(_:_:)``, which throws instead.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        trapping { try filter(predicateFormat, arguments: args) }
    }

    /// These results narrowed by a query string, as ``filter(_:_:)``, throwing
    /// where that stops the program:
    ///
    /// ```swift
    /// do {
    ///     let found = try dogs.tryFilter(searchField.text)
    /// } catch let error as CofferError {
    ///     print(error.message)   // "... at offset 7: expected ..."
    /// }
    /// ```
    ///
    /// - Throws: ``CofferError`` `.query` with the C core's message: for a syntax
    ///   error, its offset and what was expected; otherwise the unknown property,
    ///   the mismatched types or the missing argument; also for `%@` and `$n`
    ///   mixed, too few arguments, or an argument a query cannot compare.
    public func tryFilter(_ predicateFormat: String, _ args: Any...) throws -> Results<Element> {
        try filter(predicateFormat, arguments: args)
    }

    func filter(_ predicateFormat: String, arguments: [Any]) throws(CofferError) -> Results<Element> {
        let (text, given, offsets) = try QueryText.translate(predicateFormat, root: binding.schema, arguments: arguments)
        let stored = try given.enumerated().map { (index, value) throws(CofferError) in
            try QueryArgument.stored(value, at: index)
        }
        do {
            return try appending(text, stored)
        } catch where error.code == .query {
            throw CofferError(.query, offsets.remap(error.message))
        }
    }

    /// These results sorted by a property or key path through links
    /// (`"owner.name"`), as Realm's `sorted(byKeyPath:ascending:)`. Sorting
    /// again sorts by the new key first, keeping the previous order among equals.
    ///
    /// An unknown property, or one that holds a collection or a link, stops the
    /// program with a message naming it; ``trySorted(byKeyPath:ascending:)`` throws.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// These results sorted as ``sorted(byKeyPath:ascending:)`` does, throwing
    /// where that stops the program.
    /// - Throws: ``CofferError`` `.query` naming an unknown property, or one
    ///   that holds a collection or a link.
    public func trySorted(byKeyPath keyPath: String, ascending: Bool = true) throws -> Results<Element> {
        try trySorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// These results sorted by several keys, the first one first.
    ///
    /// ```swift
    /// let ordered = dogs.sorted(by: [SortDescriptor(keyPath: "age", ascending: false), "name"])
    /// ```
    ///
    /// An unknown or unsortable key path stops the program with a message
    /// naming it; ``trySorted(by:)`` throws.
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        trapping { try trySorted(by: sortDescriptors) }
    }

    /// These results sorted as ``sorted(by:)`` does, throwing where that stops
    /// the program.
    /// - Throws: ``CofferError`` `.query` naming an unknown or unsortable key path.
    public func trySorted<S: Sequence>(by sortDescriptors: S) throws -> Results<Element> where S.Element == SortDescriptor {
        let keys = sortDescriptors.map { "\(QueryText.storedKeyPath($0.keyPath, root: binding.schema)) \($0.ascending ? "ASC" : "DESC")" }
        guard !keys.isEmpty else { return self }
        return try appending("TRUEPREDICATE SORT(\(keys.joined(separator: ", ")))", [])
    }

    /// These results sorted by a typed key path: `dogs.sorted(by: \.name)`,
    /// `dogs.sorted(by: \.owner?.name, ascending: false)`.
    ///
    /// A key path that is not a chain of `@Persisted` properties, or one that
    /// cannot be sorted by (a collection, a link), stops the program.
    public func sorted<Value: _QueryEquatable>(by keyPath: KeyPath<Element, Value>, ascending: Bool = true) -> Results<Element> {
        let path = KeyPathNames.storedPath(of: keyPath, from: Element.self)
        return trapping { try appending("TRUEPREDICATE SORT(\(path) \(ascending ? "ASC" : "DESC"))", []) }
    }

    /// These results keeping only the first object of each distinct combination
    /// of the values at `keyPaths` (`DISTINCT`), in their order.
    ///
    /// An unknown key path, or one through a collection, stops the program with
    /// a message naming it; ``tryDistinct(by:)`` throws.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        trapping { try tryDistinct(by: keyPaths) }
    }

    /// These results made distinct as ``distinct(by:)`` does, throwing where
    /// that stops the program.
    /// - Throws: ``CofferError`` `.query` naming an unknown key path or one
    ///   through a collection.
    public func tryDistinct<S: Sequence>(by keyPaths: S) throws -> Results<Element> where S.Element == String {
        let paths = keyPaths.map { QueryText.storedKeyPath($0, root: binding.schema) }
        guard !paths.isEmpty else { return self }
        return try appending("TRUEPREDICATE DISTINCT(\(paths.joined(separator: ", ")))", [])
    }

    /// These results keeping only the first object of each distinct combination
    /// of the values at the typed `keyPaths`: `people.distinct(by: [\.lastName])`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == PartialKeyPath<Element> {
        let paths = keyPaths.map { KeyPathNames.storedPath(of: $0, from: Element.self) }
        guard !paths.isEmpty else { return self }
        return trapping { try appending("TRUEPREDICATE DISTINCT(\(paths.joined(separator: ", ")))", []) }
    }

    /// The query language text of these results' queries, in the C core's
    /// canonical form, one per `where`, `filter`, `sorted` or `distinct`.
    public var queryDescriptions: [String] {
        queries.map(\.description)
    }

    private func appending(_ text: String, _ arguments: [StoredValue]) throws(CofferError) -> Results<Element> {
        let access = database.frozenAccess(); defer { access?.unlock() }
        try database.checkThread()
        let query = try CompiledQuery(database, binding, text: text, arguments: arguments)
        return Results(database: database, binding: binding, source: source, queries: queries + [query],
                       observedList: observedList)
    }
}

/// A key path to sort by and its direction, as in Realm.
///
/// ```swift
/// let byAgeThenName: [SortDescriptor] = [SortDescriptor(keyPath: "age", ascending: false), "name"]
/// ```
public struct SortDescriptor: Sendable, Equatable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// A property name or a key path through links, with Swift names.
    public let keyPath: String
    /// True for smallest first.
    public let ascending: Bool

    /// Sorts by `keyPath`, smallest first unless `ascending` is false.
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// Sorts by the key path `value`, smallest first.
    public init(stringLiteral value: String) {
        self.init(keyPath: value)
    }

    /// The same key path in the other direction.
    public func reversed() -> SortDescriptor {
        SortDescriptor(keyPath: keyPath, ascending: !ascending)
    }

    /// `SortDescriptor(keyPath: name, ascending: true)`.
    public var description: String {
        "SortDescriptor(keyPath: \(keyPath), ascending: \(ascending))"
    }
}
