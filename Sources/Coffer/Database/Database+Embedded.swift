// After an add: making the unmanaged embedded objects just written managed views
// of their stored copies.

extension Database {
    /// Makes the unmanaged embedded objects just written under `owner` managed
    /// views of their stored copies, as Realm does: after `add(person)`,
    /// `person.address` and the `Address` it was given are the same object.
    /// `values` are the written values by property position.
    func adoptEmbedded(_ values: [Int: StoredValue], owner: ManagedState) {
        let schema = owner.binding.schema
        for (index, value) in values {
            let property = schema.properties[index]
            guard property.kind == .link, property.objectType is EmbeddedObject.Type else { continue }
            let stored = readValue(owner, index)
            for (original, copy) in Self.pairedObjects(value, stored) where original.managedState == nil {
                guard let managed = copy.managedState else { continue }
                let nested = FieldValues.storedValues(of: original, schema: managed.binding.schema)
                original.managedState = managed
                adoptEmbedded(Dictionary(uniqueKeysWithValues: nested.enumerated().map { ($0, $1) }), owner: managed)
            }
        }
    }

    /// The objects of a written value next to those read back in their place.
    private static func pairedObjects(_ written: StoredValue, _ stored: StoredValue) -> [(Object, Object)] {
        switch (written, stored) {
        case (.object(let original), .object(let copy)):
            return [(original, copy)]
        case (.list(let originals), .list(let copies)) where originals.count == copies.count:
            return zip(originals, copies).flatMap { pairedObjects($0, $1) }
        case (.map(let originals), .map(let copies)):
            let byKey = Dictionary(copies.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
            return originals.flatMap { entry in byKey[entry.key].map { pairedObjects(entry.value, $0) } ?? [] }
        default:
            return []
        }
    }
}
