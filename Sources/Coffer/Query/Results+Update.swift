// Writing one property of every object of a Results in one call into the C
// core (coffer_results_set_value), as Realm's Results.setValue(_:forKey:).

internal import CCoffer

extension Results where Element: _ResultsElement {
    /// Sets the property named `key` (its Swift name) to `value` in every object
    /// of these results, converted as ``Object/setValue(_:forKey:)`` converts it,
    /// in one call into the C core.
    ///
    /// ```swift
    /// try db.write {
    ///     db.objects(Dog.self).where { $0.age > 10 }.setValue(true, forKey: "senior")
    /// }
    /// ```
    ///
    /// As in Realm, this call does not throw: outside a write transaction, for an
    /// unknown property, the primary key, or a value that does not fit, it stops
    /// the program with a message naming the class and property;
    /// ``trySetValue(_:forKey:)`` throws instead.
    public func setValue(_ value: Any?, forKey key: String) {
        trapping { try trySetValue(value, forKey: key) }
    }

    /// Sets a property of every object as ``setValue(_:forKey:)`` does,
    /// throwing where that stops the program.
    ///
    /// - Throws: ``CofferError``: `.notInWriteTransaction`; `.notFound` for an
    ///   unknown property; `.immutable` for the primary key or linking objects;
    ///   `.type` or `.invalidArgument` for a value that does not fit. Nothing is
    ///   written then.
    public func trySetValue(_ value: Any?, forKey key: String) throws {
        let schema = binding.schema
        _ = try database.requireWriteTransaction(for: "modify \(schema.className).\(key)")
        guard let index = schema.index(ofProperty: key) else {
            throw CofferError(.notFound, "class '\(schema.className)' has no property '\(key)'")
        }
        let converted = try FieldValues.parse([key: value as Any], for: schema)[index] ?? .null
        let resolved = try database.prepared(converted, update: .error)
        let results = try currentResults()
        let status = try resolved.withCValue { (cValue: inout coffer_value) in
            coffer_results_set_value(results, binding.propertyIds[index], &cValue)
        }
        database.contentVersion &+= 1
        try CofferError.check(status)
    }
}
