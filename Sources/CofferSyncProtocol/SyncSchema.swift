// The schema a client sends in HELLO (docs/SYNC.md, "Schema"), and the union
// the service keeps per partition: additive changes merge, breaking ones are
// named.

/// A property of a synced class.
public struct SchemaProperty: Hashable, Sendable {
    public static let optional: UInt8 = 1, list: UInt8 = 2, set: UInt8 = 4, map: UInt8 = 8, indexed: UInt8 = 16

    public var name: String
    /// A `coffer_type` value (include/coffer.h).
    public var type: UInt64
    public var flags: UInt8
    /// The link target class, or empty.
    public var target: String

    public init(name: String, type: UInt64, flags: UInt8 = 0, target: String = "") {
        self.name = name
        self.type = type
        self.flags = flags
        self.target = target
    }

    public var isOptional: Bool { flags & Self.optional != 0 }
    public var isList: Bool { flags & Self.list != 0 }
    public var isSet: Bool { flags & Self.set != 0 }
    public var isMap: Bool { flags & Self.map != 0 }
    public var isCollection: Bool { flags & (Self.list | Self.set | Self.map) != 0 }

    /// The flags that must agree between clients (an index is a local matter).
    var syncedFlags: UInt8 { flags & ~Self.indexed }
}

/// A synced class: top-level (with a primary key) or embedded.
public struct SchemaClass: Hashable, Sendable {
    public var name: String
    public var isEmbedded: Bool
    /// The primary key property's name; empty for embedded classes.
    public var primaryKey: String
    public var properties: [SchemaProperty]

    public init(name: String, isEmbedded: Bool = false, primaryKey: String, properties: [SchemaProperty]) {
        self.name = name
        self.isEmbedded = isEmbedded
        self.primaryKey = primaryKey
        self.properties = properties
    }

    public func property(_ name: String) -> SchemaProperty? {
        properties.first { $0.name == name }
    }
}

/// A breaking difference between two schemas.
public struct SchemaMismatch: Error, Equatable, CustomStringConvertible, Sendable {
    public let className: String
    public let property: String?
    public let reason: String

    public var description: String {
        if let property {
            return "\(className).\(property): \(reason)"
        }
        return "\(className): \(reason)"
    }
}

/// The classes of a synced file, as HELLO carries them.
public struct SyncSchema: Hashable, Sendable {
    public var classes: [SchemaClass]

    public init(classes: [SchemaClass] = []) {
        self.classes = classes
    }

    public func `class`(_ name: String) -> SchemaClass? {
        classes.first { $0.name == name }
    }

    /// This schema with what `other` adds: new classes and new properties.
    /// Throws `SchemaMismatch` for the first breaking difference.
    public func merged(with other: SyncSchema) throws -> SyncSchema {
        var result = self
        for incoming in other.classes {
            guard let index = result.classes.firstIndex(where: { $0.name == incoming.name }) else {
                result.classes.append(incoming)
                continue
            }
            var existing = result.classes[index]
            if existing.isEmbedded != incoming.isEmbedded {
                throw SchemaMismatch(className: incoming.name, property: nil,
                                     reason: existing.isEmbedded ? "embedded here, top-level in the client"
                                                                 : "top-level here, embedded in the client")
            }
            if existing.primaryKey != incoming.primaryKey {
                throw SchemaMismatch(className: incoming.name, property: nil,
                                     reason: "primary key '\(existing.primaryKey)' here, '\(incoming.primaryKey)' in the client")
            }
            for p in incoming.properties {
                guard let have = existing.property(p.name) else {
                    existing.properties.append(p)
                    continue
                }
                if have.type != p.type || have.syncedFlags != p.syncedFlags || have.target != p.target {
                    throw SchemaMismatch(className: incoming.name, property: p.name,
                                         reason: "\(Self.describe(have)) here, \(Self.describe(p)) in the client")
                }
            }
            result.classes[index] = existing
        }
        return result
    }

    static func describe(_ p: SchemaProperty) -> String {
        var parts = ["type \(p.type)"]
        if p.isOptional { parts.append("optional") }
        if p.isList { parts.append("list") }
        if p.isSet { parts.append("set") }
        if p.isMap { parts.append("map") }
        if !p.target.isEmpty { parts.append("-> \(p.target)") }
        return parts.joined(separator: " ")
    }

    public func encode(to w: inout WireWriter) {
        w.varint(classes.count)
        for c in classes {
            w.string(c.name)
            w.byte(c.isEmbedded ? 1 : 0)
            w.string(c.primaryKey)
            w.varint(c.properties.count)
            for p in c.properties {
                w.string(p.name)
                w.varint(p.type)
                w.byte(p.flags)
                w.string(p.target)
            }
        }
    }

    public var encoded: [UInt8] {
        var w = WireWriter()
        encode(to: &w)
        return w.bytes
    }

    public static func decode(from r: inout WireReader) throws -> SyncSchema {
        let n = try r.count("class count", minimumItemBytes: 4)
        var classes: [SchemaClass] = []
        for _ in 0..<n {
            let name = try r.string("class name")
            let flagsAt = r.offset
            let flags = try r.byte("class flags")
            guard flags <= 1 else { throw WireError("class flags \(flags) at byte \(flagsAt) are unknown") }
            let pk = try r.string("primary key name")
            let count = try r.count("property count", minimumItemBytes: 4)
            var props: [SchemaProperty] = []
            for _ in 0..<count {
                let pname = try r.string("property name")
                let type = try r.varint("property type")
                let pflags = try r.byte("property flags")
                let target = try r.string("link target")
                props.append(SchemaProperty(name: pname, type: type, flags: pflags, target: target))
            }
            classes.append(SchemaClass(name: name, isEmbedded: flags == 1, primaryKey: pk, properties: props))
        }
        return SyncSchema(classes: classes)
    }

    public init(encoded bytes: [UInt8]) throws {
        var r = WireReader(bytes)
        self = try SyncSchema.decode(from: &r)
        try r.expectEnd("schema")
    }
}
