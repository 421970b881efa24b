// The compensating changeset of a refused write: the service's state of the
// object, stamped just above the refused change so that it wins over it on
// the client that made it. It is a change of the service itself (origin: the
// all-zero client id, which no client has), merged into the state tables and
// appended to the history like any changeset, so every replica applies the
// same stamped changes and converges: on other clients it restates what
// they have. A live object comes back as a CREATE of its stored properties
// (a new life on a client that deleted it) with its set elements and map
// entries; an object the service does not hold live comes back as a DELETE.
// The refused collection edits that restating the stored state does not
// undo are undone one by one: a set element or map key the service does not
// have is removed, a list element the service does not have is erased, and a
// replaced list element gets its stored value back.
import CofferSyncProtocol
import Logging
import NIOCore
import PostgresNIO

enum Compensation {
    /// The origin of the service's own changesets.
    static let origin = ClientID(bytes: [UInt8](repeating: 0, count: 16))

    /// The changes that restate the stored state of `className`/`pk`.
    static func changes(of className: String, _ pk: SyncValue, partition: String, undoing refused: [Change] = [],
                        on connection: PostgresConnection, logger: Logger) async throws -> [Change] {
        let key = pk.encoded.bytea
        let live = try await connection.query("""
            SELECT \(unescaped: SQLTranslator.isLive(object: "o")) FROM coffer_sync_objects o
            WHERE o.partition = \(partition) AND o.class = \(className) AND o.pk = \(key)
            """, logger: logger)
        var isLive = false
        for try await value in live.decode(Bool.self) { isLive = value }
        guard isLive else { return [.delete(class: className, pk: pk)] }

        var properties: [SyncValue.SyncProperty] = []
        let props = try await connection.query("""
            SELECT property, value FROM coffer_sync_properties
            WHERE partition = \(partition) AND class = \(className) AND pk = \(key) ORDER BY property
            """, logger: logger)
        for try await (name, value) in props.decode((String, ByteBuffer).self) {
            properties.append(.init(name, try SyncValue(encoded: value.bytes)))
        }
        var changes: [Change] = [.create(class: className, pk: pk, properties: properties)]
        let sets = try await connection.query("""
            SELECT property, element FROM coffer_sync_set_elements
            WHERE partition = \(partition) AND class = \(className) AND pk = \(key) AND present
            ORDER BY property, element
            """, logger: logger)
        var presentElements: Set<[UInt8]> = []
        for try await (name, element) in sets.decode((String, ByteBuffer).self) {
            changes.append(.setAdd(class: className, pk: pk, property: name, value: try SyncValue(encoded: element.bytes)))
            presentElements.insert(Array(name.utf8) + [0] + element.bytes)
        }
        let maps = try await connection.query("""
            SELECT property, key, value FROM coffer_sync_map_entries
            WHERE partition = \(partition) AND class = \(className) AND pk = \(key) AND present
            ORDER BY property, key
            """, logger: logger)
        var presentKeys: Set<[String]> = []
        for try await (name, mapKey, value) in maps.decode((String, String, ByteBuffer?).self) {
            guard let value else { continue }
            changes.append(.mapPut(class: className, pk: pk, property: name, key: mapKey,
                                   value: try SyncValue(encoded: value.bytes)))
            presentKeys.insert([name, mapKey])
        }
        guard !refused.isEmpty else { return changes }
        return changes + (try await undo(refused, className, pk, presentElements: presentElements,
                                         presentKeys: presentKeys, partition: partition, on: connection, logger: logger))
    }

    /// The changes that undo the refused collection edits a restatement
    /// leaves as they are.
    private static func undo(_ refused: [Change], _ className: String, _ pk: SyncValue, presentElements: Set<[UInt8]>,
                             presentKeys: Set<[String]>, partition: String, on connection: PostgresConnection,
                             logger: Logger) async throws -> [Change] {
        var elements: [[UInt8]: (erased: Bool, value: [UInt8])] = [:]
        let editsLists = refused.contains { change in
            switch change {
            case .listInsert, .listSet: return true
            default: return false
            }
        }
        if editsLists {
            let rows = try await connection.query("""
                SELECT property, element, erased, value FROM coffer_sync_list_elements
                WHERE partition = \(partition) AND class = \(className) AND pk = \(pk.encoded.bytea)
                """, logger: logger)
            for try await (name, element, erased, value) in rows.decode((String, ByteBuffer, Bool, ByteBuffer).self) {
                elements[Array(name.utf8) + [0] + element.bytes] = (erased, value.bytes)
            }
        }
        var undone: [Change] = []
        var seen: Set<Change> = []
        func add(_ change: Change) {
            if seen.insert(change).inserted { undone.append(change) }
        }
        for change in refused {
            switch change {
            case .setAdd(_, _, let property, let value):
                if !presentElements.contains(Array(property.utf8) + [0] + value.encoded) {
                    add(.setRemove(class: className, pk: pk, property: property, value: value))
                }
            case .mapPut(_, _, let property, let key, _):
                if !presentKeys.contains([property, key]) {
                    add(.mapRemove(class: className, pk: pk, property: property, key: key))
                }
            case .listInsert(_, _, let property, let id, _, _):
                if elements[Array(property.utf8) + [0] + id.sortKey] == nil {
                    add(.listErase(class: className, pk: pk, property: property, id: id))
                }
            case .listSet(_, _, let property, let id, _):
                if let stored = elements[Array(property.utf8) + [0] + id.sortKey], !stored.erased {
                    add(.listSet(class: className, pk: pk, property: property, id: id,
                                 value: try SyncValue(encoded: stored.value)))
                }
            default:
                break
            }
        }
        return undone
    }
}
