// Results as ThreadConfined values: frozen results over the frozen view of
// their database, thawing them back, and compiling them again from a
// ThreadSafeReference.

extension Results: ThreadConfined where Element: _ResultsElement {
    /// True for results of a frozen database: they never change and can be
    /// read from any thread or task.
    public var isFrozen: Bool {
        database.isFrozen
    }

    /// These results over the frozen view of their database (see
    /// ``Database/freeze()``): the same queries, on the data as of now, readable
    /// from any thread. Results of a list, set or backlinks keep the objects the
    /// collection holds now. Frozen results return themselves.
    public func freeze() -> Results {
        if isFrozen { return self }
        let frozen = database.freeze()
        return Results(database: frozen, binding: binding, source: fixedSource(), queries: queries)
    }

    /// These results over a live database usable on the calling thread (see
    /// ``Database/thaw()``), following later changes; results of a collection
    /// come back over the objects they held, without those deleted since.
    /// Live results return themselves.
    public func thaw() -> Results? {
        guard isFrozen else { return self }
        return Results(database: database.thaw(), binding: binding, source: fixedSource(), queries: queries)
    }

    /// The source with its keys read now: a frozen one never changes.
    private func fixedSource() -> ResultsSource {
        guard case .keys(let read) = source else { return .all }
        let keys = read()
        return .keys { keys }
    }

    public func _cofferReferenceTarget() -> _ReferenceTarget {
        trapping { () throws(CofferError) in
            let keys: _ReferenceTarget.ResultsSource
            if case .keys(let read) = source {
                keys = .keys(read())
            } else {
                keys = .all
            }
            let texts = queries.map { (text: $0.text, arguments: $0.arguments) }
            let linkClasses = database.linkClassNames(in: texts.flatMap(\.arguments))
            return try _ReferenceTarget(.results(type: Element._cofferRootType, source: keys, queries: texts,
                                                 linkClasses: linkClasses), in: database)
        }
    }

    public static func _cofferResolve(_ target: _ReferenceTarget, in database: Database) throws -> Results? {
        guard case .results(let type, let keys, let texts, let linkClasses) = target.kind else {
            throw CofferError(.misuse, "this ThreadSafeReference does not refer to results")
        }
        let binding = try database.binding(for: type)
        var queries: [CompiledQuery] = []
        for query in texts {
            var arguments: [StoredValue] = []
            for argument in query.arguments {
                arguments.append(try database.relinked(argument, linkClasses))
            }
            queries.append(try CompiledQuery(database, binding, text: query.text, arguments: arguments))
        }
        let source: ResultsSource
        switch keys {
        case .all: source = .all
        case .keys(let keys): source = .keys { keys }
        }
        return Results(database: database, binding: binding, source: source, queries: queries)
    }
}
