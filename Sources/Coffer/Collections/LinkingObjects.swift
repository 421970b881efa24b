// LinkingObjects: the read-only, always current backlinks of an object, their
// schema discovery and their _Persistable conformance.

internal import CCoffer

/// The objects that link to an object: its backlinks, read-only and always current.
///
/// ```swift
/// final class Person: Object {
///     @Persisted var dogs: List<Dog>
/// }
/// final class Dog: Object {
///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
///     // or, in Realm's older form:
///     let walkers = LinkingObjects(fromType: Person.self, property: "walkedDogs")
/// }
/// ```
///
/// The origin property is a link, a `List` or a `MutableSet` of links to this
/// class. An object linked twice from one list appears twice. An unmanaged
/// object has no backlinks.
public final class LinkingObjects<Element: Object>: DatabaseCollection {
    let propertyName: String
    /// The object this belongs to, for the plain (not `@Persisted`) form.
    private weak var owner: Object?
    private var location: CollectionLocation?

    /// The objects of `fromType` that link to this object through `property`.
    public init(fromType: Element.Type, property: String) {
        propertyName = property
    }

    init(propertyName: String, location: CollectionLocation) {
        self.propertyName = propertyName
        self.location = location
    }

    var currentLocation: CollectionLocation? {
        if let location { return location }
        guard let managed = owner?.managedState,
              let index = managed.binding.schema.properties.firstIndex(where: { $0.kind == .linkingObjects && $0.objectType == Element.self && $0.originProperty == Element.propertiesMapping()[propertyName] ?? propertyName })
        else { return nil }
        return CollectionLocation(owner: managed, index: index)
    }

    public var _cofferDatabase: Database? { currentLocation?.database }

    /// True once the object they link to was deleted; false while it is unmanaged.
    public var isInvalidated: Bool { currentLocation?.owner.isGone ?? false }

    /// The position of `object` among the linking objects, or nil.
    public func index(of object: Element) -> Int? {
        guard let location = currentLocation, let managed = object.managedState,
              managed.database.handle == location.database.handle, managed.binding.schema.objectType == Element.self
        else { return nil }
        return objectKeys(at: location).firstIndex(of: managed.key)
    }

    public var count: Int {
        guard let location = currentLocation else { return 0 }
        return location.withBacklinks { object, propertyId in
            var count: UInt64 = 0
            try CofferError.check(coffer_object_backlink_count(object, propertyId, &count))
            return Int(count)
        }
    }

    /// `LinkingObjects<Person>(2 objects)`.
    public var description: String { "\(Self.self)(\(count) objects)" }

    public subscript(position: Int) -> Element {
        let all = objects
        checkIndex(position, all.count, in: "the linking objects")
        return all[position]
    }

    /// Iterates a snapshot of the linking objects, read in one pass.
    public func makeIterator() -> IndexingIterator<[Element]> {
        objects.makeIterator()
    }

    private var objects: [Element] {
        guard let location = currentLocation else { return [] }
        let database = location.database
        let binding: ClassBinding
        do {
            binding = try database.binding(for: Element.self)
        } catch {
            database.fail(error)
        }
        return objectKeys(at: location).map { database.makeObject(Element.self, binding, $0) }
    }

    /// The keys of the linking objects, in backlink order.
    func objectKeys(at location: CollectionLocation) -> [UInt64] {
        location.backlinkKeys()
    }
}

extension CollectionLocation {
    /// The keys of the objects linking to the owner through this
    /// linking-objects property, in backlink order: an object once per link.
    func backlinkKeys() -> [UInt64] {
        withBacklinks { object, propertyId in
            var iterator: OpaquePointer?
            try CofferError.check(coffer_object_backlinks(object, propertyId, &iterator))
            defer { coffer_iter_free(iterator) }
            var keys: [UInt64] = []
            while true {
                var origin: OpaquePointer?
                let status = coffer_iter_next(iterator, &origin)
                if status == COFFER_DONE { break }
                try CofferError.check(status)
                keys.append(coffer_object_key_of(origin))
            }
            return keys
        }
    }
}

extension CollectionLocation {
    /// Runs `body` with the owner's handle and the linking-objects property id.
    func withBacklinks<Result>(_ body: (OpaquePointer, UInt32) throws -> Result) -> Result {
        let access = database.frozenAccess(); defer { access?.unlock() }
        owner.requireUsable()
        do {
            let txn = try database.currentTransaction()
            let object = try database.objectHandle(txn, owner.binding, owner.key)
            defer { coffer_object_release(object) }
            return try body(object, propertyId)
        } catch {
            fatalError("Coffer: \(error)")
        }
    }
}

/// What schema discovery needs from linking objects, and how the plain form
/// learns its object.
protocol LinkOriginDescribing {
    var linkOrigin: (type: Object.Type, property: String)? { get }
}

extension LinkingObjects: LinkOriginDescribing {
    var linkOrigin: (type: Object.Type, property: String)? { (Element.self, propertyName) }
}

extension LinkingObjects: OwnerAttached {
    func attach(to object: Object, at index: Int) { owner = object }
}

/// The plain form, `let owners = LinkingObjects(fromType:property:)`, is found by Mirror.
extension LinkingObjects: PersistedProperty {
    var isPrimaryKey: Bool { false }
    var isIndexed: Bool { false }
    var boxIdentity: ObjectIdentifier { ObjectIdentifier(self) }
    var valueType: any _Persistable.Type { LinkingObjects<Element>.self }
    var storedValue: StoredValue { .null }
    func setStoredValue(_ stored: StoredValue) -> Bool { false }
    static var boxOffset: Int? { nil }
}

extension LinkingObjects: _Persistable {
    public static var _cofferKind: _ValueKind { _ValueKind(kind: .linkingObjects) }
    public static func _cofferDefaultValue() -> LinkingObjects<Element> {
        LinkingObjects(fromType: Element.self, property: "")
    }
    public static func _cofferDecode(_ stored: _StoredValue) -> LinkingObjects<Element>? { nil }
    public var _cofferEncoded: _StoredValue { _StoredValue(value: .null) }
    public static func _cofferManagedView(_ property: _ManagedProperty) -> LinkingObjects<Element>? {
        let origin = property.owner.binding.schema.properties[property.index].originProperty ?? ""
        return LinkingObjects(propertyName: origin, location: CollectionLocation(owner: property.owner, index: property.index))
    }
}
