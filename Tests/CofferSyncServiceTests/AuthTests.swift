// HELLO tokens against a real `coffer-sync serve` with an `auth`
// configuration and a private PostgreSQL: a login's access token is
// accepted and its user noted with the client; no token, a forged one and an
// expired one are refused (AUTH, TOKEN_EXPIRED) before anything of the
// client reaches PostgreSQL.
import CofferSyncProtocol
import CofferSyncTestSupport
import Foundation
import Testing

@Suite("sync service authentication")
struct AuthTests {
    static let secret = String(repeating: "k", count: 40)

    /// A service whose access tokens live `lifetime` seconds.
    static func service(_ postgres: String, lifetime: Int) async throws -> ServiceProcess {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-auth-\(UUID()).json")
        try Data("{\"auth\": {\"anonymous\": true, \"accessTokenLifetime\": \(lifetime)}}".utf8).write(to: config)
        return try await ServiceProcess.start(postgres: postgres, config: config.path,
                                              environment: ["COFFER_SYNC_SIGNING_SECRET": secret])
    }

    /// An anonymous login through the HTTP endpoint: (user id, access token).
    static func login(_ service: ServiceProcess) async throws -> (String, String) {
        let result = try await Command.run("/usr/bin/env", [
            "curl", "-sS", "-X", "POST", "-H", "Content-Type: application/json",
            "--data", "{\"provider\": \"anonymous\"}", "\(service.httpURL)/auth/v1/login",
        ])
        guard result.status == 0,
              let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let user = object["userId"] as? String, let token = object["accessToken"] as? String
        else { throw TestFailure("login failed: \(result.stdout) \(result.stderr)") }
        return (user, token)
    }

    func expectRefused(_ service: ServiceProcess, _ postgres: String, token: String, _ code: ErrorCode,
                       containing text: String) async throws {
        let partition = uniquePartition()
        let client = TestClient(url: service.url)
        client.send(.hello(protocolVersion: WireLimits.protocolVersion, client: client.id, partition: partition,
                           token: token, lastServerVersion: 0, schema: TestSchema.schema))
        let frame = try await client.receive()
        guard case .error(let got, let message, let fatal) = frame else {
            Issue.record("expected ERROR, got \(frame)")
            return
        }
        #expect(got == code.rawValue, "\(message)")
        #expect(message.contains(text), "\(message)")
        #expect(fatal)
        await client.close()
        let rows = try await PrivatePostgres.shared.sql(postgres, """
            SELECT (SELECT count(*) FROM coffer_sync_partitions WHERE partition = '\(partition)')
                 + (SELECT count(*) FROM coffer_sync_clients WHERE partition = '\(partition)')
            """)
        #expect(rows == "0", "a refused client reached PostgreSQL: \(rows)")
    }

    @Test("a login's access token opens a session that belongs to its user")
    func validToken() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await Self.service(postgres, lifetime: 1800)
        defer { service.stop() }
        let (user, token) = try await Self.login(service)
        let partition = uniquePartition()
        let client = TestClient(url: service.url)
        #expect(try await client.hello(partition: partition, token: token) == (0, 0))
        await client.close()
        let owner = try await PrivatePostgres.shared.sql(
            postgres, "SELECT user_id FROM coffer_sync_clients WHERE partition = '\(partition)'")
        #expect(owner == user)
    }

    @Test("no token, a forged one and an expired one are refused before anything is written")
    func refusedTokens() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await Self.service(postgres, lifetime: 1)
        defer { service.stop() }
        let (_, token) = try await Self.login(service)
        try await expectRefused(service, postgres, token: "", .auth, containing: "carries no token")
        var forged = token
        forged.removeLast(3)
        forged += token.hasSuffix("xyz") ? "abc" : "xyz"
        try await expectRefused(service, postgres, token: forged, .auth, containing: "refused")
        try await expectRefused(service, postgres, token: "not.a.jwt", .auth, containing: "refused")
        try await Task.sleep(for: .seconds(2))
        try await expectRefused(service, postgres, token: token, .tokenExpired, containing: "expired")
    }
}
