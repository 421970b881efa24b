// The custom JWT provider: a token signed by the app's own identity provider
// (HS256 with a shared secret, RS256 or ES256 with its public key), with
// `sub` naming the user and `exp` required; `aud` and `iss` are checked when
// the configuration names them.
import Foundation
import JWTKit

/// The claims the service reads of a custom JWT; others are ignored.
struct CustomClaims: JWTPayload {
    var sub: SubjectClaim?
    var exp: ExpirationClaim?
    var aud: AudienceClaim?
    var iss: IssuerClaim?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

struct CustomJWTVerifier: Sendable {
    let keys: JWTKeyCollection
    let settings: CustomJWTSettings

    init(_ settings: CustomJWTSettings) async throws {
        let keys = JWTKeyCollection()
        do {
            switch settings.algorithm {
            case .hs256:
                await keys.add(hmac: HMACKey(from: settings.secret ?? ""), digestAlgorithm: .sha256)
            case .rs256:
                await keys.add(rsa: try Insecure.RSA.PublicKey(pem: settings.publicKey ?? ""), digestAlgorithm: .sha256)
            case .es256:
                await keys.add(ecdsa: try ES256PublicKey(pem: settings.publicKey ?? ""))
            }
        } catch {
            throw ConfigurationError("'auth.jwt.publicKey' is not a PEM \(settings.algorithm == .rs256 ? "RSA" : "P-256") public key: \(error)")
        }
        self.keys = keys
        self.settings = settings
    }

    /// The token's subject, or a refusal naming what was wrong.
    func subject(of token: String, now: Date = Date()) async throws(AuthFailure) -> String {
        try await identity(of: token, rolesClaim: nil, now: now).subject
    }

    /// The token's subject and, when `rolesClaim` is set, the roles that
    /// claim lists (a string or an array of strings; absent: none); or a
    /// refusal naming what was wrong.
    func identity(of token: String, rolesClaim: String?,
                  now: Date = Date()) async throws(AuthFailure) -> (subject: String, roles: [String]) {
        let claims: CustomClaims
        do {
            claims = try await keys.verify(token, as: CustomClaims.self)
        } catch {
            throw AuthFailure.unauthorized("invalid_token", "the JWT's signature does not verify with the configured \(settings.algorithm.rawValue) key, or it is not a JWT")
        }
        guard let exp = claims.exp else { throw AuthFailure.unauthorized("invalid_token", "the JWT has no exp claim") }
        guard exp.value > now else { throw AuthFailure.unauthorized("invalid_token", "the JWT has expired") }
        if let audience = settings.audience {
            guard let aud = claims.aud, aud.value.contains(audience) else {
                throw AuthFailure.unauthorized("invalid_token", "the JWT's aud does not include \(audience)")
            }
        }
        if let issuer = settings.issuer {
            guard claims.iss?.value == issuer else {
                throw AuthFailure.unauthorized("invalid_token", "the JWT's iss is not \(issuer)")
            }
        }
        guard let sub = claims.sub?.value, !sub.isEmpty else {
            throw AuthFailure.unauthorized("invalid_token", "the JWT has no sub claim")
        }
        guard let rolesClaim else { return (sub, []) }
        return (sub, try Self.roles(in: token, claim: rolesClaim))
    }

    /// The roles of a verified token's claim `claim`.
    static func roles(in token: String, claim: String) throws(AuthFailure) -> [String] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        var base64 = parts.count == 3 ? String(parts[1]) : ""
        base64 = base64.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
              let payload = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw AuthFailure.unauthorized("invalid_token", "the JWT's payload is not a JSON object")
        }
        switch payload[claim] {
        case nil, is NSNull:
            return []
        case let role as String:
            return role.isEmpty ? [] : [role]
        case let list as [Any]:
            let roles = list.compactMap { $0 as? String }
            guard roles.count == list.count else {
                throw AuthFailure.unauthorized("invalid_token", "the JWT's \(claim) claim must list strings")
            }
            return roles.filter { !$0.isEmpty }
        default:
            throw AuthFailure.unauthorized("invalid_token", "the JWT's \(claim) claim must be a string or a list of strings")
        }
    }
}
