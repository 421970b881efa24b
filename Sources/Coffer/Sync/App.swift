// App: a coffer-sync service's authentication endpoints (docs/SYNC.md, "Users
// and authentication"): logging in, registering email/password users, and
// the user logged in last.

import Foundation

/// A `coffer-sync` service that authenticates its clients, as Realm's `App`.
///
/// ```swift
/// let app = App(baseURL: URL(string: "http://127.0.0.1:7800")!)
/// try await app.emailPasswordAuth.registerUser(email: "ada@example.com", password: "secret1")
/// let user = try await app.login(credentials: .emailPassword(email: "ada@example.com", password: "secret1"))
/// var config = user.configuration(partitionValue: "team-1")
/// config.objectTypes = [Note.self]
/// let db = try await Database(configuration: config)   // main-actor code
/// ```
///
/// HTTP goes through Foundation's `URLSession`. An `App` is `Sendable`.
public final class App: Sendable {
    /// Names the app's folder of synced files (see ``User/configuration(partitionValue:)``).
    public let id: String
    /// The service, `http://HOST:PORT` (or `https://`).
    public let baseURL: URL
    private let current = LockedValue<User?>(nil)

    /// The app of the service at `baseURL` (`http://HOST:PORT`; a `ws://` URL
    /// of its sync endpoint is taken as its HTTP address). `id` names the
    /// folder its users' files go to; by default the service's host and port.
    public init(id: String? = nil, baseURL: URL) {
        var parts = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) ?? URLComponents()
        switch parts.scheme?.lowercased() {
        case "ws": parts.scheme = "http"
        case "wss": parts.scheme = "https"
        default: break
        }
        parts.path = ""
        parts.query = nil
        self.baseURL = parts.url ?? baseURL
        self.id = id ?? [parts.host ?? "app", parts.port.map { String($0) }].compactMap { $0 }.joined(separator: "_")
    }

    /// The app of the service at `baseURL`; Realm's `App(id:)` with the address
    /// given. See ``init(id:baseURL:)``.
    public convenience init(baseURL: URL) {
        self.init(id: nil, baseURL: baseURL)
    }

    /// The service's sync endpoint, `ws://HOST:PORT/sync/v1` (`wss://` for an
    /// `https://` app, which the built-in transport refuses at open), which
    /// ``User/configuration(partitionValue:)`` syncs with.
    public var syncURL: URL {
        var parts = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        parts.scheme = parts.scheme?.lowercased() == "https" ? "wss" : "ws"
        parts.path = "/sync/v1"
        return parts.url!
    }

    /// Registering users who log in with an email and a password.
    public var emailPasswordAuth: EmailPasswordAuth { EmailPasswordAuth(app: self) }

    /// The user that logged in last and has not logged out, nil if none.
    public var currentUser: User? {
        current.withLock { user in
            if let logged = user, !logged.isLoggedIn { user = nil }
            return user
        }
    }

    /// Logs in and returns the user, who becomes ``currentUser``.
    ///
    /// - Throws: ``AuthError``: `.invalidCredentials` (HTTP 401) for a wrong
    ///   email or password, `.invalidToken` for a refused JWT,
    ///   `.providerDisabled` for a login the service does not allow,
    ///   `.authDisabled` for a service without authentication, `.unreachable`.
    public func login(credentials: Credentials) async throws -> User {
        let path = "/auth/v1/login"
        let answer = try await AuthHTTP.post(baseURL, path, credentials.loginBody)
        let user = User(app: self, id: try AuthHTTP.string(answer, "userId", path),
                        accessToken: try AuthHTTP.string(answer, "accessToken", path),
                        accessTokenExpiresAt: try AuthHTTP.date(answer, "accessTokenExpiresAt", path),
                        refreshToken: try AuthHTTP.string(answer, "refreshToken", path))
        current.withLock { $0 = user }
        return user
    }
}

/// Registers email/password users of an ``App``: ``App/emailPasswordAuth``.
public struct EmailPasswordAuth: Sendable {
    let app: App

    /// Registers a user who then logs in with ``Credentials/emailPassword(email:password:)``.
    ///
    /// - Throws: ``AuthError``: `.emailTaken` (HTTP 409), `.invalidEmail`,
    ///   `.invalidPassword` (too short), `.providerDisabled`, `.unreachable`.
    public func registerUser(email: String, password: String) async throws {
        _ = try await AuthHTTP.post(app.baseURL, "/auth/v1/register", ["email": email, "password": password])
    }
}
