// Reading the collections of the C core element by element, shared by the
// database's value reading and the migration's: each element comes with an
// opener for the nested list or map it may stand for, so that the caller turns
// elements into its own form (stored values, or plain Swift values).

internal import CCoffer

/// Opens the collection that a value read from the C core stands for.
typealias CollectionOpener = (CollectionKind) throws(CofferError) -> OpaquePointer

/// Opens a handle through a C call that fills it in.
func openHandle(_ open: (UnsafeMutablePointer<OpaquePointer?>) -> coffer_status) throws(CofferError) -> OpaquePointer {
    var handle: OpaquePointer?
    try CofferError.check(open(&handle))
    return handle!
}

enum CCollectionReading {
    /// Opens the collection of `kind` that property `property` of `object` holds.
    static func open(_ kind: CollectionKind, object: OpaquePointer, property: UInt32) throws(CofferError) -> OpaquePointer {
        try openHandle { handle in
            switch kind {
            case .set: coffer_object_get_set(object, property, handle)
            case .map: coffer_object_get_map(object, property, handle)
            default: coffer_object_get_list(object, property, handle)
            }
        }
    }

    /// A set element holds no collection.
    static func noNested(_ kind: CollectionKind) throws(CofferError) -> OpaquePointer {
        throw CofferError(.type, "a set element cannot be a collection")
    }

    /// The element at `index` of `list`, read by `read`.
    static func element<Element>(
        ofList list: OpaquePointer, at index: UInt64,
        _ read: (coffer_value, CollectionOpener) throws(CofferError) -> Element
    ) throws(CofferError) -> Element {
        var value = coffer_value()
        try CofferError.check(coffer_list_get(list, index, &value))
        return try read(value) { kind throws(CofferError) in
            guard kind != .set else { throw CofferError(.type, "a list element cannot be a set") }
            return try openHandle { handle in
                kind == .map ? coffer_list_get_map(list, index, handle) : coffer_list_get_list(list, index, handle)
            }
        }
    }

    /// Every element of `list`, read by `read`.
    static func elements<Element>(
        ofList list: OpaquePointer, _ read: (coffer_value, CollectionOpener) throws(CofferError) -> Element
    ) throws(CofferError) -> [Element] {
        try positions(of: list, counted: coffer_list_count) { index throws(CofferError) in
            try element(ofList: list, at: index, read)
        }
    }

    /// Every element of `set`, read by `read`.
    static func elements<Element>(
        ofSet set: OpaquePointer, _ read: (coffer_value, CollectionOpener) throws(CofferError) -> Element
    ) throws(CofferError) -> [Element] {
        try positions(of: set, counted: coffer_set_count) { index throws(CofferError) in
            var value = coffer_value()
            try CofferError.check(coffer_set_get(set, index, &value))
            return try read(value, noNested)
        }
    }

    /// The value of `map` under `key`, already read as `value`, read by `read`.
    static func value<Element>(
        ofMap map: OpaquePointer, key: String, _ value: coffer_value,
        _ read: (coffer_value, CollectionOpener) throws(CofferError) -> Element
    ) throws(CofferError) -> Element {
        try read(value) { kind throws(CofferError) in
            guard kind != .set else { return try noNested(kind) }
            return try openHandle { handle in
                kind == .map
                    ? coffer_map_get_map(map, key, key.utf8.count, handle)
                    : coffer_map_get_list(map, key, key.utf8.count, handle)
            }
        }
    }

    /// Every entry of `map`, its values read by `read`.
    static func entries<Element>(
        ofMap map: OpaquePointer, _ read: (coffer_value, CollectionOpener) throws(CofferError) -> Element
    ) throws(CofferError) -> [(key: String, value: Element)] {
        try positions(of: map, counted: coffer_map_count) { index throws(CofferError) in
            var key = coffer_bytes()
            var value = coffer_value()
            try CofferError.check(coffer_map_get_entry(map, index, &key, &value))
            let name = String(decoding: UnsafeRawBufferPointer(start: key.data, count: key.size), as: UTF8.self)
            return (name, try self.value(ofMap: map, key: name, value, read))
        }
    }

    /// `each` of every position of `handle`, whose size `count` tells.
    private static func positions<Element>(
        of handle: OpaquePointer, counted count: (OpaquePointer?, UnsafeMutablePointer<UInt64>?) -> coffer_status,
        _ each: (UInt64) throws(CofferError) -> Element
    ) throws(CofferError) -> [Element] {
        var size: UInt64 = 0
        try CofferError.check(count(handle, &size))
        var result: [Element] = []
        result.reserveCapacity(Int(size))
        for index in 0..<size {
            result.append(try each(index))
        }
        return result
    }
}
