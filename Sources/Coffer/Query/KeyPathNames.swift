// Finding the stored property names a Swift key path reads, by recording
// @Persisted getters on a fresh instance.

/// Finds which stored properties a Swift key path such as `\Dog.owner?.name`
/// reads, without the Objective-C runtime: the key path is applied to a fresh
/// instance whose `@Persisted` getters report themselves to a recorder instead
/// of reading a value, and whose links return further recording instances.
/// A key path of a ``Projection`` is applied to a projection of such an
/// instance, so its `@Projected` properties lead to the stored ones.
enum KeyPathNames {
    private static let cache = LockedValue<[AnyKeyPath: [PropertySchema]]>([:])

    /// The properties `keyPath` goes through from `root`, outermost first.
    ///
    /// A key path that is not a chain of `@Persisted` properties (a property
    /// without `@Persisted`, a computed property that reads several) stops the
    /// program with a message naming it, as Realm does.
    static func properties(of keyPath: AnyKeyPath, from root: any _ResultsElement.Type,
                           use: String = "queries, sorting and aggregates") -> [PropertySchema] {
        if let known = cache.withLock({ $0[keyPath] }) {
            return known
        }
        let properties = record(keyPath, from: root, use: use)
        cache.withLock { $0[keyPath] = properties }
        return properties
    }

    /// The stored names of `keyPath`, joined with dots: `owner.first_name`.
    static func storedPath(of keyPath: AnyKeyPath, from root: any _ResultsElement.Type) -> String {
        properties(of: keyPath, from: root).map(\.persistedName).joined(separator: ".")
    }

    private static func record(_ keyPath: AnyKeyPath, from root: any _ResultsElement.Type, use: String) -> [PropertySchema] {
        let object = root._cofferRootType.init()
        let recorder = KeyPathRecorder(start: object)
        object.keyPathRecorder = recorder
        let value = read(keyPath, of: root, object)
        if recorder.properties.isEmpty, let plain = value as? any PersistedProperty,
           let index = ModelSchema.persistedChildren(of: object).firstIndex(where: { $0.property.boxIdentity == plain.boxIdentity }) {
            // `let owners = LinkingObjects(...)` is read without a getter of ours.
            return [ModelSchema.forObject(object).properties[index]]
        }
        guard !recorder.properties.isEmpty, recorder.isChain else {
            fatalError("Coffer: the key path \(keyPath) of \(root) is not a chain of @Persisted properties; \(use) need stored properties")
        }
        if recorder.endsInComputedValue(of: recorder.projectedKeyPath ?? keyPath) {
            fatalError("Coffer: the key path \(keyPath) of \(root) reads a value computed from \(root._cofferRootType.className()).\(recorder.properties[0].name); \(use) need the stored property itself")
        }
        return recorder.properties
    }

    private static func read<Element: _ResultsElement>(_ keyPath: AnyKeyPath, of type: Element.Type, _ object: Object) -> Any? {
        let element = type._cofferElement(for: object)
        return element[keyPath: keyPath]
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
    /// The key paths of the properties recorded, as their getters received them.
    private var propertyKeyPaths: [AnyKeyPath] = []
    /// The key path of the root class that a `@Projected` property applied, if one did.
    var projectedKeyPath: AnyKeyPath?

    init(start: Object) {
        expected = ObjectIdentifier(start)
        objects.append(start)
    }

    /// Notes the property of `object` whose storage is `box`, and returns what
    /// the getter returns: for a link, a recording object of the linked class;
    /// otherwise the unmanaged value.
    func record<Value: _Persistable>(_ box: PersistedBox<Value>, in object: Object, wrapped: AnyKeyPath, storage: AnyKeyPath) -> Value {
        let property = ModelSchema.forObject(object).properties[box.schemaIndex(in: object, storage: storage)]
        if ObjectIdentifier(object) != expected {
            isChain = false
        }
        properties.append(property)
        propertyKeyPaths.append(wrapped)
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
        return box.value
    }

    /// True when `keyPath` goes on past the last stored property it reads
    /// (`\Person.lastName.localizedUppercase`), so that its value is not the
    /// property's. A computed value of the property's own type is caught only
    /// for a property of the key path's root class itself: Swift cannot rebuild
    /// a key path through links or from a superclass to compare.
    func endsInComputedValue(of keyPath: AnyKeyPath) -> Bool {
        if let last = properties.last, !yieldsValue(of: last.valueType, keyPath) {
            return true
        }
        guard propertyKeyPaths.count == 1, let read = propertyKeyPaths.first,
              type(of: read).rootType == type(of: keyPath).rootType
        else { return false }
        return read != keyPath
    }

    /// True if `keyPath` gives a value of the property's type, or an optional
    /// of it when it goes through optional links. Catches the computed values
    /// of another type (`\.name.count`) whatever class declares the property.
    private func yieldsValue<Value: _Persistable>(of property: Value.Type, _ keyPath: AnyKeyPath) -> Bool {
        let given = type(of: keyPath).valueType
        return given == Value.self || given == Value?.self
    }
}
