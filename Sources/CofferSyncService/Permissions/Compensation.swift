// The compensating changeset of a refused write: the service's state of the
// object, stamped just above the refused change so that it wins over it on
// the client that made it. It is a change of the service itself (origin: the
// all-zero client id, which no client has), merged into the state tables and
// appended to the history like any changeset, so every replica applies the
// same stamped changes and converges: on other clients it restates what
// they have. A live object comes back as a CREATE of its stored properties
// (a new life on a client that deleted it) with its set elements and map
// entries; an object the service does not hold live comes back as a DELETE.
import CofferSyncProtocol
import Logging
import NIOCore
import PostgresNIO

enum Compensation {
    /// The origin of the service's own changesets.
    static let origin = ClientID(bytes: [UInt8](repeating: 0, count: 16))

    /// The changes that restate the stored state of `className`/`pk`.
    static func changes(of className: String, _ pk: SyncValue, partition: String,
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
        for try await (name, element) in sets.decode((String, ByteBuffer).self) {
            changes.append(.setAdd(class: className, pk: pk, property: name, value: try SyncValue(encoded: element.bytes)))
        }
        let maps = try await connection.query("""
            SELECT property, key, value FROM coffer_sync_map_entries
            WHERE partition = \(partition) AND class = \(className) AND pk = \(key) AND present
            ORDER BY property, key
            """, logger: logger)
        for try await (name, mapKey, value) in maps.decode((String, String, ByteBuffer?).self) {
            guard let value else { continue }
            changes.append(.mapPut(class: className, pk: pk, property: name, key: mapKey,
                                   value: try SyncValue(encoded: value.bytes)))
        }
        return changes
    }
}
