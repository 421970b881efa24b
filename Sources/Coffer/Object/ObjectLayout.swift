// Where the storage boxes of an Object subclass's @Persisted properties lie in
// its instances, found once per class.

@_spi(Reflection) import Swift

/// Where the storage boxes of an ``Object`` subclass's `@Persisted` properties lie
/// inside its instances, found once per class.
///
/// Adding, copying or binding an object walks all its properties. Mirror does
/// that per object by resolving every field's type from its mangled name, which
/// cost more than the database work itself; with the layout, an object's boxes
/// are read at known offsets. The offsets come from the runtime's field list
/// and are checked against the boxes Mirror finds on the instance schema
/// discovery creates; a class whose fields cannot be listed, or that has a
/// property without a box (`LinkingObjects` declared without `@Persisted`),
/// has no layout, and Mirror is used for it.
struct ObjectLayout: Sendable {
    /// `_EachFieldOptions.classType`, which the standard library declares as a
    /// `static var` that strict concurrency will not let us read. Were the value
    /// to change, listing a class's fields would fail, and Mirror would be used.
    private static let classFields = _EachFieldOptions(rawValue: 1 << 0)

    /// The byte offset of each property's box reference, in schema order.
    let boxOffsets: [Int]

    /// The layout of `object`'s class, or nil; `children` are the properties
    /// Mirror found on `object`, superclasses first, as the schema lists them.
    init?(of object: Object, children: [(label: String, property: any PersistedProperty)]) {
        var offsets: [Int] = []
        var everyPropertyHasABox = true
        let listed = _forEachField(of: type(of: object), options: Self.classFields) { _, offset, fieldType, _ in
            guard let property = fieldType as? any PersistedProperty.Type else { return true }
            guard let boxOffset = property.boxOffset else {
                everyPropertyHasABox = false
                return false
            }
            offsets.append(offset + boxOffset)
            return true
        }
        guard listed, everyPropertyHasABox, offsets.count == children.count else { return nil }
        for (offset, child) in zip(offsets, children)
        where ObjectIdentifier(Self.box(at: offset, in: object)) != child.property.boxIdentity {
            return nil
        }
        boxOffsets = offsets
    }

    /// The box whose reference is at `offset` in `object`, which must be an
    /// instance of the class the layout was made for.
    static func box(at offset: Int, in object: Object) -> AnyPersistedBox {
        withExtendedLifetime(object) {
            Unmanaged.passUnretained(object).toOpaque().load(fromByteOffset: offset, as: AnyPersistedBox.self)
        }
    }
}
