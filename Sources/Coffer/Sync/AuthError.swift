// AuthError: a coffer-sync service refused an authentication request, or
// could not be reached.

/// A failed request to a `coffer-sync` service's authentication endpoints
/// (docs/SYNC.md, "Users and authentication"): what ``App``, its
/// ``App/emailPasswordAuth`` and ``User`` throw.
///
/// ```swift
/// do {
///     _ = try await app.login(credentials: .emailPassword(email: email, password: "wrong"))
/// } catch let error as AuthError where error.code == .invalidCredentials {
///     print(error.message)   // the service's own words
/// }
/// ```
public struct AuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The service's error code (its JSON `error`), or one of Coffer's own for
    /// requests that got no usable answer.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A wrong email or password (HTTP 401, the same for both).
        public static let invalidCredentials = Code(rawValue: "invalid_credentials")
        /// The email is registered already (HTTP 409).
        public static let emailTaken = Code(rawValue: "email_taken")
        /// Not an email address.
        public static let invalidEmail = Code(rawValue: "invalid_email")
        /// A password that is too short.
        public static let invalidPassword = Code(rawValue: "invalid_password")
        /// A JWT the service does not accept.
        public static let invalidToken = Code(rawValue: "invalid_token")
        /// A refresh token that was revoked (``User/logOut()``) or expired.
        public static let invalidRefreshToken = Code(rawValue: "invalid_refresh_token")
        /// The service does not allow this kind of login.
        public static let providerDisabled = Code(rawValue: "provider_disabled")
        /// The service runs in development mode, without authentication (HTTP 404).
        public static let authDisabled = Code(rawValue: "auth_disabled")
        /// The request was malformed.
        public static let invalidRequest = Code(rawValue: "invalid_request")
        /// No answer came: the service could not be reached (HTTP status 0).
        public static let unreachable = Code(rawValue: "unreachable")
        /// The answer was not the JSON the endpoint gives.
        public static let badAnswer = Code(rawValue: "bad_answer")

        public var description: String { rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// The HTTP status of the answer, 0 when none came.
    public let httpStatus: Int
    /// The service's message (or the reason no answer came), naming the endpoint.
    public let message: String

    /// An error with a code, the HTTP status and a message.
    public init(_ code: Code, httpStatus: Int, _ message: String) {
        self.code = code
        self.httpStatus = httpStatus
        self.message = message
    }

    /// The message, the code and the HTTP status.
    public var description: String { "\(message) (\(code), HTTP \(httpStatus))" }
}
