// What List and MutableSet share on top of CollectionCore: building one from
// its location or its elements, the public members of DatabaseCollection they
// answer from their core (database, count, iteration), reading their elements
// as stored or as Swift values, the keys of the objects they link to, and their
// _Persistable conformances but for decoding and casting.

internal import CCoffer

/// A collection property of single elements: a ``List`` or a ``MutableSet``.
///
/// Its extension supplies public members: Swift lets them witness the
/// requirements of the public protocols it refines (``DatabaseCollection``,
/// `RandomAccessCollection`, ``_Persistable``, ``ThreadConfined``), as Realm's
/// collections do.
protocol ElementCollection: AnyObject, DatabaseCollection, _Persistable where Element: _Persistable {
    /// How its kind of collection is read and stored.
    static var functions: ElementCollectionFunctions { get }

    /// Its contents; an unmanaged collection starts empty.
    var core: CollectionCore<[Element]> { get set }
    /// An empty unmanaged collection.
    init()
}

/// What differs between a list and a set below their public operations: the C
/// functions of their handles, reading their elements, and their stored form.
struct ElementCollectionFunctions: Sendable {
    let handle: CollectionFunctions
    /// `.list` or `.set`, in the property's kind.
    let kind: CollectionKind
    /// Reads the element at a position of an open handle.
    let getElement: @Sendable (OpaquePointer?, UInt64, UnsafeMutablePointer<coffer_value>?) -> coffer_status
    /// Reads every element of an open handle.
    let readElements: @Sendable (Database, OpaquePointer) throws(CofferError) -> [StoredValue]
    /// The elements as one stored value: `.list` or `.set`.
    let stored: @Sendable ([StoredValue]) -> StoredValue

    static let list = ElementCollectionFunctions(
        handle: .list, kind: .list, getElement: coffer_list_get,
        readElements: { database, list throws(CofferError) in try database.elements(ofList: list) },
        stored: { .list($0) })
    static let set = ElementCollectionFunctions(
        handle: .set, kind: .set, getElement: coffer_set_get,
        readElements: { database, set throws(CofferError) in try database.elements(ofSet: set) },
        stored: { .set($0) })
}

extension ElementCollection {
    public var _cofferDatabase: Database? { core.database }

    /// True once the object holding this collection was deleted (or its add
    /// cancelled); always false while unmanaged.
    public var isInvalidated: Bool { managedLocation?.owner.isGone ?? false }

    public var count: Int { core.count }

    /// `List<Int>(3 elements)`.
    public var description: String { "\(Self.self)(\(count) elements)" }

    /// The index of the first element equal to `element` (objects: the same
    /// stored object), or nil.
    public func index(of element: Element) -> Int? {
        let wanted = element._cofferEncoded.value
        return storedElements.firstIndex { $0.isSame(as: wanted) }
    }

    /// Iterates a snapshot of the elements, read in one pass.
    public func makeIterator() -> IndexingIterator<[Element]> {
        elementSnapshot.makeIterator()
    }

    public static var _cofferKind: _ValueKind { Element._cofferKind.inside(functions.kind) }
    public static var _cofferIsOptional: Bool { Element._cofferIsOptional }
    public static func _cofferDefaultValue() -> Self { Self() }

    public var _cofferEncoded: _StoredValue {
        _StoredValue(value: Self.functions.stored(storedElements))
    }

    public static func _cofferManagedView(_ property: _ManagedProperty) -> Self? {
        Self(property.location)
    }
}

extension ElementCollection {
    /// An unmanaged collection of `elements`.
    init(_ elements: [Element]) {
        self.init()
        core = CollectionCore(elements, Self.functions.handle)
    }

    /// The live view of a managed collection.
    init(_ location: CollectionLocation) {
        self.init()
        core = CollectionCore(location, Self.functions.handle)
    }

    /// Where a managed collection lives; nil while it is unmanaged.
    var managedLocation: CollectionLocation? { core.location }

    /// Every element as stored, read in one pass.
    var storedElements: [StoredValue] {
        core.storedElements(reading: Self.functions.readElements)
    }

    /// Every element, read in one pass.
    var elementSnapshot: [Element] {
        core.elements(reading: Self.functions.readElements)
    }

    /// The keys of the objects a managed collection links to, in its order.
    func objectKeys(at location: CollectionLocation) -> [UInt64] {
        core.objectKeys(at: location, get: Self.functions.getElement)
    }

    /// `stored` decoded element by element, or nil if one does not fit.
    static func decodedElements(_ stored: [StoredValue]) -> [Element]? {
        var elements: [Element] = []
        for element in stored {
            guard let value = Element._cofferDecode(_StoredValue(value: element)) else { return nil }
            elements.append(value)
        }
        return elements
    }

    /// `value` as elements: those of a collection of this type, or of an array
    /// whose items all fit; nil otherwise.
    static func castElements(_ value: Any) -> [Element]? {
        if let collection = value as? Self {
            return decodedElements(collection.storedElements)
        }
        guard let array = value as? [Any] else { return nil }
        var elements: [Element] = []
        for item in array {
            guard let element = Element._cofferCast(item) else { return nil }
            elements.append(element)
        }
        return elements
    }
}

extension _ManagedProperty {
    /// Where the collection this property holds lives.
    var location: CollectionLocation { CollectionLocation(owner: owner, index: index) }
}
