// The service's secret material, from libsodium: Argon2id password hashes
// (crypto_pwhash_str, deliberately slow, so always computed on the thread
// pool and never on an event loop), random refresh tokens, and the SHA-256
// under which a refresh token is stored (the token itself never is).
import CSodium
import Foundation
import NIOPosix

enum Secrets {
    /// libsodium is initialised once per process before any of these run.
    private static let ready: Bool = sodium_init() >= 0

    /// The Argon2id hash of `password`, in libsodium's string format (which
    /// carries the salt and the limits), computed off the event loop.
    static func hashPassword(_ password: String) async throws -> String {
        precondition(ready, "libsodium failed to initialise")
        return try await NIOThreadPool.singleton.runIfActive {
            var out = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
            let rc = crypto_pwhash_str(&out, password, UInt64(password.utf8.count),
                                       UInt64(crypto_pwhash_opslimit_interactive()),
                                       crypto_pwhash_memlimit_interactive())
            guard rc == 0 else { throw StoreError("hashing a password failed (out of memory)") }
            return out.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
    }

    /// Whether `password` matches `hash` (hashPassword's format), off the event loop.
    static func verifyPassword(_ password: String, hash: String) async throws -> Bool {
        precondition(ready, "libsodium failed to initialise")
        return try await NIOThreadPool.singleton.runIfActive {
            crypto_pwhash_str_verify(hash, password, UInt64(password.utf8.count)) == 0
        }
    }

    /// A new refresh token: 32 random bytes, base64url without padding.
    static func newRefreshToken() -> String {
        precondition(ready, "libsodium failed to initialise")
        var bytes = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&bytes, bytes.count)
        return base64URL(bytes)
    }

    /// The SHA-256 of a refresh token: what PostgreSQL keeps of it.
    static func tokenHash(_ token: String) -> [UInt8] {
        precondition(ready, "libsodium failed to initialise")
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_bytes()))
        let bytes = Array(token.utf8)
        crypto_hash_sha256(&out, bytes, UInt64(bytes.count))
        return out
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
