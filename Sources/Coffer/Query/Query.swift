// Query: the typed query builder behind Results.where, its operators and what it
// turns into.

/// A typed query over the properties of an ``Object``, as in Realm Swift: the
/// closure given to ``Results/where(_:)`` receives a `Query` of the class and
/// returns a `Query<Bool>`.
///
/// ```swift
/// let puppies = db.objects(Dog.self).where {
///     $0.age < 2 && $0.name.starts(with: "R", options: .caseInsensitive)
/// }
/// let owners = db.objects(Person.self).where { $0.dogs.age.max > 10 || $0.dogs.count == 0 }
/// ```
///
/// Members are the `@Persisted` properties, found through Swift key paths
/// (their stored names are used when the class maps them with
/// ``Object/propertiesMapping()``). What a member offers depends on its type:
///
/// - every stored type: `==`, `!=`, `in(_:)`; objects compare by identity and
///   ``PersistableEnum``s by raw value;
/// - numbers, dates and strings: `<`, `<=`, `>`, `>=`; numbers and dates:
///   `contains(_:)` with a range;
/// - strings and data: `contains(_:options:)`, `starts(with:options:)`,
///   `ends(with:options:)`, `equals(_:options:)`, `notEquals(_:options:)`,
///   `like(_:caseInsensitive:)` (`?` one character, `*` any run);
/// - links: the properties of the linked object (`$0.owner.name`);
/// - collections: `count`, `contains(_:)`, `containsAny(in:)`, and for
///   numbers `min`, `max`, `sum`, `avg`; a collection of objects gives the
///   values of a property over its objects (`$0.dogs.age`, a ``QueryValues``),
///   which compare when any of them does and aggregate the same way;
/// - maps: `keys`, `values`, `count` and a subscript by key;
/// - predicates (`Query<Bool>`): `&&`, `||`, `!`, and `count` for a subquery:
///   `($0.dogs.age > 3 && $0.dogs.name.starts(with: "R")).count >= 2` counts
///   the dogs that match both.
///
/// A typed query becomes text of the query language (with its constants as
/// arguments), which the C core compiles and checks like any other.
@dynamicMemberLookup
public struct Query<T> {
    let node: QueryNode

    init(_ node: QueryNode) {
        self.node = node
    }

    /// The start of a query over the objects of a class.
    static var root: Query<T> { Query(.path(QueryPath())) }

    private func member<V>(_ property: PropertySchema) -> Query<V> {
        Query<V>(.path(node.path.appending(property)))
    }

    private func members<V>(_ properties: [PropertySchema]) -> Query<V> {
        var path = node.path
        for property in properties {
            path = path.appending(property)
        }
        return Query<V>(.path(path))
    }

    // MARK: Members

    /// A property of the object, or of the projection (which stands for the
    /// stored property its `@Projected` key path reads).
    public subscript<V>(dynamicMember member: KeyPath<T, V>) -> Query<V> where T: _ResultsElement {
        members(KeyPathNames.properties(of: member, from: T.self))
    }
}

extension Query where T: _QueryOptional, T._QueryWrapped: Object {
    /// A property of the linked object.
    public subscript<V>(dynamicMember member: KeyPath<T._QueryWrapped, V>) -> Query<V> {
        members(KeyPathNames.properties(of: member, from: T._QueryWrapped.self))
    }
}

extension Query where T: _QueryMany, T._QueryElement: Object {
    /// The values of a property over the objects of the collection.
    public subscript<V>(dynamicMember member: KeyPath<T._QueryElement, V>) -> Query<QueryValues<V>> {
        members(KeyPathNames.properties(of: member, from: T._QueryElement.self))
    }

    /// The elements of a collection property over the objects of the collection, as one collection.
    public subscript<V: _QueryMany>(dynamicMember member: KeyPath<T._QueryElement, V>) -> Query<QueryValues<V._QueryElement>> {
        members(KeyPathNames.properties(of: member, from: T._QueryElement.self))
    }
}

extension Query where T: _QueryMany, T._QueryElement: _QueryOptional, T._QueryElement._QueryWrapped: Object {
    /// The values of a property over the objects the collection's links point to.
    public subscript<V>(dynamicMember member: KeyPath<T._QueryElement._QueryWrapped, V>) -> Query<QueryValues<V>> {
        members(KeyPathNames.properties(of: member, from: T._QueryElement._QueryWrapped.self))
    }

    /// The elements of a collection property over the objects the collection's links point to.
    public subscript<V: _QueryMany>(dynamicMember member: KeyPath<T._QueryElement._QueryWrapped, V>) -> Query<QueryValues<V._QueryElement>> {
        members(KeyPathNames.properties(of: member, from: T._QueryElement._QueryWrapped.self))
    }
}

// MARK: Comparisons

extension Query {
    fileprivate static func compare<U>(_ op: ComparisonOperator, _ lhs: Query, _ rhs: U,
                                       _ options: StringOptions = []) -> Query<Bool> where U: _Persistable {
        Query<Bool>(.comparison(op, lhs.node, .constant(rhs._cofferEncoded.value), options))
    }

    fileprivate static func compare(_ op: ComparisonOperator, _ lhs: Query, _ rhs: Query) -> Query<Bool> {
        Query<Bool>(.comparison(op, lhs.node, rhs.node, []))
    }
}

extension Query where T: _QueryEquatable {
    /// Equal to `rhs`; for objects, the same object.
    public static func == (lhs: Query, rhs: T) -> Query<Bool> { compare(.equal, lhs, rhs) }
    /// Not equal to `rhs`.
    public static func != (lhs: Query, rhs: T) -> Query<Bool> { compare(.notEqual, lhs, rhs) }
    /// Equal to another property.
    public static func == (lhs: Query, rhs: Query) -> Query<Bool> { compare(.equal, lhs, rhs) }
    /// Not equal to another property.
    public static func != (lhs: Query, rhs: Query) -> Query<Bool> { compare(.notEqual, lhs, rhs) }

    /// Equal to one of `values` (`IN` in the query language).
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        Query<Bool>(.comparison(.in, node, .constant(.list(values.map { $0._cofferEncoded.value })), []))
    }
}

extension Query where T: _QueryComparable {
    /// Greater than `rhs`.
    public static func > (lhs: Query, rhs: T) -> Query<Bool> { compare(.greater, lhs, rhs) }
    /// Greater than or equal to `rhs`.
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { compare(.greaterOrEqual, lhs, rhs) }
    /// Less than `rhs`.
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { compare(.less, lhs, rhs) }
    /// Less than or equal to `rhs`.
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { compare(.lessOrEqual, lhs, rhs) }
    /// Greater than another property.
    public static func > (lhs: Query, rhs: Query) -> Query<Bool> { compare(.greater, lhs, rhs) }
    /// Greater than or equal to another property.
    public static func >= (lhs: Query, rhs: Query) -> Query<Bool> { compare(.greaterOrEqual, lhs, rhs) }
    /// Less than another property.
    public static func < (lhs: Query, rhs: Query) -> Query<Bool> { compare(.less, lhs, rhs) }
    /// Less than or equal to another property.
    public static func <= (lhs: Query, rhs: Query) -> Query<Bool> { compare(.lessOrEqual, lhs, rhs) }
}

extension Query where T: PersistableEnum, T.RawValue: _QueryComparable {
    /// Raw value greater than that of `rhs`.
    public static func > (lhs: Query, rhs: T) -> Query<Bool> { compare(.greater, lhs, rhs) }
    /// Raw value greater than or equal to that of `rhs`.
    public static func >= (lhs: Query, rhs: T) -> Query<Bool> { compare(.greaterOrEqual, lhs, rhs) }
    /// Raw value less than that of `rhs`.
    public static func < (lhs: Query, rhs: T) -> Query<Bool> { compare(.less, lhs, rhs) }
    /// Raw value less than or equal to that of `rhs`.
    public static func <= (lhs: Query, rhs: T) -> Query<Bool> { compare(.lessOrEqual, lhs, rhs) }
}

extension Query where T: _QueryMinMax & Comparable {
    /// Within `range`, bounds included (`BETWEEN`).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> {
        Query<Bool>(.between(node, range.lowerBound._cofferEncoded.value, range.upperBound._cofferEncoded.value))
    }

    /// Within `range`: at least its lower bound and less than its upper bound.
    public func contains(_ range: Range<T>) -> Query<Bool> {
        self >= range.lowerBound && self < range.upperBound
    }
}

extension Query where T: _QueryOptional & _QueryMinMax, T._QueryWrapped: _QueryMinMax & Comparable {
    /// Within `range`, bounds included (`BETWEEN`); nil is in no range.
    public func contains(_ range: ClosedRange<T._QueryWrapped>) -> Query<Bool> {
        Query<Bool>(.between(node, range.lowerBound._cofferEncoded.value, range.upperBound._cofferEncoded.value))
    }

    /// Within `range`: at least its lower bound and less than its upper bound.
    public func contains(_ range: Range<T._QueryWrapped>) -> Query<Bool> {
        Query<Bool>(.and(.comparison(.greaterOrEqual, node, .constant(range.lowerBound._cofferEncoded.value), []),
                         .comparison(.less, node, .constant(range.upperBound._cofferEncoded.value), [])))
    }
}

// MARK: Strings

extension Query where T: _QueryString {
    /// Contains `value` (`CONTAINS`).
    public func contains(_ value: T, options: StringOptions = []) -> Query<Bool> { Self.compare(.contains, self, value, options) }
    /// Starts with `value` (`BEGINSWITH`).
    public func starts(with value: T, options: StringOptions = []) -> Query<Bool> { Self.compare(.beginsWith, self, value, options) }
    /// Ends with `value` (`ENDSWITH`).
    public func ends(with value: T, options: StringOptions = []) -> Query<Bool> { Self.compare(.endsWith, self, value, options) }
    /// Equal to `value`, with `options` (`==[c]`).
    public func equals(_ value: T, options: StringOptions = []) -> Query<Bool> { Self.compare(.equal, self, value, options) }
    /// Not equal to `value`, with `options` (`!=[c]`).
    public func notEquals(_ value: T, options: StringOptions = []) -> Query<Bool> { Self.compare(.notEqual, self, value, options) }
    /// Matches the wildcard `pattern` (`LIKE`): `?` matches one character, `*` any run of them.
    public func like(_ pattern: T, caseInsensitive: Bool = false) -> Query<Bool> {
        Self.compare(.like, self, pattern, caseInsensitive ? .caseInsensitive : [])
    }
    /// Matches the wildcard `pattern` (`LIKE`) with `options`.
    public func like(_ pattern: T, options: StringOptions) -> Query<Bool> { Self.compare(.like, self, pattern, options) }
}

// MARK: Predicates

extension Query where T == Bool {
    /// Both hold.
    public static func && (lhs: Query, rhs: Query) -> Query { Query(.and(lhs.node, rhs.node)) }
    /// Either holds.
    public static func || (lhs: Query, rhs: Query) -> Query { Query(.or(lhs.node, rhs.node)) }
    /// Does not hold.
    public static prefix func ! (operand: Query) -> Query { Query(.not(operand.node)) }

    /// The number of objects of the one collection this predicate goes through
    /// that match it (a SUBQUERY):
    ///
    /// ```swift
    /// people.where { ($0.dogs.age > 3 && $0.dogs.name.starts(with: "R")).count > 0 }
    /// ```
    ///
    /// A predicate that goes through no collection, or through more than one,
    /// stops the program with a message saying so.
    public var count: Query<Int> { Query<Int>(node.subqueryCount()) }
}

// MARK: Collections

extension Query where T: _QueryMany, T._QueryElement: _QueryEquatable {
    /// Some value equals `rhs`.
    public static func == (lhs: Query, rhs: T._QueryElement) -> Query<Bool> { compare(.equal, lhs, rhs) }
    /// Some value differs from `rhs`.
    public static func != (lhs: Query, rhs: T._QueryElement) -> Query<Bool> { compare(.notEqual, lhs, rhs) }

    /// Some value is one of `values`.
    public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element == T._QueryElement {
        Query<Bool>(.comparison(.in, node, .constant(.list(values.map { $0._cofferEncoded.value })), []))
    }
}

extension Query where T: _QueryMany, T._QueryElement: _QueryComparable {
    /// Some value is greater than `rhs`.
    public static func > (lhs: Query, rhs: T._QueryElement) -> Query<Bool> { compare(.greater, lhs, rhs) }
    /// Some value is greater than or equal to `rhs`.
    public static func >= (lhs: Query, rhs: T._QueryElement) -> Query<Bool> { compare(.greaterOrEqual, lhs, rhs) }
    /// Some value is less than `rhs`.
    public static func < (lhs: Query, rhs: T._QueryElement) -> Query<Bool> { compare(.less, lhs, rhs) }
    /// Some value is less than or equal to `rhs`.
    public static func <= (lhs: Query, rhs: T._QueryElement) -> Query<Bool> { compare(.lessOrEqual, lhs, rhs) }
}

extension Query where T: _QueryMany, T._QueryElement: _QueryMinMax {
    /// The smallest value (`@min`); nil for none.
    public var min: Query<T._QueryElement> { Query<T._QueryElement>(.path(node.path.aggregated("@min"))) }
    /// The largest value (`@max`); nil for none.
    public var max: Query<T._QueryElement> { Query<T._QueryElement>(.path(node.path.aggregated("@max"))) }
}

extension Query where T: _QueryMany, T._QueryElement: _QueryMinMax & Comparable {
    /// Every value lies in `range`, bounds included.
    public func contains(_ range: ClosedRange<T._QueryElement>) -> Query<Bool> {
        min >= range.lowerBound && max <= range.upperBound
    }

    /// Every value lies in `range`: at least its lower bound, less than its upper bound.
    public func contains(_ range: Range<T._QueryElement>) -> Query<Bool> {
        min >= range.lowerBound && max < range.upperBound
    }
}

extension Query where T: _QueryMany, T._QueryElement: _QueryNumeric {
    /// The sum of the values (`@sum`); 0 for none.
    public var sum: Query<T._QueryElement> { Query<T._QueryElement>(.path(node.path.aggregated("@sum"))) }
    /// The average of the values (`@avg`), compared as a `Double`; nil for none.
    public var avg: Query<Double> { Query<Double>(.path(node.path.aggregated("@avg"))) }
}

extension Query where T: _QueryCollection {
    /// The number of elements (`@count`).
    public var count: Query<Int> { Query<Int>(.path(node.path.appending(operation: "@count", keepsCollection: false))) }
}

extension Query where T: _QueryCollection, T._QueryElement: _QueryEquatable {
    /// The collection holds `element` (for objects: that object).
    public func contains(_ element: T._QueryElement) -> Query<Bool> {
        var path = node.path
        path.collectionEnd = nil
        return Query<Bool>(.comparison(.in, .constant(element._cofferEncoded.value), .path(path), []))
    }
}

extension Query {
    /// Some value contains `value` (`CONTAINS`).
    public func contains<S: _QueryString>(_ value: S, options: StringOptions = []) -> Query<Bool> where T == QueryValues<S> {
        Self.compare(.contains, self, value, options)
    }
    /// Some value starts with `value` (`BEGINSWITH`).
    public func starts<S: _QueryString>(with value: S, options: StringOptions = []) -> Query<Bool> where T == QueryValues<S> {
        Self.compare(.beginsWith, self, value, options)
    }
    /// Some value ends with `value` (`ENDSWITH`).
    public func ends<S: _QueryString>(with value: S, options: StringOptions = []) -> Query<Bool> where T == QueryValues<S> {
        Self.compare(.endsWith, self, value, options)
    }
    /// Some value matches the wildcard `pattern` (`LIKE`).
    public func like<S: _QueryString>(_ pattern: S, caseInsensitive: Bool = false) -> Query<Bool> where T == QueryValues<S> {
        Self.compare(.like, self, pattern, caseInsensitive ? .caseInsensitive : [])
    }
}

// MARK: Maps

extension Query where T: _QueryMap {
    /// The value under `key` (`map['key']`); nil where there is none.
    public subscript(key: String) -> Query<T._QueryMapValue> {
        Query<T._QueryMapValue>(.path(node.path.appending(mapKey: key)))
    }

    /// The keys of the map (`@keys`).
    public var keys: Query<QueryValues<String>> {
        Query<QueryValues<String>>(.path(node.path.appending(operation: "@keys", keepsCollection: true)))
    }

    /// The values of the map (`@values`).
    public var values: Query<QueryValues<T._QueryMapValue>> {
        Query<QueryValues<T._QueryMapValue>>(.path(node.path.appending(operation: "@values", keepsCollection: true)))
    }

    /// The number of entries (`@count`).
    public var count: Query<Int> {
        Query<Int>(.path(node.path.appending(operation: "@count", keepsCollection: false)))
    }
}
