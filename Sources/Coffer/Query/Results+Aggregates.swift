// Aggregates over Results: min, max, sum and average, by property name (which
// stop the program on an unknown property as Realm's do, with throwing `try`
// twins) and by typed key path.

import Foundation
internal import CCoffer

extension Results where Element: _ResultsElement {
    /// The smallest value of a number or date property over these objects,
    /// ignoring nils; nil when there is none.
    ///
    /// ```swift
    /// let youngest: Int? = dogs.min(ofProperty: "age")
    /// ```
    ///
    /// An unknown property, one that holds no numbers or dates, or values that
    /// are not a `T` stop the program with a message naming the property, as in
    /// Realm; ``tryMin(ofProperty:)`` throws instead.
    public func min<T: _QueryMinMax>(ofProperty property: String) -> T? {
        trapping { try tryMin(ofProperty: property) }
    }

    /// The largest value of a number or date property, ignoring nils; nil when
    /// there is none. Misuse stops the program, as ``min(ofProperty:)``.
    public func max<T: _QueryMinMax>(ofProperty property: String) -> T? {
        trapping { try tryMax(ofProperty: property) }
    }

    /// The sum of a number property, ignoring nils; 0 when there is none.
    /// Integers add up to an integer, floats and doubles to a `Double`. Misuse
    /// stops the program, as ``min(ofProperty:)``.
    public func sum<T: _QueryNumeric>(ofProperty property: String) -> T {
        trapping { try trySum(ofProperty: property) }
    }

    /// The average of a number property, ignoring nils; nil when there is
    /// none. It is a `Double` (a ``Decimal128`` for decimals). Misuse stops the
    /// program, as ``min(ofProperty:)``.
    public func average<T: _QueryNumeric>(ofProperty property: String) -> T? {
        trapping { try tryAverage(ofProperty: property) }
    }

    /// ``min(ofProperty:)``, throwing where it stops the program.
    /// - Throws: ``CofferError`` `.notFound` naming an unknown property; `.type`
    ///   if it holds no numbers or dates, or its values are not a `T`.
    public func tryMin<T: _QueryMinMax>(ofProperty property: String) throws -> T? {
        try aggregate(COFFER_AGGREGATE_MIN, "minimum", of: property)
    }

    /// ``max(ofProperty:)``, throwing where it stops the program.
    /// - Throws: as ``tryMin(ofProperty:)``.
    public func tryMax<T: _QueryMinMax>(ofProperty property: String) throws -> T? {
        try aggregate(COFFER_AGGREGATE_MAX, "maximum", of: property)
    }

    /// ``sum(ofProperty:)``, throwing where it stops the program.
    /// - Throws: as ``tryMin(ofProperty:)``.
    public func trySum<T: _QueryNumeric>(ofProperty property: String) throws -> T {
        guard let sum: T = try aggregate(COFFER_AGGREGATE_SUM, "sum", of: property) else {
            throw CofferError(.type, "the sum of \(binding.schema.className).\(property) is nil, which is not a \(T.self)")
        }
        return sum
    }

    /// ``average(ofProperty:)``, throwing where it stops the program.
    /// - Throws: as ``tryMin(ofProperty:)``.
    public func tryAverage<T: _QueryNumeric>(ofProperty property: String) throws -> T? {
        try aggregate(COFFER_AGGREGATE_AVG, "average", of: property)
    }

    /// The smallest value of a typed property: `dogs.min(of: \.age)`.
    public func min<V: _QueryMinMax>(of keyPath: KeyPath<Element, V>) -> V? {
        typedAggregate(COFFER_AGGREGATE_MIN, "minimum", keyPath)
    }

    /// The largest value of a typed property: `dogs.max(of: \.age)`.
    public func max<V: _QueryMinMax>(of keyPath: KeyPath<Element, V>) -> V? {
        typedAggregate(COFFER_AGGREGATE_MAX, "maximum", keyPath)
    }

    /// The sum of a typed number property: `books.sum(of: \.price)`.
    public func sum<V: _QueryNumeric>(of keyPath: KeyPath<Element, V>) -> V {
        guard let sum: V = typedAggregate(COFFER_AGGREGATE_SUM, "sum", keyPath) else {
            database.fail(CofferError(.type, "the sum of \(keyPath) is nil"))
        }
        return sum
    }

    /// The average of a typed number property, as a `Double`: `dogs.average(of: \.age)`.
    public func average<V: _QueryNumeric>(of keyPath: KeyPath<Element, V>) -> Double? {
        typedAggregate(COFFER_AGGREGATE_AVG, "average", keyPath)
    }

    private func typedAggregate<T: _Persistable>(_ kind: Int, _ name: String, _ keyPath: AnyKeyPath) -> T? {
        let properties = KeyPathNames.properties(of: keyPath, from: Element.self)
        do throws(CofferError) {
            guard properties.count == 1 else {
                throw CofferError(.invalidArgument, "the \(name) needs a property of \(binding.schema.className) itself, not the key path \(keyPath)")
            }
            return try aggregate(kind, name, of: properties[0].name)
        } catch {
            database.fail(error)
        }
    }

    private func aggregate<T: _Persistable>(_ kind: Int, _ name: String, of property: String) throws(CofferError) -> T? {
        let access = database.frozenAccess(); defer { access?.unlock() }
        let schema = binding.schema
        guard let index = schema.index(ofProperty: property) else {
            throw CofferError(.notFound, "class '\(schema.className)' has no property '\(property)'" +
                              (property.contains(".") ? "; aggregates take a property of the class itself" : ""))
        }
        let results = try currentResults()
        var value = coffer_value()
        try CofferError.check(coffer_results_aggregate(results, binding.propertyIds[index], Int32(kind), &value))
        let stored = StoredValue(copying: value)
        if case .null = stored {
            return nil
        }
        for candidate in [stored] + stored.numericConversions {
            if let decoded = T._cofferDecode(_StoredValue(value: candidate)) {
                return decoded
            }
        }
        throw CofferError(.type, "the \(name) of \(schema.className).\(property) is \(stored.summary), which is not a \(T.self)")
    }
}

extension StoredValue {
    /// The same number as other number types, for aggregates asked for as another type.
    var numericConversions: [StoredValue] {
        switch self {
        case .int(let v): [.double(Double(v)), .float(Float(v)), .decimal128(Decimal128(Int(v)))]
        case .double(let v): [.float(Float(v)), .decimal128(Decimal128(v))]
        case .float(let v): [.double(Double(v))]
        default: []
        }
    }
}
