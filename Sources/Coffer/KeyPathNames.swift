/// Finds which stored properties a Swift key path such as `\Dog.owner?.name`
/// reads, without the Objective-C runtime: the key path is applied to a fresh
/// instance whose `@Persisted` getters report themselves to a recorder instead
/// of reading a value, and whose links return further recording instances.
enum KeyPathNames {
    private static let cache = LockedValue<[AnyKeyPath: [PropertySchema]]>([:])

    /// The properties `keyPath` goes through from `root`, outermost first.
    ///
    /// A key path that is not a chain of `@Persisted` properties (a property
    /// without `@Persisted`, a computed property that reads several) stops the
    /// program with a message naming it, as Realm does.
    static func properties(of keyPath: AnyKeyPath, from root: Object.Type) -> [PropertySchema] {
        if let known = cache.withLock({ $0[keyPath] }) {
            return known
        }
        let properties = record(keyPath, from: root)
        cache.withLock { $0[keyPath] = properties }
        return properties
    }

    /// The stored names of `keyPath`, joined with dots: `owner.first_name`.
    static func storedPath(of keyPath: AnyKeyPath, from root: Object.Type) -> String {
        properties(of: keyPath, from: root).map(\.persistedName).joined(separator: ".")
    }

    private static func record(_ keyPath: AnyKeyPath, from root: Object.Type) -> [PropertySchema] {
        let object = root.init()
        let recorder = KeyPathRecorder(start: object)
        object.keyPathRecorder = recorder
        let value = object[keyPath: keyPath]
        if recorder.properties.isEmpty, let plain = value as? any PersistedProperty,
           let index = ObjectSchema.persistedChildren(of: object).firstIndex(where: { $0.property.boxIdentity == plain.boxIdentity }) {
            // `let owners = LinkingObjects(...)` is read without a getter of ours.
            return [ObjectSchema.forObject(object).properties[index]]
        }
        guard !recorder.properties.isEmpty, recorder.isChain else {
            fatalError("Coffer: the key path \(keyPath) of \(root.className()) is not a chain of @Persisted properties; queries, sorting and aggregates need stored properties")
        }
        return recorder.properties
    }
}

/// Collects the properties read while a key path is applied to a recording object.
final class KeyPathRecorder {
    private(set) var properties: [PropertySchema] = []
    /// False once a property was read from another object than the one the
    /// previous link returned: the key path is computed, not a chain.
    private(set) var isChain = true
    private var expected: ObjectIdentifier?
    /// The recording objects handed out, kept alive so that their identities stay unique.
    private var objects: [Object] = []

    init(start: Object) {
        expected = ObjectIdentifier(start)
        objects.append(start)
    }

    /// Notes the property of `object` whose storage is `box`, and returns what
    /// the getter returns: for a link, a recording object of the linked class;
    /// otherwise the unmanaged value.
    func record<Value: _Persistable>(_ box: PersistedBox<Value>, in object: Object, storage: AnyKeyPath) -> Value {
        let property = ObjectSchema.forObject(object).properties[box.schemaIndex(in: object, storage: storage)]
        if ObjectIdentifier(object) != expected {
            isChain = false
        }
        properties.append(property)
        expected = nil
        if property.kind == .link, property.collection == .none, let target = property.objectType {
            let next = target.init()
            next.keyPathRecorder = self
            objects.append(next)
            if let value = Value._cofferDecode(_StoredValue(value: .object(next))) {
                expected = ObjectIdentifier(next)
                return value
            }
        }
        return box.unmanagedValue
    }
}
