// Reads a partition's merged state from the state tables and renders it as
// JSON lines, one live object per line (docs/SYNC.md, "coffer-sync dump"):
// properties, lists in replicated order, sets sorted by their JSON text, maps
// by key; values stamped below an object's tombstone are gone, and links to
// objects that are not live read as null (list elements are dropped).
import CofferSyncProtocol
import Foundation
import Logging
import NIOCore
import PostgresNIO

struct StateDump {
    struct ObjectKey: Hashable {
        var className: String
        var pk: [UInt8]
    }

    struct ObjectState {
        var tombstone: [UInt8]?
        var properties: [String: SyncValue] = [:]
        var lists: [String: [(id: [UInt8], anchor: [UInt8]?, value: SyncValue, erased: Bool)]] = [:]
        var sets: [String: [SyncValue]] = [:]
        var maps: [String: [(String, SyncValue)]] = [:]

        func visible(_ stamp: [UInt8]) -> Bool {
            guard let tombstone else { return true }
            return tombstone.lexicographicallyPrecedes(stamp)
        }
    }

    var schema = SyncSchema()
    var objects: [ObjectKey: ObjectState] = [:]

    /// Loads the partition; throws if it does not exist.
    static func load(partition: String, client: PostgresClient, logger: Logger) async throws -> StateDump {
        var dump = StateDump()
        var found = false
        for try await schema in try await client.query(
            "SELECT schema FROM coffer_sync_partitions WHERE partition = \(partition)", logger: logger
        ).decode(ByteBuffer.self) {
            let bytes = schema.bytes
            dump.schema = bytes.isEmpty ? SyncSchema() : try SyncSchema(encoded: bytes)
            found = true
        }
        guard found else { throw StoreError("partition '\(partition)' does not exist") }
        for try await (cls, pk, tombstone, created) in try await client.query("""
            SELECT class, pk, tombstone, created FROM coffer_sync_objects WHERE partition = \(partition)
            """, logger: logger).decode((String, ByteBuffer, ByteBuffer?, ByteBuffer?).self) {
            // Live: a create stamped above the tombstone.
            guard let created = created?.bytes else { continue }
            if let t = tombstone?.bytes, !t.lexicographicallyPrecedes(created) { continue }
            dump.objects[ObjectKey(className: cls, pk: pk.bytes)] = ObjectState(tombstone: tombstone?.bytes)
        }
        for try await (cls, pk, property, value, stamp) in try await client.query("""
            SELECT class, pk, property, value, stamp FROM coffer_sync_properties WHERE partition = \(partition)
            """, logger: logger).decode((String, ByteBuffer, String, ByteBuffer, ByteBuffer).self) {
            let key = ObjectKey(className: cls, pk: pk.bytes)
            guard let state = dump.objects[key], state.visible(stamp.bytes) else { continue }
            dump.objects[key]!.properties[property] = try SyncValue(encoded: value.bytes)
        }
        for try await (cls, pk, property, element, anchor, value, erased) in try await client.query("""
            SELECT class, pk, property, element, anchor, value, erased FROM coffer_sync_list_elements
            WHERE partition = \(partition)
            """, logger: logger).decode((String, ByteBuffer, String, ByteBuffer, ByteBuffer?, ByteBuffer, Bool).self) {
            let key = ObjectKey(className: cls, pk: pk.bytes)
            guard dump.objects[key] != nil else { continue }
            dump.objects[key]!.lists[property, default: []].append(
                (element.bytes, anchor?.bytes, try SyncValue(encoded: value.bytes), erased))
        }
        for try await (cls, pk, property, element, stamp) in try await client.query("""
            SELECT class, pk, property, element, stamp FROM coffer_sync_set_elements
            WHERE partition = \(partition) AND present
            """, logger: logger).decode((String, ByteBuffer, String, ByteBuffer, ByteBuffer).self) {
            let key = ObjectKey(className: cls, pk: pk.bytes)
            guard let state = dump.objects[key], state.visible(stamp.bytes) else { continue }
            dump.objects[key]!.sets[property, default: []].append(try SyncValue(encoded: element.bytes))
        }
        for try await (cls, pk, property, mapKey, value, stamp) in try await client.query("""
            SELECT class, pk, property, key, value, stamp FROM coffer_sync_map_entries
            WHERE partition = \(partition) AND present
            """, logger: logger).decode((String, ByteBuffer, String, String, ByteBuffer?, ByteBuffer).self) {
            let key = ObjectKey(className: cls, pk: pk.bytes)
            guard let state = dump.objects[key], state.visible(stamp.bytes), let value else { continue }
            dump.objects[key]!.maps[property, default: []].append((mapKey, try SyncValue(encoded: value.bytes)))
        }
        return dump
    }

    /// One JSON line per live object, ordered by class, then by the primary
    /// key's encoding.
    func lines() throws -> [String] {
        let keys = objects.keys.sorted {
            $0.className != $1.className ? $0.className < $1.className : $0.pk.lexicographicallyPrecedes($1.pk)
        }
        return try keys.map { key in
            let state = objects[key]!
            let pk = try SyncValue(encoded: key.pk)
            var members: [(String, JSONText)] = []
            let cls = schema.class(key.className)
            for prop in (cls?.properties ?? []).sorted(by: { $0.name < $1.name }) where prop.name != cls?.primaryKey {
                if prop.isList {
                    members.append((prop.name, .array(list(state, prop))))
                } else if prop.isSet {
                    let items = (state.sets[prop.name] ?? []).map { json($0) }.filter { !(isLink(prop) && $0.isNull) }
                    members.append((prop.name, .array(items.sorted { $0.text < $1.text })))
                } else if prop.isMap {
                    let entries = (state.maps[prop.name] ?? []).sorted { $0.0 < $1.0 }
                    members.append((prop.name, .object(entries.map { ($0.0, json($0.1)) })))
                } else if let value = state.properties[prop.name] {
                    members.append((prop.name, json(value)))
                }
            }
            return JSONText.object([("class", .string(key.className)), ("pk", json(pk)),
                                    ("properties", .object(members))]).text
        }
    }

    private func isLink(_ prop: SchemaProperty) -> Bool {
        prop.type == CofferType.link && schema.class(prop.target)?.isEmbedded == false
    }

    private func list(_ state: ObjectState, _ prop: SchemaProperty) -> [JSONText] {
        let elements = state.lists[prop.name] ?? []
        var byID: [[UInt8]: (value: SyncValue, erased: Bool)] = [:]
        for e in elements { byID[e.id] = (e.value, e.erased) }
        let order = ListOrder.order(elements.map { ListOrder.Element(id: $0.id, anchor: $0.anchor) })
        var result: [JSONText] = []
        for id in order {
            guard let e = byID[id], !e.erased, state.visible(Array(id.prefix(24))) else { continue }
            let value = json(e.value)
            // A list of links loses the elements whose target is gone.
            if isLink(prop) && value.isNull && e.value != .null { continue }
            result.append(value)
        }
        return result
    }

    /// The JSON form of a value (docs/SYNC.md lists them).
    func json(_ value: SyncValue) -> JSONText {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let bits): return .float(Float(bitPattern: bits))
        case .double(let bits): return .double(Double(bitPattern: bits))
        case .string(let s): return .string(s)
        case .binary(let b): return .object([("$binary", .string(Data(b).base64EncodedString()))])
        case .date(let s, let ns): return .object([("$date", .array([.int(s), .int(Int64(ns))]))])
        case .objectId(let b): return .object([("$oid", .string(hex(b)))])
        case .uuid(let b): return .object([("$uuid", .string(hex(b)))])
        case .decimal128(let b): return .object([("$decimal128", .string(hex(b)))])
        case .link(let cls, let pk):
            guard objects[ObjectKey(className: cls, pk: pk.encoded)] != nil else { return .null }
            return .object([("$link", .array([.string(cls), json(pk)]))])
        case .embedded(let cls, let props):
            let members = props.sorted { $0.name < $1.name }.map { ($0.name, json($0.value)) }
            return .object([("$embedded", .string(cls)), ("properties", .object(members))])
        case .list(let items): return .array(items.map { json($0) })
        case .map(let entries): return .object(entries.sorted { $0.key < $1.key }.map { ($0.key, json($0.value)) })
        }
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

extension JSONText {
    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
