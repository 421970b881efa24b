// Checks uploaded changes against the write rule of their object's class, as
// Realm's Device Sync permissions do: a change to an object that exists
// needs the object as stored to satisfy the rule, and a create or a change
// that leaves the object live needs the result to satisfy it too. Each
// checked change is merged under a savepoint inside the upload's
// transaction, and rolled back when its result breaks the rule, so a
// refused change never reaches the state tables, the history or other
// clients; the rest of the batch integrates. The rule is evaluated in
// PostgreSQL (Query/SQLTranslator), never by loading objects.
import CofferSyncProtocol
import Foundation
import Logging
import PostgresNIO

/// A change the write rules refused.
struct RefusedWrite: Equatable, Sendable {
    var className: String
    var pk: SyncValue
    /// The rule as configured (for the message).
    var rule: String

    /// The message of the client's ERROR COMPENSATING_WRITE.
    var message: String {
        "write to \(className) \(Self.describe(pk)) refused by the write rule of \(className) (\(rule)); the service's state of the object replaces it"
    }

    static func describe(_ pk: SyncValue) -> String {
        switch pk {
        case .int(let value): "\(value)"
        case .string(let text): "\"\(text)\""
        case .objectId(let bytes): "oid(\(hex(bytes)))"
        case .uuid(let bytes): "uuid(\(hex(bytes)))"
        default: "\(pk)"
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

struct WriteGate {
    let connection: PostgresConnection
    let partition: String
    let rules: PermissionRules
    let user: QueryUser
    let logger: Logger

    /// Merges `change` through `integrator` if the write rule of its class
    /// allows it; returns the refusal otherwise (nothing of it merged).
    func apply(_ change: Change, stamp: [UInt8], integrator: Integrator) async throws -> RefusedWrite? {
        let (className, pk) = change.object
        let rule = rules.rules(of: className).write
        let refusal = RefusedWrite(className: className, pk: pk, rule: rule.text)
        let predicate = rule.predicate(for: user)
        switch predicate {
        case .constant(true):
            try await integrator.apply(change, stamp: stamp)
            return nil
        case .constant(false):
            return refusal
        default:
            break
        }
        var isCreate = false, isDelete = false
        if case .create = change { isCreate = true }
        if case .delete = change { isDelete = true }
        let before = try await state(className, pk, predicate)
        // An object the service does not hold live can only be created: a
        // change of it would survive in the state (values above its
        // tombstone) for a later life.
        guard before.live ? before.matches : isCreate else { return refusal }
        if isDelete {
            try await integrator.apply(change, stamp: stamp)
            return nil
        }
        try await connection.query("SAVEPOINT coffer_write_rule", logger: logger)
        try await integrator.apply(change, stamp: stamp)
        let after = try await state(className, pk, predicate)
        if after.live && after.matches {
            try await connection.query("RELEASE SAVEPOINT coffer_write_rule", logger: logger)
            return nil
        }
        try await connection.query("ROLLBACK TO SAVEPOINT coffer_write_rule", logger: logger)
        try await connection.query("RELEASE SAVEPOINT coffer_write_rule", logger: logger)
        return refusal
    }

    /// Whether the object is live, and whether it satisfies `predicate`.
    func state(_ className: String, _ pk: SyncValue, _ predicate: QueryPredicate) async throws -> (live: Bool, matches: Bool) {
        var bindings = PostgresBindings()
        bindings.append(partition)
        bindings.append(className)
        bindings.append(pk.encoded.bytea)
        var binder = SQLBinder(continuing: bindings)
        let condition = SQLTranslator(user: user).condition(predicate, object: "o", binder: &binder)
        let rows = try await connection.query(PostgresQuery(unsafeSQL: """
            SELECT \(SQLTranslator.isLive(object: "o")), \(condition)
            FROM coffer_sync_objects o WHERE o.partition = $1 AND o.class = $2 AND o.pk = $3
            """, binds: binder.bindings), logger: logger)
        for try await (live, matches) in rows.decode((Bool, Bool).self) { return (live, live && matches) }
        return (false, false)
    }
}
