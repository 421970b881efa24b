// A refused authentication request: the HTTP status and a JSON body
// {"error": code, "message": what was wrong}.
import Foundation
import Hummingbird

struct AuthFailure: Error, CustomStringConvertible {
    let status: HTTPResponse.Status
    let code: String
    let message: String

    var description: String { "\(status.code) \(code): \(message)" }

    static func badRequest(_ code: String, _ message: String) -> AuthFailure {
        AuthFailure(status: .badRequest, code: code, message: message)
    }

    static func unauthorized(_ code: String, _ message: String) -> AuthFailure {
        AuthFailure(status: .unauthorized, code: code, message: message)
    }

    static func conflict(_ code: String, _ message: String) -> AuthFailure {
        AuthFailure(status: .conflict, code: code, message: message)
    }

    /// The one answer to a failed email/password login, whether the email is
    /// unknown or the password wrong.
    static let invalidCredentials = AuthFailure.unauthorized("invalid_credentials", "the email or the password is wrong")
}
