// The authentication endpoints, JSON over HTTP on the sync listener
// (docs/SYNC.md, "Users and authentication"): POST /auth/v1/register,
// /auth/v1/login, /auth/v1/refresh and /auth/v1/logout. A refused request is
// 400, 401 or 409 with {"error": code, "message": what was wrong}; without
// an "auth" configuration every endpoint answers 404 saying so.
import Foundation
import Hummingbird
import Logging
import NIOCore

enum AuthRoutes {
    /// The largest request body read, in bytes.
    static let maxBody = 64 * 1024

    static func add<Context: RequestContext>(to router: Router<Context>, authenticator: Authenticator?, logger: Logger) {
        router.post("/auth/v1/register") { request, _ in
            await respond(request, authenticator, logger, status: .created) { auth, body in
                let id = try await auth.register(email: try string(body, "email"), password: try string(body, "password"))
                return ["userId": id]
            }
        }
        router.post("/auth/v1/login") { request, _ in
            await respond(request, authenticator, logger) { auth, body in
                let result = try await auth.login(provider: try string(body, "provider"),
                                                  email: try optionalString(body, "email"),
                                                  password: try optionalString(body, "password"),
                                                  token: try optionalString(body, "token"))
                return ["userId": result.user, "accessToken": result.accessToken,
                        "accessTokenExpiresAt": Int(result.accessTokenExpires.timeIntervalSince1970),
                        "refreshToken": result.refreshToken,
                        "refreshTokenExpiresAt": Int(result.refreshTokenExpires.timeIntervalSince1970)]
            }
        }
        router.post("/auth/v1/refresh") { request, _ in
            await respond(request, authenticator, logger) { auth, body in
                let result = try await auth.refresh(refreshToken: try string(body, "refreshToken"))
                return ["userId": result.user, "accessToken": result.accessToken,
                        "accessTokenExpiresAt": Int(result.expires.timeIntervalSince1970)]
            }
        }
        router.post("/auth/v1/logout") { request, _ in
            await respond(request, authenticator, logger) { auth, body in
                try await auth.logout(refreshToken: try string(body, "refreshToken"))
                return [:]
            }
        }
    }

    private static func string(_ body: [String: Any], _ key: String) throws(AuthFailure) -> String {
        guard let value = try optionalString(body, key) else {
            throw AuthFailure.badRequest("invalid_request", "the request has no \"\(key)\"")
        }
        return value
    }

    private static func optionalString(_ body: [String: Any], _ key: String) throws(AuthFailure) -> String? {
        guard let raw = body[key], !(raw is NSNull) else { return nil }
        guard let text = raw as? String else { throw AuthFailure.badRequest("invalid_request", "\"\(key)\" must be a string") }
        return text
    }

    /// Reads the JSON body, runs `work` and answers with its JSON or the failure.
    private static func respond(_ request: Request, _ authenticator: Authenticator?, _ logger: Logger,
                                status: HTTPResponse.Status = .ok,
                                _ work: (Authenticator, [String: Any]) async throws -> [String: Any]) async -> Response {
        guard let authenticator else {
            return json(.notFound, ["error": "auth_disabled",
                                    "message": "this service runs in development mode: authentication is not configured"])
        }
        do {
            var request = request
            let buffer: ByteBuffer
            do {
                buffer = try await request.collectBody(upTo: maxBody)
            } catch {
                throw AuthFailure.badRequest("invalid_request", "the request body is not readable or larger than \(maxBody) bytes")
            }
            guard let body = (try? JSONSerialization.jsonObject(with: Data(buffer.bytes))) as? [String: Any] else {
                throw AuthFailure.badRequest("invalid_request", "the request body is not a JSON object")
            }
            return json(status, try await work(authenticator, body))
        } catch let failure as AuthFailure {
            return json(failure.status, ["error": failure.code, "message": failure.message])
        } catch {
            let failure = SessionFailure.from(error)
            logger.error("authentication request failed: \(failure.description)")
            return json(.internalServerError, ["error": "internal", "message": failure.description])
        }
    }

    private static func json(_ status: HTTPResponse.Status, _ object: [String: Any]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
