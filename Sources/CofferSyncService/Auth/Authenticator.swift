// What the authentication endpoints do, apart from HTTP: register an
// email/password user, log in with a provider, refresh an access token and
// log out (docs/SYNC.md, "Users and authentication").
import Foundation
import Logging

/// What a login returns.
struct LoginResult: Sendable {
    var user: String
    var accessToken: String
    var accessTokenExpires: Date
    var refreshToken: String
    var refreshTokenExpires: Date
}

struct Authenticator: Sendable {
    /// Realm's shortest password.
    static let minimumPasswordLength = 6
    static let maximumPasswordBytes = 4096

    let settings: AuthSettings
    let users: UserStore
    let accessTokens: AccessTokens
    let customJWT: CustomJWTVerifier?
    /// The custom JWT claim that lists a user's roles (rules.rolesClaim), if any.
    let rolesClaim: String?
    /// The hash of a password nobody has, verified when a login's email is
    /// unknown, so that such a login takes as long as a wrong password.
    let decoyHash: String

    init(settings: AuthSettings, users: UserStore, rolesClaim: String? = nil) async throws {
        self.settings = settings
        self.rolesClaim = rolesClaim
        self.users = users
        self.decoyHash = try await Secrets.hashPassword(Secrets.newRefreshToken())
        self.accessTokens = await AccessTokens(secret: settings.signingSecret, lifetime: settings.accessTokenLifetime)
        if let jwt = settings.jwt {
            self.customJWT = try await CustomJWTVerifier(jwt)
        } else {
            self.customJWT = nil
        }
    }

    /// Emails are compared without case and surrounding spaces.
    static func normalizedEmail(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    private func requireEmailPassword() throws(AuthFailure) {
        guard settings.emailPassword else {
            throw AuthFailure.badRequest("provider_disabled", "the email-password provider is not enabled on this service")
        }
    }

    /// Registers an email/password user; returns its id.
    func register(email: String, password: String) async throws -> String {
        try requireEmailPassword()
        let email = Self.normalizedEmail(email)
        guard !email.isEmpty else { throw AuthFailure.badRequest("invalid_email", "the email is empty") }
        guard email.contains("@") else { throw AuthFailure.badRequest("invalid_email", "the email '\(email)' has no @") }
        guard password.count >= Self.minimumPasswordLength else {
            throw AuthFailure.badRequest("invalid_password", "the password must have at least \(Self.minimumPasswordLength) characters, not \(password.count)")
        }
        guard password.utf8.count <= Self.maximumPasswordBytes else {
            throw AuthFailure.badRequest("invalid_password", "the password is longer than \(Self.maximumPasswordBytes) bytes")
        }
        if try await users.identity(provider: .emailPassword, subject: email) != nil {
            throw AuthFailure.conflict("email_taken", "a user with the email '\(email)' is registered already")
        }
        let hash = try await Secrets.hashPassword(password)
        let id = UUID().uuidString.lowercased()
        guard try await users.createUserIfNew(id: id, provider: .emailPassword, subject: email, passwordHash: hash) else {
            throw AuthFailure.conflict("email_taken", "a user with the email '\(email)' is registered already")
        }
        return id
    }

    /// Logs in with the request's provider: "anonymous" (a new user each
    /// time), "email-password" (email, password) or "jwt" (token).
    func login(provider: String, email: String?, password: String?, token: String?) async throws -> LoginResult {
        switch provider {
        case UserStore.Provider.anonymous.rawValue:
            guard settings.anonymous else {
                throw AuthFailure.badRequest("provider_disabled", "the anonymous provider is not enabled on this service")
            }
            let id = UUID().uuidString.lowercased()
            _ = try await users.createUserIfNew(id: id, provider: .anonymous, subject: id)
            return try await session(for: id)
        case UserStore.Provider.emailPassword.rawValue:
            try requireEmailPassword()
            guard let email, let password else {
                throw AuthFailure.badRequest("invalid_request", "an email-password login needs \"email\" and \"password\"")
            }
            guard password.utf8.count <= Self.maximumPasswordBytes,
                  let found = try await users.identity(provider: .emailPassword, subject: Self.normalizedEmail(email)),
                  let hash = found.passwordHash
            else {
                // As slow as a wrong password, so that timing does not tell either.
                _ = try await Secrets.verifyPassword(password, hash: decoyHash)
                throw AuthFailure.invalidCredentials
            }
            guard try await Secrets.verifyPassword(password, hash: hash) else { throw AuthFailure.invalidCredentials }
            return try await session(for: found.user)
        case UserStore.Provider.jwt.rawValue:
            guard let customJWT else {
                throw AuthFailure.badRequest("provider_disabled", "the jwt provider is not configured on this service")
            }
            guard let token, !token.isEmpty else {
                throw AuthFailure.badRequest("invalid_request", "a jwt login needs \"token\"")
            }
            let (subject, roles) = try await customJWT.identity(of: token, rolesClaim: rolesClaim)
            if let found = try await users.identity(provider: .jwt, subject: subject) {
                return try await session(for: found.user, roles: roles)
            }
            let id = UUID().uuidString.lowercased()
            if try await users.createUserIfNew(id: id, provider: .jwt, subject: subject) {
                return try await session(for: id, roles: roles)
            }
            // Another login made it meanwhile.
            guard let found = try await users.identity(provider: .jwt, subject: subject) else {
                throw StoreError("the jwt identity '\(subject)' vanished while logging in")
            }
            return try await session(for: found.user, roles: roles)
        default:
            throw AuthFailure.badRequest("invalid_provider", "unknown provider '\(provider)' (known: anonymous, email-password, jwt)")
        }
    }

    /// A new access token for the user of a valid refresh token.
    func refresh(refreshToken: String) async throws -> (user: String, accessToken: String, expires: Date) {
        guard let found = try await users.userOfRefreshToken(hash: Secrets.tokenHash(refreshToken)) else {
            throw AuthFailure.unauthorized("invalid_refresh_token", "the refresh token is unknown, expired or revoked")
        }
        let user = found.user
        let (token, expires) = try await accessTokens.issue(user: user, roles: found.roles)
        return (user, token, expires)
    }

    /// Revokes a refresh token.
    func logout(refreshToken: String) async throws {
        guard try await users.revokeRefreshToken(hash: Secrets.tokenHash(refreshToken)) else {
            throw AuthFailure.unauthorized("invalid_refresh_token", "the refresh token is unknown, expired or revoked")
        }
    }

    /// A login of `user` with the roles its credentials gave (a custom JWT's roles claim).
    private func session(for user: String, roles: [String] = []) async throws -> LoginResult {
        let (access, accessExpires) = try await accessTokens.issue(user: user, roles: roles)
        let refresh = Secrets.newRefreshToken()
        let refreshExpires = Date().addingTimeInterval(TimeInterval(settings.refreshTokenLifetime))
        try await users.addRefreshToken(hash: Secrets.tokenHash(refresh), user: user, roles: roles,
                                        expires: refreshExpires)
        return LoginResult(user: user, accessToken: access, accessTokenExpires: accessExpires,
                           refreshToken: refresh, refreshTokenExpires: refreshExpires)
    }
}
