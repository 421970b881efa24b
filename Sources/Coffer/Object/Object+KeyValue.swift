// Reading and writing an object's properties by name, as Realm's
// value(forKey:), setValue(_:forKey:) and object["name"] do.

extension Object {
    /// The value of the property named `key` (its Swift name), as its Swift
    /// type, boxed in `Any`; nil for an optional property holding nil.
    ///
    /// ```swift
    /// let name = dog.value(forKey: "name") as? String
    /// ```
    ///
    /// An unknown name stops the program naming the class and the name, as in
    /// Realm. A mixed property of a managed object holding a list or map reads
    /// as a live ``AnyValue``, as its property does.
    public func value(forKey key: String) -> Any? {
        let schema = ModelSchema.forObject(self)
        let index = propertyIndex(key, in: schema)
        let property = schema.properties[index]
        let stored: StoredValue
        var place: _NestedPlace?
        if let managed = managedState {
            managed.requireUsable()
            stored = managed.database.readValue(managed, index, shallow: property.valueType._cofferReadsNestedAsViews)
            place = _NestedPlace(parent: CollectionLocation(owner: managed, index: index), step: nil)
        } else {
            stored = schema.unmanagedValues(of: self)[index]
        }
        if case .null = stored { return nil }
        let decoded: Any?
        if let place {
            decoded = property.valueType._cofferDecode(_StoredValue(value: stored), nestedAt: place)
        } else {
            decoded = property.valueType._cofferDecode(_StoredValue(value: stored))
        }
        guard let value = decoded else {
            fatalError("Coffer: \(schema.className).\(key) holds \(stored.summary), which is not a \(property.valueType)")
        }
        return value
    }

    /// Sets the property named `key` (its Swift name) to `value`, converted as
    /// ``init(value:)`` converts values. A managed object must be in a write
    /// transaction. An unknown name or a value that does not fit stops the
    /// program naming the class and property, as in Realm.
    public func setValue(_ value: Any?, forKey key: String) {
        let schema = ModelSchema.forObject(self)
        let index = propertyIndex(key, in: schema)
        let converted: StoredValue
        do {
            let values = try FieldValues.parse([key: value as Any], for: schema)
            converted = values[index] ?? .null
        } catch {
            fatalError("Coffer: \(error)")
        }
        if let managed = managedState {
            managed.requireUsable()
            managed.database.writeValue(managed, index, converted)
        } else if !schema.setUnmanagedValues([index: converted], of: self) {
            fatalError("Coffer: \(schema.className).\(key) cannot hold \(converted.summary)")
        }
    }

    /// The property named `key`, read and written as ``value(forKey:)`` and
    /// ``setValue(_:forKey:)`` do: `dog["name"] = "Rex"`.
    public subscript(key: String) -> Any? {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    private func propertyIndex(_ key: String, in schema: ModelSchema) -> Int {
        guard let index = schema.index(ofProperty: key) else {
            fatalError("Coffer: class '\(schema.className)' has no property '\(key)'")
        }
        return index
    }
}
