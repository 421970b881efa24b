// The service's PostgreSQL schema (docs/SYNC.md, "The service's PostgreSQL
// schema"), versioned in coffer_sync_meta. `migrate` applies the steps the
// database lacks in one transaction; `serve` and `dump` refuse a database
// whose version is not the one this build speaks, naming both.
import Logging
import PostgresNIO

enum SchemaMigrations {
    /// The schema version this build creates and serves.
    static let currentVersion = 6

    /// Step n turns version n-1 into version n.
    static let steps: [[String]] = [
        [
            """
            CREATE TABLE coffer_sync_meta (
                version integer NOT NULL
            )
            """,
            "INSERT INTO coffer_sync_meta (version) VALUES (0)",
            """
            CREATE TABLE coffer_sync_partitions (
                partition text PRIMARY KEY,
                schema bytea NOT NULL,
                latest_version bigint NOT NULL DEFAULT 0
            )
            """,
            """
            CREATE TABLE coffer_sync_clients (
                partition text NOT NULL REFERENCES coffer_sync_partitions,
                client_id bytea NOT NULL,
                last_client_version bigint NOT NULL DEFAULT 0,
                last_acked_server_version bigint NOT NULL DEFAULT 0,
                first_seen timestamptz NOT NULL DEFAULT now(),
                last_seen timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (partition, client_id)
            )
            """,
            """
            CREATE TABLE coffer_sync_history (
                server_version bigserial PRIMARY KEY,
                partition text NOT NULL REFERENCES coffer_sync_partitions,
                origin bytea NOT NULL,
                client_version bigint NOT NULL,
                clock bigint NOT NULL,
                changeset bytea NOT NULL
            )
            """,
            "CREATE INDEX coffer_sync_history_by_partition ON coffer_sync_history (partition, server_version)",
            """
            CREATE TABLE coffer_sync_objects (
                partition text NOT NULL,
                class text NOT NULL,
                pk bytea NOT NULL,
                tombstone bytea,
                created bytea,
                PRIMARY KEY (partition, class, pk)
            )
            """,
            """
            CREATE TABLE coffer_sync_properties (
                partition text NOT NULL,
                class text NOT NULL,
                pk bytea NOT NULL,
                property text NOT NULL,
                value bytea NOT NULL,
                stamp bytea NOT NULL,
                PRIMARY KEY (partition, class, pk, property)
            )
            """,
            """
            CREATE TABLE coffer_sync_list_elements (
                partition text NOT NULL,
                class text NOT NULL,
                pk bytea NOT NULL,
                property text NOT NULL,
                element bytea NOT NULL,
                anchor bytea,
                value bytea NOT NULL,
                value_stamp bytea NOT NULL,
                erased boolean NOT NULL DEFAULT false,
                PRIMARY KEY (partition, class, pk, property, element)
            )
            """,
            """
            CREATE TABLE coffer_sync_set_elements (
                partition text NOT NULL,
                class text NOT NULL,
                pk bytea NOT NULL,
                property text NOT NULL,
                element bytea NOT NULL,
                present boolean NOT NULL,
                stamp bytea NOT NULL,
                PRIMARY KEY (partition, class, pk, property, element)
            )
            """,
            """
            CREATE TABLE coffer_sync_map_entries (
                partition text NOT NULL,
                class text NOT NULL,
                pk bytea NOT NULL,
                property text NOT NULL,
                key text NOT NULL,
                present boolean NOT NULL,
                value bytea,
                stamp bytea NOT NULL,
                PRIMARY KEY (partition, class, pk, property, key)
            )
            """,
        ],
        // Version 2: users and authentication (docs/SYNC.md, "Users and
        // authentication"), and the user each client last synced as.
        [
            """
            CREATE TABLE coffer_sync_users (
                id text PRIMARY KEY,
                created timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE coffer_sync_identities (
                provider text NOT NULL,
                subject text NOT NULL,
                user_id text NOT NULL REFERENCES coffer_sync_users ON DELETE CASCADE,
                password_hash text,
                created timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (provider, subject)
            )
            """,
            "CREATE INDEX coffer_sync_identities_by_user ON coffer_sync_identities (user_id)",
            """
            CREATE TABLE coffer_sync_refresh_tokens (
                token_hash bytea PRIMARY KEY,
                user_id text NOT NULL REFERENCES coffer_sync_users ON DELETE CASCADE,
                created timestamptz NOT NULL DEFAULT now(),
                expires timestamptz NOT NULL,
                revoked timestamptz
            )
            """,
            "CREATE INDEX coffer_sync_refresh_tokens_by_user ON coffer_sync_refresh_tokens (user_id)",
            "ALTER TABLE coffer_sync_clients ADD COLUMN user_id text",
        ],
        // Version 3: typed copies of property values and the indexes that
        // query predicates (Query/SQLTranslator) compare through; the rows
        // already stored get theirs from TypedColumns.backfill.
        [
            """
            ALTER TABLE coffer_sync_properties
                ADD COLUMN num double precision,
                ADD COLUMN txt text COLLATE "C"
            """,
            // The indexes on `value` and `txt` are version 6's, bounded in length.
            "CREATE INDEX coffer_sync_properties_by_num ON coffer_sync_properties (partition, class, property, num)",
        ],
        // Version 4: the roles a login gave (a custom JWT's roles claim), kept
        // with its refresh token so that a refreshed access token has them too.
        [
            "ALTER TABLE coffer_sync_refresh_tokens ADD COLUMN roles text[] NOT NULL DEFAULT '{}'",
        ],
        // Version 5: read rules (docs/SYNC.md, "Security model"): the objects
        // each client has been given (what its downloads may change or
        // remove), and the user and roles its last session read as.
        [
            """
            CREATE TABLE coffer_sync_client_objects (
                partition text NOT NULL,
                client_id bytea NOT NULL,
                class text NOT NULL,
                pk bytea NOT NULL,
                PRIMARY KEY (partition, client_id, class, pk)
            )
            """,
            "ALTER TABLE coffer_sync_clients ADD COLUMN read_as text",
        ],
        // Version 6: the indexes on `value` and `txt` hold a bounded prefix
        // (PropertyIndexes), so that a value of any length stores; a btree
        // row cannot exceed about 2.7 kB. Versions 3-5 had them unbounded.
        [
            "DROP INDEX IF EXISTS coffer_sync_properties_by_value",
            "DROP INDEX IF EXISTS coffer_sync_properties_by_txt",
            """
            CREATE INDEX coffer_sync_properties_by_value ON coffer_sync_properties
                (partition, class, property, \(PropertyIndexes.valuePrefix("value")))
            """,
            """
            CREATE INDEX coffer_sync_properties_by_txt ON coffer_sync_properties
                (partition, class, property, \(PropertyIndexes.textPrefix("txt")))
            """,
        ],
    ]

    /// The database's schema version: 0 when it has no coffer_sync_meta.
    static func version(on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let exists = try await connection.query(
            "SELECT to_regclass('coffer_sync_meta') IS NOT NULL", logger: logger)
        for try await (present) in exists.decode(Bool.self) where !present {
            return 0
        }
        let rows = try await connection.query("SELECT version FROM coffer_sync_meta", logger: logger)
        for try await (version) in rows.decode(Int.self) {
            return version
        }
        throw StoreError("coffer_sync_meta exists but holds no version")
    }

    /// Brings the database to `currentVersion`; returns (from, to).
    static func migrate(client: PostgresClient, logger: Logger) async throws -> (Int, Int) {
        try await client.withTransaction(logger: logger) { connection in
            // One migrator at a time: a second waits, then finds nothing to do.
            try await connection.query("SELECT pg_advisory_xact_lock(7366917001)", logger: logger)
            let from = try await version(on: connection, logger: logger)
            guard from <= currentVersion else {
                throw StoreError.newerSchema(found: from)
            }
            for step in from..<currentVersion {
                for statement in steps[step] {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                if step + 1 == 3 { try await TypedColumns.backfill(on: connection, logger: logger) }
                try await connection.query("UPDATE coffer_sync_meta SET version = \(step + 1)", logger: logger)
            }
            return (from, currentVersion)
        }
    }

    /// Throws unless the database is at exactly `currentVersion`.
    static func check(client: PostgresClient, logger: Logger) async throws {
        let found = try await client.withConnection { try await version(on: $0, logger: logger) }
        if found > currentVersion { throw StoreError.newerSchema(found: found) }
        if found < currentVersion {
            throw StoreError("the database's sync schema is version \(found), this coffer-sync needs version \(currentVersion): run coffer-sync migrate")
        }
    }
}

/// A failure of the store that is not PostgreSQL's own; the message says what.
struct StoreError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// PostgreSQL's own failure, said with the URL (without its password).
    static func postgres(_ url: PostgresURL, _ error: any Error) -> StoreError {
        let error = unwrapTransactionError(error)
        if let store = error as? StoreError { return store }
        if let psql = error as? PSQLError {
            if let message = psql.serverInfo?[.message] {
                return StoreError("PostgreSQL at \(url) failed: \(message)")
            }
            return StoreError("PostgreSQL at \(url) failed: \(psql.code) (is it running and reachable?)")
        }
        return StoreError("PostgreSQL at \(url) failed: \(error) (is it running and reachable?)")
    }

    static func newerSchema(found: Int) -> StoreError {
        StoreError("the database's sync schema is version \(found), newer than version \(SchemaMigrations.currentVersion) that this coffer-sync knows: use a newer coffer-sync")
    }
}

/// The error a transaction's own code threw, out of PostgresNIO's wrapper
/// (which also wraps failures of BEGIN and COMMIT).
func unwrapTransactionError(_ error: any Error) -> any Error {
    guard let transaction = error as? PostgresTransactionError else { return error }
    return transaction.closureError ?? transaction.beginError ?? transaction.commitError
        ?? transaction.rollbackError ?? error
}
