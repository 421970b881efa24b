// What List and MutableSet share on top of CollectionCore: building one from
// its location or its elements, reading its elements as stored or as Swift
// values, the keys of the objects it links to, and the pieces of their
// _Persistable conformances (kind, decoding and casting element by element).

internal import CCoffer

/// A collection property of single elements: a ``List`` or a ``MutableSet``.
protocol ElementCollection: AnyObject {
    associatedtype Element: _Persistable
    /// The C functions of its handles.
    static var functions: CollectionFunctions { get }
    /// Reads the element at a position of an open handle.
    static var getElement: (OpaquePointer?, UInt64, UnsafeMutablePointer<coffer_value>?) -> coffer_status { get }
    /// Reads every element of an open handle.
    static func storedElements(of handle: OpaquePointer, in database: Database) throws(CofferError) -> [StoredValue]

    var core: CollectionCore<[Element]> { get }
    init(core: CollectionCore<[Element]>)
}

extension ElementCollection {
    /// An unmanaged collection of `elements`.
    init(_ elements: [Element]) {
        self.init(core: CollectionCore(elements, Self.functions))
    }

    /// The live view of a managed collection.
    init(_ location: CollectionLocation) {
        self.init(core: CollectionCore(location, Self.functions))
    }

    /// Where a managed collection lives; nil while it is unmanaged.
    var managedLocation: CollectionLocation? { core.location }

    /// Every element as stored, read in one pass.
    var storedElements: [StoredValue] {
        core.storedElements(reading: { database, handle throws(CofferError) in
            try Self.storedElements(of: handle, in: database)
        })
    }

    /// Every element, read in one pass.
    var elementSnapshot: [Element] {
        core.elements(reading: { database, handle throws(CofferError) in
            try Self.storedElements(of: handle, in: database)
        })
    }

    /// The keys of the objects a managed collection links to, in its order.
    func objectKeys(at location: CollectionLocation) -> [UInt64] {
        core.objectKeys(at: location, get: Self.getElement)
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
