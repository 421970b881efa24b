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
