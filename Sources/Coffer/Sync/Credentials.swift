// Credentials: how a user logs in to a coffer-sync service.

/// How a user logs in: ``App/login(credentials:)``.
public enum Credentials: Sendable, Equatable {
    /// A new anonymous user at each login.
    case anonymous
    /// A user registered with ``EmailPasswordAuth/registerUser(email:password:)``.
    case emailPassword(email: String, password: String)
    /// A JWT signed by the app's own identity provider; its `sub` names the user.
    case jwt(token: String)

    /// The body of the login request (docs/SYNC.md, `/auth/v1/login`).
    var loginBody: [String: String] {
        switch self {
        case .anonymous: ["provider": "anonymous"]
        case .emailPassword(let email, let password): ["provider": "email-password", "email": email, "password": password]
        case .jwt(let token): ["provider": "jwt", "token": token]
        }
    }
}
