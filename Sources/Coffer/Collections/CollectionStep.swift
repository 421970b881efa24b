// The steps from a mixed property down to a list or map nested in it: a
// position in a list or a key in a map, and opening the nested collection they
// lead to, one C handle per level.

internal import CCoffer

/// One step down from a list or map of mixed values to a collection nested in
/// it: the element at a position of a list, or the value under a key of a map.
enum CollectionStep: Equatable, CustomStringConvertible {
    case index(Int)
    case key(String)

    /// The kind of collection this step goes down from.
    var container: CollectionKind {
        switch self {
        case .index: .list
        case .key: .map
        }
    }

    /// `[2]` or `["key"]`, for messages.
    var description: String {
        switch self {
        case .index(let index): "[\(index)]"
        case .key(let key): "[\"\(key)\"]"
        }
    }

    /// Opens the collection of `kind` nested at this step of `container`, an
    /// open handle of ``container``'s kind.
    func open(_ kind: CollectionKind, in container: OpaquePointer) throws(CofferError) -> OpaquePointer {
        try openHandle { handle in
            switch (self, kind) {
            case (.index(let index), .map): coffer_list_get_map(container, UInt64(index), handle)
            case (.index(let index), _): coffer_list_get_list(container, UInt64(index), handle)
            case (.key(let key), .map): coffer_map_get_map(container, key, key.utf8.count, handle)
            case (.key(let key), _): coffer_map_get_list(container, key, key.utf8.count, handle)
            }
        }
    }
}

extension CollectionKind {
    /// Gives back an open handle of this kind of collection.
    func release(_ handle: OpaquePointer) {
        switch self {
        case .map: coffer_map_release(handle)
        case .set: coffer_set_release(handle)
        default: coffer_list_release(handle)
        }
    }
}

extension CollectionLocation {
    /// Opens the collection of kind `leaf` at the end of ``path``: the
    /// collection the mixed property holds, then each nested one in turn.
    func openNested(_ object: OpaquePointer, leaf: CollectionKind) throws(CofferError) -> OpaquePointer {
        var kind = path[0].container
        var handle = try CCollectionReading.open(kind, object: object, property: propertyId)
        for (position, step) in path.enumerated() {
            let next = position + 1 < path.count ? path[position + 1].container : leaf
            let nested = Result { () throws(CofferError) in try step.open(next, in: handle) }
            kind.release(handle)  // a nested handle belongs to its collection alone
            handle = try nested.get()
            kind = next
        }
        return handle
    }
}
