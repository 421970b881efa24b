// A value as the wire protocol carries it (docs/SYNC.md, "Values"): a tag byte
// then its payload. Embedded objects, lists and maps nest, at most
// WireLimits.maxNesting deep.

/// One value of a property, list element, set element or map entry.
public indirect enum SyncValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    /// Kept as its bits, so NaN payloads round-trip and values compare exactly.
    case float(UInt32)
    case double(UInt64)
    case string(String)
    case binary([UInt8])
    case date(seconds: Int64, nanoseconds: UInt32)
    case objectId([UInt8])
    case uuid([UInt8])
    case decimal128([UInt8])
    case link(targetClass: String, primaryKey: SyncValue)
    case embedded(className: String, properties: [SyncProperty])
    case list([SyncValue])
    case map([(key: String, value: SyncValue)])

    /// A property name and its value, as in CREATE, UPDATE and embedded objects.
    public struct SyncProperty: Hashable, Sendable {
        public var name: String
        public var value: SyncValue
        public init(_ name: String, _ value: SyncValue) {
            self.name = name
            self.value = value
        }
    }

    public enum Tag: UInt8, Sendable {
        case null = 0, bool, int, float, double, string, binary, date, objectId, uuid,
             decimal128, link, embedded, list, map
    }

    public var tag: Tag {
        switch self {
        case .null: .null
        case .bool: .bool
        case .int: .int
        case .float: .float
        case .double: .double
        case .string: .string
        case .binary: .binary
        case .date: .date
        case .objectId: .objectId
        case .uuid: .uuid
        case .decimal128: .decimal128
        case .link: .link
        case .embedded: .embedded
        case .list: .list
        case .map: .map
        }
    }

    /// A float value from its number.
    public static func of(_ value: Float) -> SyncValue { .float(value.bitPattern) }
    /// A double value from its number.
    public static func of(_ value: Double) -> SyncValue { .double(value.bitPattern) }

    // Maps are ordered key/value pairs; equality and hashing follow the order.
    public static func == (a: SyncValue, b: SyncValue) -> Bool {
        var wa = WireWriter(), wb = WireWriter()
        a.encode(to: &wa)
        b.encode(to: &wb)
        return wa.bytes == wb.bytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(encoded)
    }

    /// The value's encoding on its own (how the service stores it).
    public var encoded: [UInt8] {
        var w = WireWriter()
        encode(to: &w)
        return w.bytes
    }

    public func encode(to w: inout WireWriter) {
        w.byte(tag.rawValue)
        switch self {
        case .null: break
        case .bool(let b): w.byte(b ? 1 : 0)
        case .int(let i): w.zigzag(i)
        case .float(let bits): w.u32le(bits)
        case .double(let bits): w.u64le(bits)
        case .string(let s): w.string(s)
        case .binary(let b): w.blob(b)
        case .date(let s, let ns):
            w.zigzag(s)
            w.varint(UInt64(ns))
        case .objectId(let b), .uuid(let b), .decimal128(let b): w.raw(b)
        case .link(let cls, let pk):
            w.string(cls)
            pk.encode(to: &w)
        case .embedded(let cls, let props):
            w.string(cls)
            w.varint(props.count)
            for p in props {
                w.string(p.name)
                p.value.encode(to: &w)
            }
        case .list(let values):
            w.varint(values.count)
            for v in values { v.encode(to: &w) }
        case .map(let entries):
            w.varint(entries.count)
            for e in entries {
                w.string(e.key)
                e.value.encode(to: &w)
            }
        }
    }

    /// Decodes a value that makes up all of `bytes`.
    public init(encoded bytes: [UInt8]) throws {
        var r = WireReader(bytes)
        self = try SyncValue.decode(from: &r)
        try r.expectEnd("value")
    }

    public static func decode(from r: inout WireReader, depth: Int = 0) throws -> SyncValue {
        guard depth <= WireLimits.maxNesting else {
            throw WireError("value nested deeper than \(WireLimits.maxNesting) levels at byte \(r.offset)")
        }
        let at = r.offset
        let raw = try r.byte("value tag")
        guard let tag = Tag(rawValue: raw) else { throw WireError("unknown value tag \(raw) at byte \(at)") }
        switch tag {
        case .null: return .null
        case .bool:
            let b = try r.byte("bool")
            guard b <= 1 else { throw WireError("bool \(b) at byte \(at + 1) is neither 0 nor 1") }
            return .bool(b == 1)
        case .int: return .int(try r.zigzag("int"))
        case .float: return .float(try r.u32le("float"))
        case .double: return .double(try r.u64le("double"))
        case .string: return .string(try r.string("string"))
        case .binary: return .binary(try r.blob("binary"))
        case .date:
            let s = try r.zigzag("date seconds")
            let ns = try r.varint("date nanoseconds")
            guard ns < 1_000_000_000 else { throw WireError("date nanoseconds \(ns) at byte \(at) out of range") }
            return .date(seconds: s, nanoseconds: UInt32(ns))
        case .objectId: return .objectId(try r.raw(12, "objectId"))
        case .uuid: return .uuid(try r.raw(16, "uuid"))
        case .decimal128: return .decimal128(try r.raw(16, "decimal128"))
        case .link:
            let cls = try r.string("link target class")
            let pk = try decode(from: &r, depth: depth + 1)
            return .link(targetClass: cls, primaryKey: pk)
        case .embedded:
            let cls = try r.string("embedded object class")
            let n = try r.count("embedded property count", minimumItemBytes: 2)
            var props: [SyncProperty] = []
            props.reserveCapacity(n)
            for _ in 0..<n {
                let name = try r.string("embedded property name")
                props.append(SyncProperty(name, try decode(from: &r, depth: depth + 1)))
            }
            return .embedded(className: cls, properties: props)
        case .list:
            let n = try r.count("list count")
            var values: [SyncValue] = []
            values.reserveCapacity(n)
            for _ in 0..<n { values.append(try decode(from: &r, depth: depth + 1)) }
            return .list(values)
        case .map:
            let n = try r.count("map count", minimumItemBytes: 2)
            var entries: [(key: String, value: SyncValue)] = []
            entries.reserveCapacity(n)
            for _ in 0..<n {
                let key = try r.string("map key")
                entries.append((key, try decode(from: &r, depth: depth + 1)))
            }
            return .map(entries)
        }
    }
}
