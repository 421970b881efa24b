// Queries, sorts, distinct and aggregates over any DatabaseCollection of
// objects, as Realm's RealmCollection has them: each runs on the collection's
// objects as live Results (a Results answers with its own members).

extension DatabaseCollection where Element: _ResultsElement {
    private var queryResults: Results<Element> { _cofferQueryResults(of: Element.self) }

    /// The objects matching a typed query, in the collection's order, as live
    /// ``Results``: `person.dogs.where { $0.age > 3 }`. See ``Results/where(_:)``.
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        queryResults.where(isIncluded)
    }

    /// The objects matching a query string, as ``Results/filter(_:_:)``; an
    /// invalid query stops the program.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        let results = queryResults
        return results.trapping { () throws(CofferError) in try results.filter(predicateFormat, arguments: args) }
    }

    /// ``filter(_:_:)``, throwing as ``Results/tryFilter(_:_:)`` where it stops the program.
    /// - Throws: ``CofferError`` `.query`, as ``Results/tryFilter(_:_:)``.
    public func tryFilter(_ predicateFormat: String, _ args: Any...) throws -> Results<Element> {
        try queryResults.filter(predicateFormat, arguments: args)
    }

    /// The position of the first object matching a query string, or nil, as
    /// Realm's `index(matching:)`; an invalid query stops the program.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        let results = queryResults
        return results.firstPosition(matching: results.trapping { () throws(CofferError) in
            try results.filter(predicateFormat, arguments: args)
        })
    }

    /// The position of the first object matching a typed query, or nil:
    /// `dogs.index(matching: { $0.name == "Rex" })`.
    public func index(matching isIncluded: (Query<Element>) -> Query<Bool>) -> Int? {
        let results = queryResults
        return results.firstPosition(matching: results.where(isIncluded))
    }

    /// The objects sorted by a property or key path through links, as
    /// ``Results/sorted(byKeyPath:ascending:)``.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        queryResults.sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// ``sorted(byKeyPath:ascending:)``, throwing where it stops the program.
    /// - Throws: ``CofferError`` `.query` naming an unknown or unsortable key path.
    public func trySorted(byKeyPath keyPath: String, ascending: Bool = true) throws -> Results<Element> {
        try queryResults.trySorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The objects sorted by several keys, the first one first, as ``Results/sorted(by:)``.
    public func sorted<S: Sequence>(by sortDescriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        queryResults.sorted(by: sortDescriptors)
    }

    /// The objects sorted by a typed key path, as ``Results/sorted(by:ascending:)``.
    public func sorted<Value: _QueryEquatable>(by keyPath: KeyPath<Element, Value>, ascending: Bool = true) -> Results<Element> {
        queryResults.sorted(by: keyPath, ascending: ascending)
    }

    /// The first object of each distinct combination of the values at
    /// `keyPaths`, as ``Results/distinct(by:)``.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        queryResults.distinct(by: keyPaths)
    }

    /// The first object of each distinct combination of the values at the
    /// typed `keyPaths`: `people.distinct(by: [\.lastName])`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == PartialKeyPath<Element> {
        queryResults.distinct(by: keyPaths)
    }

    /// The smallest value of a number or date property, ignoring nils; nil
    /// when there is none. Misuse stops the program, as ``Results/min(ofProperty:)``.
    public func min<T: _QueryMinMax>(ofProperty property: String) -> T? {
        queryResults.min(ofProperty: property)
    }

    /// The largest value of a number or date property, as ``Results/max(ofProperty:)``.
    public func max<T: _QueryMinMax>(ofProperty property: String) -> T? {
        queryResults.max(ofProperty: property)
    }

    /// The sum of a number property, as ``Results/sum(ofProperty:)``.
    public func sum<T: _QueryNumeric>(ofProperty property: String) -> T {
        queryResults.sum(ofProperty: property)
    }

    /// The average of a number property, as ``Results/average(ofProperty:)``.
    public func average<T: _QueryNumeric>(ofProperty property: String) -> T? {
        queryResults.average(ofProperty: property)
    }

    /// The smallest value of a typed property: `person.dogs.min(of: \.age)`.
    public func min<V: _QueryMinMax>(of keyPath: KeyPath<Element, V>) -> V? {
        queryResults.min(of: keyPath)
    }

    /// The largest value of a typed property: `person.dogs.max(of: \.age)`.
    public func max<V: _QueryMinMax>(of keyPath: KeyPath<Element, V>) -> V? {
        queryResults.max(of: keyPath)
    }

    /// The sum of a typed number property.
    public func sum<V: _QueryNumeric>(of keyPath: KeyPath<Element, V>) -> V {
        queryResults.sum(of: keyPath)
    }

    /// The average of a typed number property, as a `Double`.
    public func average<V: _QueryNumeric>(of keyPath: KeyPath<Element, V>) -> Double? {
        queryResults.average(of: keyPath)
    }
}
