// Checks an uploaded changeset against the partition's schema before it is
// merged: known top-level classes, primary keys of the key's type, existing
// properties used by the operation their kind allows, and values of the
// property's type. A violation is BAD_CHANGESET naming what was wrong.
import CofferSyncProtocol

/// A changeset that does not apply to the partition's schema.
struct BadChangeset: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The `coffer_type` values that property descriptions carry (include/coffer.h).
enum CofferType {
    static let bool: UInt64 = 1, int: UInt64 = 2, float: UInt64 = 3, double: UInt64 = 4, string: UInt64 = 5,
               binary: UInt64 = 6, date: UInt64 = 7, objectId: UInt64 = 8, uuid: UInt64 = 9, decimal128: UInt64 = 10,
               link: UInt64 = 11, mixed: UInt64 = 12

    static let scalarTags: [UInt64: SyncValue.Tag] = [
        bool: .bool, int: .int, float: .float, double: .double, string: .string, binary: .binary,
        date: .date, objectId: .objectId, uuid: .uuid, decimal128: .decimal128,
    ]
}

struct ChangeValidator {
    let schema: SyncSchema

    func validate(_ changeset: Changeset, origin: ClientID) throws {
        var seqs = Set<UInt64>()
        for (index, change) in changeset.changes.enumerated() {
            do {
                try validate(change)
                if case .listInsert(_, _, _, let id, _, _) = change {
                    guard id.clock == changeset.clock, id.client == origin else {
                        throw BadChangeset("a list insert's element id must carry the changeset's clock and client id")
                    }
                    guard seqs.insert(id.seq).inserted else {
                        throw BadChangeset("two list inserts share element seq \(id.seq)")
                    }
                }
            } catch let error as BadChangeset {
                throw BadChangeset("changeset \(changeset.clientVersion), change \(index + 1): \(error.description)")
            }
        }
    }

    func validate(_ change: Change) throws {
        let (className, pk) = change.object
        guard let cls = schema.class(className) else { throw BadChangeset("unknown class '\(className)'") }
        guard !cls.isEmbedded else {
            throw BadChangeset("class '\(className)' is embedded: its objects change through their owner")
        }
        guard let pkProperty = cls.property(cls.primaryKey) else {
            throw BadChangeset("class '\(className)' has no primary key property '\(cls.primaryKey)'")
        }
        guard pk != .null, let tag = CofferType.scalarTags[pkProperty.type], pk.tag == tag else {
            throw BadChangeset("primary key of '\(className)' must be a non-null \(pkProperty.type == CofferType.int ? "int" : "value of type \(pkProperty.type)")")
        }
        switch change {
        case .create(_, _, let props), .update(_, _, let props):
            var seen = Set<String>()
            for p in props {
                guard seen.insert(p.name).inserted else {
                    throw BadChangeset("property '\(className).\(p.name)' is set twice")
                }
                guard p.name != cls.primaryKey else {
                    throw BadChangeset("the primary key '\(className).\(p.name)' cannot be set by a change")
                }
                let prop = try property(cls, p.name)
                guard !prop.isCollection else {
                    throw BadChangeset("'\(className).\(p.name)' is a collection: it changes by list, set or map operations")
                }
                try check(p.value, against: prop, element: false, path: "\(className).\(p.name)")
            }
        case .delete:
            break
        case .evict:
            throw BadChangeset("EVICT of \(className) is a change only the service sends")
        case .listInsert(_, _, let name, _, _, let value), .listSet(_, _, let name, _, let value):
            let prop = try collection(cls, name, list: true)
            try check(value, against: prop, element: true, path: "\(className).\(name)")
        case .listErase(_, _, let name, _):
            _ = try collection(cls, name, list: true)
        case .setAdd(_, _, let name, let value), .setRemove(_, _, let name, let value):
            let prop = try property(cls, name)
            guard prop.isSet else { throw BadChangeset("'\(className).\(name)' is not a set") }
            try check(value, against: prop, element: true, path: "\(className).\(name)")
        case .mapPut(_, _, let name, _, let value):
            let prop = try property(cls, name)
            guard prop.isMap else { throw BadChangeset("'\(className).\(name)' is not a map") }
            try check(value, against: prop, element: true, path: "\(className).\(name)")
        case .mapRemove(_, _, let name, _):
            let prop = try property(cls, name)
            guard prop.isMap else { throw BadChangeset("'\(className).\(name)' is not a map") }
        }
    }

    private func property(_ cls: SchemaClass, _ name: String) throws -> SchemaProperty {
        guard let prop = cls.property(name) else { throw BadChangeset("unknown property '\(cls.name).\(name)'") }
        return prop
    }

    private func collection(_ cls: SchemaClass, _ name: String, list: Bool) throws -> SchemaProperty {
        let prop = try property(cls, name)
        guard prop.isList else { throw BadChangeset("'\(cls.name).\(name)' is not a list") }
        return prop
    }

    /// Whether `value` fits `prop` (as a whole property, or as one element of
    /// its collection when `element` is set).
    func check(_ value: SyncValue, against prop: SchemaProperty, element: Bool, path: String, depth: Int = 0) throws {
        if !element && prop.isCollection {
            // An embedded object's collection travels as a whole value.
            switch value {
            case .list(let items) where prop.isList || prop.isSet:
                for item in items { try check(item, against: prop, element: true, path: path, depth: depth) }
            case .map(let entries) where prop.isMap:
                for entry in entries { try check(entry.value, against: prop, element: true, path: path, depth: depth) }
            default:
                throw BadChangeset("'\(path)' takes a collection, not a \(value.tag)")
            }
            return
        }
        if value == .null {
            guard prop.isOptional || prop.type == CofferType.mixed || (prop.type == CofferType.link && !element) else {
                throw BadChangeset("'\(path)' is not optional: null is not a value of it")
            }
            return
        }
        switch prop.type {
        case CofferType.mixed:
            try checkMixed(value, path: path, depth: depth)
        case CofferType.link:
            guard let target = schema.class(prop.target) else {
                throw BadChangeset("'\(path)' links to unknown class '\(prop.target)'")
            }
            if target.isEmbedded {
                try checkEmbedded(value, of: target, path: path, depth: depth)
            } else {
                try checkLink(value, to: target, path: path)
            }
        default:
            guard let tag = CofferType.scalarTags[prop.type] else {
                throw BadChangeset("'\(path)' (type \(prop.type)) holds no synced values")
            }
            guard value.tag == tag else { throw BadChangeset("'\(path)' takes a \(tag), not a \(value.tag)") }
        }
    }

    private func checkLink(_ value: SyncValue, to target: SchemaClass, path: String) throws {
        guard case .link(let className, let pk) = value, className == target.name else {
            throw BadChangeset("'\(path)' takes a link to '\(target.name)', not \(describe(value))")
        }
        guard let pkProperty = target.property(target.primaryKey), let tag = CofferType.scalarTags[pkProperty.type],
              pk.tag == tag else {
            throw BadChangeset("'\(path)' links to '\(target.name)' with a primary key of the wrong type")
        }
    }

    private func checkEmbedded(_ value: SyncValue, of cls: SchemaClass, path: String, depth: Int) throws {
        guard case .embedded(let className, let props) = value, className == cls.name else {
            throw BadChangeset("'\(path)' takes an embedded '\(cls.name)', not \(describe(value))")
        }
        guard depth < WireLimits.maxNesting else { throw BadChangeset("'\(path)' nests too deep") }
        for p in props {
            guard let prop = cls.property(p.name) else {
                throw BadChangeset("unknown property '\(cls.name).\(p.name)' in '\(path)'")
            }
            try check(p.value, against: prop, element: false, path: "\(path).\(p.name)", depth: depth + 1)
        }
    }

    private func checkMixed(_ value: SyncValue, path: String, depth: Int) throws {
        switch value {
        case .link(let className, _):
            guard let target = schema.class(className), !target.isEmbedded else {
                throw BadChangeset("'\(path)' holds a link to unknown class '\(className)'")
            }
            try checkLink(value, to: target, path: path)
        case .embedded:
            throw BadChangeset("'\(path)' is mixed: it cannot hold an embedded object")
        case .list(let items):
            for item in items { try checkMixed(item, path: path, depth: depth + 1) }
        case .map(let entries):
            for entry in entries { try checkMixed(entry.value, path: path, depth: depth + 1) }
        default:
            break
        }
    }

    private func describe(_ value: SyncValue) -> String {
        switch value {
        case .link(let c, _): "a link to '\(c)'"
        case .embedded(let c, _): "an embedded '\(c)'"
        default: "a \(value.tag)"
        }
    }
}
