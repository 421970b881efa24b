// FieldValues: turning the value given to Object(value:) and Database.create
// into stored values by property position.

/// Turns the `value` given to `Object(value:)` and `Database.create` into stored
/// values by property position, checking every name, count and type.
enum FieldValues {
    static func parse(_ value: Any, for schema: ModelSchema) throws(CofferError) -> [Int: StoredValue] {
        if let object = value as? Object {
            return try fromObject(object, for: schema)
        }
        if let dictionary = value as? [String: Any] {
            var values: [Int: StoredValue] = [:]
            for (name, element) in dictionary {
                guard let index = schema.index(ofProperty: name) else {
                    throw CofferError(.notFound, "class '\(schema.className)' has no property '\(name)'")
                }
                guard schema.properties[index].isStored else {
                    throw CofferError(.invalidArgument, "property '\(schema.className).\(name)' holds linking objects, which are read-only")
                }
                values[index] = try convert(element, to: schema.properties[index], of: schema)
            }
            return values
        }
        if let array = value as? [Any] {
            // One value for every stored property; linking objects have none.
            let stored = schema.properties.indices.filter { schema.properties[$0].isStored }
            guard array.count == stored.count else {
                throw CofferError(.invalidArgument, "class '\(schema.className)' has \(stored.count) properties, but the array given has \(array.count) values")
            }
            var values: [Int: StoredValue] = [:]
            for (index, element) in zip(stored, array) {
                values[index] = try convert(element, to: schema.properties[index], of: schema)
            }
            return values
        }
        throw CofferError(.invalidArgument, "class '\(schema.className)' cannot take its values from a \(type(of: value)); give a dictionary, an array or an Object")
    }

    static func convert(_ value: Any, to property: PropertySchema, of schema: ModelSchema) throws(CofferError) -> StoredValue {
        let unwrapped = unwrapAny(value)
        if unwrapped == nil && !property.isOptional {
            throw CofferError(.type, "property '\(schema.className).\(property.name)' is required (\(property.typeDescription)) but the value given is nil")
        }
        guard let cast = property.valueType._cofferCast(property.isOptional ? value : unwrapped!) else {
            throw CofferError(.type, "property '\(schema.className).\(property.name)' is \(property.typeDescription) (\(property.valueType)), but the value given is \(describe(unwrapped!)) of type \(type(of: unwrapped!))")
        }
        return cast._cofferEncoded.value
    }

    /// The values of another object's properties that share a name with `schema`'s.
    private static func fromObject(_ object: Object, for schema: ModelSchema) throws(CofferError) -> [Int: StoredValue] {
        let source = try ModelSchema.of(type(of: object))
        let sourceValues = storedValues(of: object, schema: source)
        var values: [Int: StoredValue] = [:]
        for (index, property) in schema.properties.enumerated() where property.isStored {
            guard let sourceIndex = source.index(ofProperty: property.name), source.properties[sourceIndex].isStored else { continue }
            let stored = sourceValues[sourceIndex]
            guard property.valueType._cofferDecode(_StoredValue(value: stored)) != nil else {
                throw CofferError(.type, "property '\(schema.className).\(property.name)' is \(property.typeDescription), but \(source.className).\(property.name) holds \(stored.summary)")
            }
            values[index] = stored
        }
        return values
    }

    /// Every property value of `object`, in schema order, from the database if it is managed.
    static func storedValues(of object: Object, schema: ModelSchema) -> [StoredValue] {
        if let managed = object.managedState {
            return schema.properties.indices.map { managed.database.readValue(managed, $0) }
        }
        return schema.unmanagedValues(of: object)
    }

    private static func describe(_ value: Any) -> String {
        value is String ? "\"\(value)\"" : "\(value)"
    }
}
