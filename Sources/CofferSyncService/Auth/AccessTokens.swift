// The service's own access tokens: JWTs signed with HS256 and the service's
// signing secret, `sub` the user id, `aud` "coffer-sync", `iat`, `exp`, and
// `roles` when the login gave the user roles (a custom JWT's roles claim).
// Every instance with the same secret accepts every instance's tokens, so the
// service stays stateless; a HELLO carries one (docs/SYNC.md, "Users and
// authentication").
import Foundation
import JWTKit

/// The claims of an access token.
struct AccessClaims: JWTPayload {
    static let audience = "coffer-sync"

    var sub: SubjectClaim
    var aud: AudienceClaim
    var iat: IssuedAtClaim
    var exp: ExpirationClaim
    /// The roles the login gave (absent when none).
    var roles: [String]?

    /// Signature, audience and expiry are checked by AccessTokens.verify,
    /// which tells an expired token from a forged one.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Why an access token was refused.
enum AccessTokenRefusal: Error, Equatable {
    case missing
    case invalid(String)
    case expired
}

struct AccessTokens: Sendable {
    let keys: JWTKeyCollection
    /// Seconds.
    let lifetime: Int

    init(secret: String, lifetime: Int) async {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        self.keys = keys
        self.lifetime = lifetime
    }

    /// A new token for `user` with `roles`, and when it expires.
    func issue(user: String, roles: [String] = [], now: Date = Date()) async throws -> (token: String, expires: Date) {
        let expires = now.addingTimeInterval(TimeInterval(lifetime))
        let claims = AccessClaims(sub: SubjectClaim(value: user), aud: AudienceClaim(value: [AccessClaims.audience]),
                                  iat: IssuedAtClaim(value: now), exp: ExpirationClaim(value: expires),
                                  roles: roles.isEmpty ? nil : roles.sorted())
        return (try await keys.sign(claims), expires)
    }

    /// The user id of a valid, unexpired token of this service.
    func verify(_ token: String, now: Date = Date()) async throws(AccessTokenRefusal) -> String {
        try await verifiedUser(token, now: now).id
    }

    /// The user (id and the roles the token carries) of a valid, unexpired token of this service.
    func verifiedUser(_ token: String, now: Date = Date()) async throws(AccessTokenRefusal) -> QueryUser {
        guard !token.isEmpty else { throw AccessTokenRefusal.missing }
        let claims: AccessClaims
        do {
            claims = try await keys.verify(token, as: AccessClaims.self)
        } catch {
            throw AccessTokenRefusal.invalid("the token is not an access token signed by this service")
        }
        guard claims.aud.value.contains(AccessClaims.audience) else {
            throw AccessTokenRefusal.invalid("the token's audience is not \(AccessClaims.audience)")
        }
        guard claims.exp.value > now else { throw AccessTokenRefusal.expired }
        guard !claims.sub.value.isEmpty else { throw AccessTokenRefusal.invalid("the token names no user") }
        return QueryUser(id: claims.sub.value, roles: Set(claims.roles ?? []))
    }
}
