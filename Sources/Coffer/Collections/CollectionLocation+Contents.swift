// The whole contents of the collection at a location, read as plain values
// (links as class and key, nested lists and maps in full), for comparing one
// version of a collection with another.

internal import CCoffer

extension CollectionLocation {
    /// The list (`.list`) or map (`.map`) at this location as it is now in
    /// its database, read whole: nil when the place no longer holds a
    /// collection of `kind` (the owner was deleted, the mixed value was
    /// replaced by another kind of value, a list position is gone).
    /// - Throws: what reading the file fails with otherwise.
    func contents(_ kind: CollectionKind) throws(CofferError) -> StoredValue? {
        let access = database.frozenAccess(); defer { access?.unlock() }
        do {
            let object = try owner.objectHandle()
            guard coffer_object_is_valid(object) != 0 else { return nil }
            let handle = try path.isEmpty
                ? CCollectionReading.open(kind, object: object, property: propertyId)
                : openNested(object, leaf: kind)
            defer { kind.release(handle) }
            return kind == .map
                ? .map(try CCollectionReading.entries(ofMap: handle, Self.plainValue))
                : .list(try CCollectionReading.elements(ofList: handle, Self.plainValue))
        } catch let error where [CofferError.Code.notFound, .type, .invalidArgument].contains(error.code) {
            return nil
        }
    }

    /// A value read from the C core as a plain stored value: a link as its
    /// class and key, a nested list or map with its contents.
    private static func plainValue(_ value: coffer_value, _ open: CollectionOpener) throws(CofferError) -> StoredValue {
        switch value.type {
        case COFFER_TYPE_LINK:
            return .link(classId: value.u.link.class_id, key: value.u.link.key)
        case COFFER_TYPE_LIST:
            let list = try open(.list)
            defer { coffer_list_release(list) }
            return .list(try CCollectionReading.elements(ofList: list, plainValue))
        case COFFER_TYPE_MAP:
            let map = try open(.map)
            defer { coffer_map_release(map) }
            return .map(try CCollectionReading.entries(ofMap: map, plainValue))
        default:
            return StoredValue(copying: value)
        }
    }
}
