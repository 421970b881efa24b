// The typed copies of a property's value that ordered comparisons read
// (schema version 3): `num` for ints, floats and doubles (as a double; NaN
// left out, as it orders against nothing), `txt` for strings (collation "C",
// so byte order, which is Coffer's string order; a string holding NUL, which
// PostgreSQL's text cannot, is left out).
import CofferSyncProtocol
import Logging
import NIOCore
import PostgresNIO

enum TypedColumns {
    static func number(_ value: SyncValue) -> Double? {
        let number: Double
        switch value {
        case .int(let int): number = Double(int)
        case .float(let bits): number = Double(Float(bitPattern: bits))
        case .double(let bits): number = Double(bitPattern: bits)
        default: return nil
        }
        return number.isNaN ? nil : number
    }

    static func text(_ value: SyncValue) -> String? {
        guard case .string(let text) = value, !text.utf8.contains(0) else { return nil }
        return text
    }

    /// Fills `num` and `txt` of the rows written before version 3, in the
    /// migration's transaction.
    static func backfill(on connection: PostgresConnection, logger: Logger) async throws {
        let tags = [SyncValue.int(0), .float(0), .double(0), .string("")].map { [$0.encoded[0]].bytea }
        let rows = try await connection.query("""
            SELECT partition, class, pk, property, value FROM coffer_sync_properties
            WHERE substring(value FROM 1 FOR 1) = ANY(\(tags))
            """, logger: logger)
        var updates: [(String, String, ByteBuffer, String, Double?, String?)] = []
        for try await (partition, className, pk, property, value) in
                rows.decode((String, String, ByteBuffer, String, ByteBuffer).self) {
            guard let decoded = try? SyncValue(encoded: value.bytes) else { continue }
            updates.append((partition, className, pk, property, number(decoded), text(decoded)))
        }
        for (partition, className, pk, property, num, txt) in updates {
            try await connection.query("""
                UPDATE coffer_sync_properties SET num = \(num), txt = \(txt)
                WHERE partition = \(partition) AND class = \(className) AND pk = \(pk) AND property = \(property)
                """, logger: logger)
        }
    }
}
