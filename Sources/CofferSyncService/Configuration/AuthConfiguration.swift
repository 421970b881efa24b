// The configuration file's "auth" section (docs/SYNC.md, "Users and
// authentication"): which login providers are enabled, the custom JWT
// provider's key and checks, the service's own token signing secret (also
// from COFFER_SYNC_SIGNING_SECRET, so that it need not be in a file) and the
// token lifetimes. Without the section the service runs in development mode.

/// The custom JWT provider: tokens signed by the app's own identity provider.
struct CustomJWTSettings: Equatable, Sendable {
    enum Algorithm: String, Equatable, Sendable, CaseIterable {
        case hs256 = "HS256", rs256 = "RS256", es256 = "ES256"
    }

    var algorithm: Algorithm
    /// The HS256 shared secret.
    var secret: String?
    /// The RS256 or ES256 public key, PEM.
    var publicKey: String?
    /// When set, a token's `aud` must include it.
    var audience: String?
    /// When set, a token's `iss` must be it.
    var issuer: String?
}

/// The settings of the "auth" section after validation.
struct AuthSettings: Equatable, Sendable {
    static let defaultAccessTokenLifetime = 30 * 60
    static let defaultRefreshTokenLifetime = 60 * 24 * 60 * 60
    /// The shortest signing secret accepted, in bytes: HS256's key size.
    static let minimumSecretBytes = 32
    static let keys: Set<String> = ["anonymous", "emailPassword", "jwt", "signingSecret",
                                    "accessTokenLifetime", "refreshTokenLifetime"]
    static let jwtKeys: Set<String> = ["algorithm", "secret", "publicKey", "audience", "issuer"]

    var anonymous = false
    var emailPassword = false
    var jwt: CustomJWTSettings?
    var signingSecret: String
    /// Seconds.
    var accessTokenLifetime = defaultAccessTokenLifetime
    /// Seconds.
    var refreshTokenLifetime = defaultRefreshTokenLifetime

    /// The enabled providers, as the login request names them.
    var providerNames: [String] {
        (anonymous ? ["anonymous"] : []) + (emailPassword ? ["email-password"] : []) + (jwt.map { ["jwt (\($0.algorithm.rawValue))"] } ?? [])
    }

    /// Validates the section; `secretFromEnvironment` (COFFER_SYNC_SIGNING_SECRET)
    /// wins over the file's "signingSecret". Errors name the key.
    static func parse(_ value: Any, path: String, secretFromEnvironment: String?) throws -> AuthSettings {
        func fail(_ message: String) -> ConfigurationError {
            ConfigurationError("configuration file \(path): \(message)")
        }
        guard let object = value as? [String: Any] else { throw fail("'auth' must be an object") }
        if let unknown = object.keys.filter({ !keys.contains($0) }).sorted().first {
            throw fail("unknown setting 'auth.\(unknown)' (known: \(keys.sorted().joined(separator: ", ")))")
        }
        func flag(_ key: String) throws -> Bool {
            guard let raw = object[key] else { return false }
            guard let bool = raw as? Bool else {
                throw fail("'auth.\(key)' must be true or false")
            }
            return bool
        }
        func lifetime(_ key: String, _ fallback: Int) throws -> Int {
            guard let raw = object[key] else { return fallback }
            guard let seconds = raw as? Int, seconds > 0 else {
                throw fail("'auth.\(key)' must be a whole number of seconds above 0")
            }
            return seconds
        }
        let secret = secretFromEnvironment ?? (object["signingSecret"] as? String)
        if object["signingSecret"] != nil && !(object["signingSecret"] is String) {
            throw fail("'auth.signingSecret' must be a string")
        }
        guard let secret else {
            throw fail("'auth' needs the service's token signing secret: set COFFER_SYNC_SIGNING_SECRET or 'auth.signingSecret'")
        }
        guard secret.utf8.count >= minimumSecretBytes else {
            throw fail("the token signing secret (COFFER_SYNC_SIGNING_SECRET or 'auth.signingSecret') must be at least \(minimumSecretBytes) bytes, not \(secret.utf8.count)")
        }
        var settings = AuthSettings(signingSecret: secret)
        settings.anonymous = try flag("anonymous")
        settings.emailPassword = try flag("emailPassword")
        settings.accessTokenLifetime = try lifetime("accessTokenLifetime", defaultAccessTokenLifetime)
        settings.refreshTokenLifetime = try lifetime("refreshTokenLifetime", defaultRefreshTokenLifetime)
        if let raw = object["jwt"] {
            settings.jwt = try parseJWT(raw, fail: fail)
        }
        guard settings.anonymous || settings.emailPassword || settings.jwt != nil else {
            throw fail("'auth' enables no provider: set 'anonymous' or 'emailPassword' to true, or configure 'jwt'")
        }
        return settings
    }

    private static func parseJWT(_ raw: Any, fail: (String) -> ConfigurationError) throws -> CustomJWTSettings {
        guard let object = raw as? [String: Any] else { throw fail("'auth.jwt' must be an object") }
        if let unknown = object.keys.filter({ !jwtKeys.contains($0) }).sorted().first {
            throw fail("unknown setting 'auth.jwt.\(unknown)' (known: \(jwtKeys.sorted().joined(separator: ", ")))")
        }
        for key in jwtKeys where object[key] != nil && !(object[key] is String) {
            throw fail("'auth.jwt.\(key)' must be a string")
        }
        let names = CustomJWTSettings.Algorithm.allCases.map(\.rawValue).joined(separator: ", ")
        guard let name = object["algorithm"] as? String else {
            throw fail("'auth.jwt.algorithm' is required (\(names))")
        }
        guard let algorithm = CustomJWTSettings.Algorithm(rawValue: name) else {
            throw fail("'auth.jwt.algorithm' is '\(name)'; known: \(names)")
        }
        let settings = CustomJWTSettings(algorithm: algorithm, secret: object["secret"] as? String,
                                         publicKey: object["publicKey"] as? String,
                                         audience: object["audience"] as? String, issuer: object["issuer"] as? String)
        switch algorithm {
        case .hs256:
            guard let secret = settings.secret, !secret.isEmpty else { throw fail("'auth.jwt.secret' is required for HS256") }
            guard settings.publicKey == nil else { throw fail("'auth.jwt.publicKey' is for RS256 and ES256, not HS256") }
        case .rs256, .es256:
            guard let key = settings.publicKey, key.contains("-----BEGIN") else {
                throw fail("'auth.jwt.publicKey' is required for \(name): a PEM public key (-----BEGIN PUBLIC KEY-----)")
            }
            guard settings.secret == nil else { throw fail("'auth.jwt.secret' is for HS256, not \(name)") }
        }
        return settings
    }
}
