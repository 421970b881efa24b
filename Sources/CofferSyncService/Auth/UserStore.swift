// What authentication asks of PostgreSQL: users, their identities (a
// provider and its subject name one user; email users keep their Argon2id
// password hash there) and refresh tokens, kept only as SHA-256 hashes and
// revocable. Every call is one statement or one transaction.
import Foundation
import Logging
import PostgresNIO

struct UserStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// Identity providers as stored in coffer_sync_identities.provider.
    enum Provider: String {
        case anonymous = "anonymous", emailPassword = "email-password", jwt = "jwt"
    }

    /// Creates a user with its first identity; false when the identity
    /// exists already (the email is taken).
    private func createUser(id: String, provider: Provider, subject: String, passwordHash: String? = nil) async throws -> Bool {
        try await client.withTransaction(logger: logger) { conn in
            try await conn.query("INSERT INTO coffer_sync_users (id) VALUES (\(id))", logger: logger)
            let rows = try await conn.query("""
                INSERT INTO coffer_sync_identities (provider, subject, user_id, password_hash)
                VALUES (\(provider.rawValue), \(subject), \(id), \(passwordHash))
                ON CONFLICT DO NOTHING RETURNING user_id
                """, logger: logger)
            for try await _ in rows.decode(String.self) { return true }
            throw IdentityTaken()
        }
    }

    private struct IdentityTaken: Error {}

    /// Like createUser, but false (and nothing written) when the identity exists.
    func createUserIfNew(id: String, provider: Provider, subject: String, passwordHash: String? = nil) async throws -> Bool {
        do {
            return try await createUser(id: id, provider: provider, subject: subject, passwordHash: passwordHash)
        } catch {
            if unwrapTransactionError(error) is IdentityTaken { return false }
            throw error
        }
    }

    /// The user of an identity and its password hash, if it exists.
    func identity(provider: Provider, subject: String) async throws -> (user: String, passwordHash: String?)? {
        let rows = try await client.query("""
            SELECT user_id, password_hash FROM coffer_sync_identities
            WHERE provider = \(provider.rawValue) AND subject = \(subject)
            """, logger: logger)
        for try await (user, hash) in rows.decode((String, String?).self) { return (user, hash) }
        return nil
    }

    /// Stores a refresh token's hash for `user` until `expires`, with the
    /// roles its login gave.
    func addRefreshToken(hash: [UInt8], user: String, roles: [String] = [], expires: Date) async throws {
        try await client.query("""
            INSERT INTO coffer_sync_refresh_tokens (token_hash, user_id, expires, roles)
            VALUES (\(hash.bytea), \(user), \(expires), \(roles)::text[])
            """, logger: logger)
    }

    /// The user of a refresh token that is neither expired nor revoked, and
    /// the roles its login gave.
    func userOfRefreshToken(hash: [UInt8]) async throws -> (user: String, roles: [String])? {
        let rows = try await client.query("""
            SELECT user_id, roles FROM coffer_sync_refresh_tokens
            WHERE token_hash = \(hash.bytea) AND revoked IS NULL AND expires > now()
            """, logger: logger)
        for try await (user, roles) in rows.decode((String, [String]).self) { return (user, roles) }
        return nil
    }

    /// Revokes a refresh token; false when it was unknown, expired or revoked already.
    func revokeRefreshToken(hash: [UInt8]) async throws -> Bool {
        let rows = try await client.query("""
            UPDATE coffer_sync_refresh_tokens SET revoked = now()
            WHERE token_hash = \(hash.bytea) AND revoked IS NULL AND expires > now()
            RETURNING user_id
            """, logger: logger)
        for try await _ in rows.decode(String.self) { return true }
        return false
    }
}
