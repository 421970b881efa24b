// Changesets (docs/SYNC.md, "Changesets"): the changes of one local commit,
// all stamped with the commit's clock and the origin client id, and the list
// element ids that make list inserts replicate.

/// A stamp orders two changes: by clock, then by client id bytes.
public struct Stamp: Hashable, Comparable, Sendable {
    public var clock: UInt64
    public var client: ClientID

    public init(clock: UInt64, client: ClientID) {
        self.clock = clock
        self.client = client
    }

    public static func < (a: Stamp, b: Stamp) -> Bool {
        a.clock != b.clock ? a.clock < b.clock : a.client < b.client
    }

    /// 24 bytes whose memcmp order is the stamp order: the clock big-endian,
    /// then the client id (how the service stores stamps in `bytea`).
    public var sortKey: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: clock >> UInt64(56 - 8 * $0)) } + client.bytes
    }

    public init(sortKey: [UInt8]) throws {
        guard sortKey.count == 24 else { throw WireError("a stored stamp is 24 bytes, not \(sortKey.count)") }
        clock = sortKey[0..<8].reduce(0) { ($0 << 8) | UInt64($1) }
        client = ClientID(bytes: Array(sortKey[8..<24]))
    }
}

/// A list element's id: the inserting changeset's clock and client, and the
/// insert's number within that changeset.
public struct ElementID: Hashable, Comparable, Sendable {
    public var clock: UInt64
    public var client: ClientID
    public var seq: UInt64

    public init(clock: UInt64, client: ClientID, seq: UInt64) {
        self.clock = clock
        self.client = client
        self.seq = seq
    }

    /// The insert's stamp.
    public var stamp: Stamp { Stamp(clock: clock, client: client) }

    public static func < (a: ElementID, b: ElementID) -> Bool {
        a.stamp != b.stamp ? a.stamp < b.stamp : a.seq < b.seq
    }

    /// 32 bytes whose memcmp order is the id order (clock, client, seq big-endian).
    public var sortKey: [UInt8] {
        stamp.sortKey + (0..<8).map { UInt8(truncatingIfNeeded: seq >> UInt64(56 - 8 * $0)) }
    }

    public init(sortKey: [UInt8]) throws {
        guard sortKey.count == 32 else { throw WireError("a stored element id is 32 bytes, not \(sortKey.count)") }
        let stamp = try Stamp(sortKey: Array(sortKey[0..<24]))
        clock = stamp.clock
        client = stamp.client
        seq = sortKey[24..<32].reduce(0) { ($0 << 8) | UInt64($1) }
    }

    func encode(to w: inout WireWriter) {
        w.u64le(clock)
        w.raw(client.bytes)
        w.varint(seq)
    }

    static func decode(from r: inout WireReader) throws -> ElementID {
        ElementID(clock: try r.u64le("element id clock"), client: try r.id16("element id client"),
                  seq: try r.varint("element id seq"))
    }
}

/// One change of a changeset. Every change names its object by class and
/// primary key.
public enum Change: Hashable, Sendable {
    case create(class: String, pk: SyncValue, properties: [SyncValue.SyncProperty])
    case update(class: String, pk: SyncValue, properties: [SyncValue.SyncProperty])
    case delete(class: String, pk: SyncValue)
    case listInsert(class: String, pk: SyncValue, property: String, id: ElementID, after: ElementID?, value: SyncValue)
    case listErase(class: String, pk: SyncValue, property: String, id: ElementID)
    case listSet(class: String, pk: SyncValue, property: String, id: ElementID, value: SyncValue)
    case setAdd(class: String, pk: SyncValue, property: String, value: SyncValue)
    case setRemove(class: String, pk: SyncValue, property: String, value: SyncValue)
    case mapPut(class: String, pk: SyncValue, property: String, key: String, value: SyncValue)
    case mapRemove(class: String, pk: SyncValue, property: String, key: String)
    /// Protocol 3, service to client only: the object left a flexible-sync
    /// client's view; it is removed from the file without a tombstone.
    case evict(class: String, pk: SyncValue)

    public var op: UInt8 {
        switch self {
        case .create: 1
        case .update: 2
        case .delete: 3
        case .listInsert: 4
        case .listErase: 5
        case .listSet: 6
        case .setAdd: 7
        case .setRemove: 8
        case .mapPut: 9
        case .mapRemove: 10
        case .evict: 11
        }
    }

    /// The object the change is about.
    public var object: (className: String, pk: SyncValue) {
        switch self {
        case .create(let c, let pk, _), .update(let c, let pk, _), .delete(let c, let pk), .evict(let c, let pk),
             .listInsert(let c, let pk, _, _, _, _), .listErase(let c, let pk, _, _),
             .listSet(let c, let pk, _, _, _), .setAdd(let c, let pk, _, _),
             .setRemove(let c, let pk, _, _), .mapPut(let c, let pk, _, _, _),
             .mapRemove(let c, let pk, _, _):
            (c, pk)
        }
    }

    func encode(to w: inout WireWriter) {
        w.byte(op)
        let (cls, pk) = object
        w.string(cls)
        pk.encode(to: &w)
        switch self {
        case .create(_, _, let props), .update(_, _, let props):
            w.varint(props.count)
            for p in props {
                w.string(p.name)
                p.value.encode(to: &w)
            }
        case .delete, .evict:
            break
        case .listInsert(_, _, let prop, let id, let after, let value):
            w.string(prop)
            id.encode(to: &w)
            if let after {
                w.byte(1)
                after.encode(to: &w)
            } else {
                w.byte(0)
            }
            value.encode(to: &w)
        case .listErase(_, _, let prop, let id):
            w.string(prop)
            id.encode(to: &w)
        case .listSet(_, _, let prop, let id, let value):
            w.string(prop)
            id.encode(to: &w)
            value.encode(to: &w)
        case .setAdd(_, _, let prop, let value), .setRemove(_, _, let prop, let value):
            w.string(prop)
            value.encode(to: &w)
        case .mapPut(_, _, let prop, let key, let value):
            w.string(prop)
            w.string(key)
            value.encode(to: &w)
        case .mapRemove(_, _, let prop, let key):
            w.string(prop)
            w.string(key)
        }
    }

    static func decode(from r: inout WireReader) throws -> Change {
        let at = r.offset
        let op = try r.byte("change op")
        guard (1...11).contains(op) else { throw WireError("unknown change op \(op) at byte \(at)") }
        let cls = try r.string("change class")
        let pk = try SyncValue.decode(from: &r)
        switch op {
        case 1, 2:
            let n = try r.count("property count", minimumItemBytes: 2)
            var props: [SyncValue.SyncProperty] = []
            props.reserveCapacity(n)
            for _ in 0..<n {
                let name = try r.string("property name")
                props.append(.init(name, try SyncValue.decode(from: &r)))
            }
            return op == 1 ? .create(class: cls, pk: pk, properties: props)
                           : .update(class: cls, pk: pk, properties: props)
        case 3:
            return .delete(class: cls, pk: pk)
        case 11:
            return .evict(class: cls, pk: pk)
        case 4:
            let prop = try r.string("list property")
            let id = try ElementID.decode(from: &r)
            let anchorAt = r.offset
            let anchor: ElementID?
            switch try r.byte("list anchor flag") {
            case 0: anchor = nil
            case 1: anchor = try ElementID.decode(from: &r)
            case let b: throw WireError("list anchor flag \(b) at byte \(anchorAt) is neither 0 nor 1")
            }
            return .listInsert(class: cls, pk: pk, property: prop, id: id, after: anchor,
                               value: try SyncValue.decode(from: &r))
        case 5:
            let prop = try r.string("list property")
            return .listErase(class: cls, pk: pk, property: prop, id: try ElementID.decode(from: &r))
        case 6:
            let prop = try r.string("list property")
            let id = try ElementID.decode(from: &r)
            return .listSet(class: cls, pk: pk, property: prop, id: id, value: try SyncValue.decode(from: &r))
        case 7, 8:
            let prop = try r.string("set property")
            let value = try SyncValue.decode(from: &r)
            return op == 7 ? .setAdd(class: cls, pk: pk, property: prop, value: value)
                           : .setRemove(class: cls, pk: pk, property: prop, value: value)
        case 9:
            let prop = try r.string("map property")
            let key = try r.string("map key")
            return .mapPut(class: cls, pk: pk, property: prop, key: key, value: try SyncValue.decode(from: &r))
        default:
            let prop = try r.string("map property")
            return .mapRemove(class: cls, pk: pk, property: prop, key: try r.string("map key"))
        }
    }
}

/// The changes of one local commit.
public struct Changeset: Hashable, Sendable {
    /// The origin client's commit version.
    public var clientVersion: UInt64
    /// The commit's hybrid logical clock; with the origin client id, the stamp
    /// of every change.
    public var clock: UInt64
    public var changes: [Change]

    public init(clientVersion: UInt64, clock: UInt64, changes: [Change]) {
        self.clientVersion = clientVersion
        self.clock = clock
        self.changes = changes
    }

    public func encode(to w: inout WireWriter) {
        w.varint(clientVersion)
        w.u64le(clock)
        w.varint(changes.count)
        for c in changes { c.encode(to: &w) }
    }

    /// The changeset's encoding on its own (how the history stores it).
    public var encoded: [UInt8] {
        var w = WireWriter()
        encode(to: &w)
        return w.bytes
    }

    public static func decode(from r: inout WireReader) throws -> Changeset {
        let version = try r.varint("changeset client version")
        let clock = try r.u64le("changeset clock")
        let n = try r.count("change count", minimumItemBytes: 3)
        var changes: [Change] = []
        changes.reserveCapacity(n)
        for _ in 0..<n { changes.append(try Change.decode(from: &r)) }
        return Changeset(clientVersion: version, clock: clock, changes: changes)
    }

    public init(encoded bytes: [UInt8]) throws {
        var r = WireReader(bytes)
        self = try Changeset.decode(from: &r)
        try r.expectEnd("changeset")
    }
}
