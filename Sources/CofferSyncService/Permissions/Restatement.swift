// An object as the service holds it, as changes a client integrates into a
// file that does not have it: a CREATE of its stored properties, a SET_ADD
// of each set element, a MAP_PUT of each map entry (Compensation), and its
// lists element by element with their ids, in list order (each inserted
// after the one before it; an erased element inserted and erased again, so
// that later inserts anchored on it find it). A read rule sends it when the
// object becomes readable to a client (docs/SYNC.md, "Security model").
import CofferSyncProtocol
import Logging
import NIOCore
import PostgresNIO

enum Restatement {
    /// The changes that give a client `className`/`pk` whole (a DELETE if
    /// the service does not hold it live).
    static func changes(of className: String, _ pk: SyncValue, partition: String,
                        on connection: PostgresConnection, logger: Logger) async throws -> [Change] {
        var changes = try await Compensation.changes(of: className, pk, partition: partition,
                                                     on: connection, logger: logger)
        guard case .create = changes.first else { return changes }
        let rows = try await connection.query("""
            SELECT property, element, anchor, value, erased FROM coffer_sync_list_elements
            WHERE partition = \(partition) AND class = \(className) AND pk = \(pk.encoded.bytea)
            ORDER BY property
            """, logger: logger)
        struct Element {
            var value: [UInt8]
            var erased: Bool
        }
        var lists: [String: (order: [ListOrder.Element], elements: [[UInt8]: Element])] = [:]
        for try await (property, element, anchor, value, erased) in
                rows.decode((String, ByteBuffer, ByteBuffer?, ByteBuffer, Bool).self) {
            let id = element.bytes
            lists[property, default: ([], [:])].order.append(ListOrder.Element(id: id, anchor: anchor?.bytes))
            lists[property, default: ([], [:])].elements[id] = Element(value: value.bytes, erased: erased)
        }
        for (property, list) in lists.sorted(by: { $0.key < $1.key }) {
            var previous: ElementID?
            for id in ListOrder.order(list.order) {
                guard let element = list.elements[id] else { continue }
                let elementID = try ElementID(sortKey: id)
                changes.append(.listInsert(class: className, pk: pk, property: property, id: elementID,
                                           after: previous, value: try SyncValue(encoded: element.value)))
                if element.erased {
                    changes.append(.listErase(class: className, pk: pk, property: property, id: elementID))
                }
                previous = elementID
            }
        }
        return changes
    }
}

extension Restatement {
    /// The changes that give a client each of `keys` whole, as
    /// `changes(of:_:partition:on:logger:)` makes them for one object, with
    /// one query per table for all of them.
    static func changes(of keys: Set<ObjectKey>, partition: String, on connection: PostgresConnection,
                        logger: Logger) async throws -> [ObjectKey: [Change]] {
        guard !keys.isEmpty else { return [:] }
        let list = Array(keys)
        let classes = list.map(\.className), pks = list.map(\.pk.bytea)
        var live: Set<ObjectKey> = []
        let liveRows = try await connection.query("""
            SELECT o.class, o.pk FROM coffer_sync_objects o
            JOIN unnest(\(classes)::text[], \(pks)::bytea[]) AS u(class, pk) ON o.class = u.class AND o.pk = u.pk
            WHERE o.partition = \(partition) AND \(unescaped: SQLTranslator.isLive(object: "o"))
            """, logger: logger)
        for try await (className, pk) in liveRows.decode((String, ByteBuffer).self) {
            live.insert(ObjectKey(className: className, pk: pk.bytes))
        }
        var properties: [ObjectKey: [SyncValue.SyncProperty]] = [:]
        let propertyRows = try await connection.query("""
            SELECT p.class, p.pk, p.property, p.value FROM coffer_sync_properties p
            JOIN unnest(\(classes)::text[], \(pks)::bytea[]) AS u(class, pk) ON p.class = u.class AND p.pk = u.pk
            WHERE p.partition = \(partition) ORDER BY p.property
            """, logger: logger)
        for try await (className, pk, name, value) in propertyRows.decode((String, ByteBuffer, String, ByteBuffer).self) {
            properties[ObjectKey(className: className, pk: pk.bytes), default: []]
                .append(.init(name, try SyncValue(encoded: value.bytes)))
        }
        var items: [ObjectKey: [Change]] = [:]
        let setRows = try await connection.query("""
            SELECT s.class, s.pk, s.property, s.element FROM coffer_sync_set_elements s
            JOIN unnest(\(classes)::text[], \(pks)::bytea[]) AS u(class, pk) ON s.class = u.class AND s.pk = u.pk
            WHERE s.partition = \(partition) AND s.present ORDER BY s.property, s.element
            """, logger: logger)
        for try await (className, pk, name, element) in setRows.decode((String, ByteBuffer, String, ByteBuffer).self) {
            let key = ObjectKey(className: className, pk: pk.bytes)
            items[key, default: []].append(.setAdd(class: className, pk: try SyncValue(encoded: key.pk), property: name,
                                                   value: try SyncValue(encoded: element.bytes)))
        }
        let mapRows = try await connection.query("""
            SELECT m.class, m.pk, m.property, m.key, m.value FROM coffer_sync_map_entries m
            JOIN unnest(\(classes)::text[], \(pks)::bytea[]) AS u(class, pk) ON m.class = u.class AND m.pk = u.pk
            WHERE m.partition = \(partition) AND m.present ORDER BY m.property, m.key
            """, logger: logger)
        for try await (className, pk, name, mapKey, value) in
                mapRows.decode((String, ByteBuffer, String, String, ByteBuffer?).self) {
            guard let value else { continue }
            let key = ObjectKey(className: className, pk: pk.bytes)
            items[key, default: []].append(.mapPut(class: className, pk: try SyncValue(encoded: key.pk), property: name,
                                                   key: mapKey, value: try SyncValue(encoded: value.bytes)))
        }
        struct Element {
            var value: [UInt8]
            var erased: Bool
        }
        var lists: [ObjectKey: [String: (order: [ListOrder.Element], elements: [[UInt8]: Element])]] = [:]
        let listRows = try await connection.query("""
            SELECT l.class, l.pk, l.property, l.element, l.anchor, l.value, l.erased FROM coffer_sync_list_elements l
            JOIN unnest(\(classes)::text[], \(pks)::bytea[]) AS u(class, pk) ON l.class = u.class AND l.pk = u.pk
            WHERE l.partition = \(partition)
            """, logger: logger)
        for try await (className, pk, name, element, anchor, value, erased) in
                listRows.decode((String, ByteBuffer, String, ByteBuffer, ByteBuffer?, ByteBuffer, Bool).self) {
            let key = ObjectKey(className: className, pk: pk.bytes), id = element.bytes
            lists[key, default: [:]][name, default: ([], [:])].order.append(ListOrder.Element(id: id, anchor: anchor?.bytes))
            lists[key, default: [:]][name, default: ([], [:])].elements[id] = Element(value: value.bytes, erased: erased)
        }
        var result: [ObjectKey: [Change]] = [:]
        for key in list {
            let pk = try SyncValue(encoded: key.pk)
            guard live.contains(key) else {
                result[key] = [.delete(class: key.className, pk: pk)]
                continue
            }
            var changes: [Change] = [.create(class: key.className, pk: pk, properties: properties[key] ?? [])]
            changes += items[key] ?? []
            for (property, list) in (lists[key] ?? [:]).sorted(by: { $0.key < $1.key }) {
                var previous: ElementID?
                for id in ListOrder.order(list.order) {
                    guard let element = list.elements[id] else { continue }
                    let elementID = try ElementID(sortKey: id)
                    changes.append(.listInsert(class: key.className, pk: pk, property: property, id: elementID,
                                               after: previous, value: try SyncValue(encoded: element.value)))
                    if element.erased {
                        changes.append(.listErase(class: key.className, pk: pk, property: property, id: elementID))
                    }
                    previous = elementID
                }
            }
            result[key] = changes
        }
        return result
    }
}
