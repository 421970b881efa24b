// Write rules enforced by a real `coffer-sync serve` on a private
// PostgreSQL: a refused change is answered with ERROR COMPENSATING_WRITE
// naming the class, primary key and rule, never reaches the state tables or
// the history, and the service's state of the object follows as a
// compensating changeset of the service's own; the rest of the batch
// integrates. Roles come from a custom JWT's roles claim (also after a
// refresh) and from the configuration. `serve` refuses bad rules naming the
// class, the rule and the part.
@testable import CofferSyncService
import CofferSyncProtocol
import CofferSyncTestSupport
import Foundation
import Testing

@Suite("sync service write rules")
struct WriteRuleTests {
    static let secret = String(repeating: "k", count: 40)
    static let jwtSecret = "the identity provider's shared secret"

    static func writeConfig(_ json: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-rules-\(UUID()).json")
        try Data(json.utf8).write(to: url)
        return url.path
    }

    static let rulesConfig = """
        {"auth": {"anonymous": true, "jwt": {"algorithm": "HS256", "secret": "\(jwtSecret)"}},
         "rules": {"rolesClaim": "roles",
                   "classes": {"Task": {"read": true, "write": "title BEGINSWITH 'ok' OR 'admin' IN %user.roles"},
                               "Person": {"read": true, "write": ["editor"]}}}}
        """

    static func service(_ postgres: String) async throws -> ServiceProcess {
        try await ServiceProcess.start(postgres: postgres, config: try writeConfig(rulesConfig),
                                       environment: ["COFFER_SYNC_SIGNING_SECRET": secret])
    }

    /// POSTs `body` to `path`; the answer's JSON object.
    static func post(_ service: ServiceProcess, _ path: String, _ body: String) async throws -> [String: Any] {
        let result = try await Command.run("/usr/bin/env", [
            "curl", "-sS", "-X", "POST", "-H", "Content-Type: application/json", "--data", body,
            "\(service.httpURL)\(path)",
        ])
        guard result.status == 0,
              let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        else { throw TestFailure("\(path) failed: \(result.stdout) \(result.stderr)") }
        return object
    }

    /// A custom JWT for `subject` with the `roles` claim, signed with HS256
    /// as an identity provider signs it.
    static func customJWT(_ subject: String, roles: [String]) async throws -> String {
        let claims = try JSONSerialization.data(withJSONObject: [
            "sub": subject, "exp": Int(Date().timeIntervalSince1970) + 600, "roles": roles,
        ] as [String: Any])
        let script = """
            import base64, hashlib, hmac, sys
            b = lambda d: base64.urlsafe_b64encode(d).rstrip(b"=").decode()
            signing = b(b'{"alg":"HS256","typ":"JWT"}') + "." + b(sys.argv[2].encode())
            print(signing + "." + b(hmac.new(sys.argv[1].encode(), signing.encode(), hashlib.sha256).digest()))
            """
        let result = try await Command.run("/usr/bin/env", ["python3", "-c", script, jwtSecret,
                                                             String(decoding: claims, as: UTF8.self)])
        guard result.status == 0 else { throw TestFailure("signing a JWT failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The roles claim of one of the service's access tokens.
    static func roles(ofAccessToken token: String) throws -> [String] {
        let payload = String(token.split(separator: ".")[1])
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let object = try JSONSerialization.jsonObject(with: Data(base64Encoded: base64)!) as! [String: Any]
        return object["roles"] as? [String] ?? []
    }

    static func count(_ postgres: String, _ sql: String) async throws -> Int {
        Int(try await PrivatePostgres.shared.sql(postgres, sql)) ?? -1
    }

    @Test("a refused change never reaches PostgreSQL; the rest of the batch does, and the object is restated")
    func refusedUpload() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await Self.service(postgres)
        defer { service.stop() }
        let partition = uniquePartition()
        let login = try await Self.post(service, "/auth/v1/login", "{\"provider\": \"anonymous\"}")
        let token = try #require(login["accessToken"] as? String)
        let client = TestClient(url: service.url)
        try await client.hello(partition: partition, token: token)
        _ = try await client.downloadAll()

        let clock: UInt64 = 1 << 40
        try await client.upload([Changeset(clientVersion: 1, clock: clock, changes: [
            TestSchema.createTask(1, title: "ok one"),
            TestSchema.createTask(2, title: "secret two"),
        ])])
        let frame = try await client.receiveSkippingDownloads()
        guard case .compensatingWrite(let message, let className, let pk) = frame else {
            Issue.record("expected COMPENSATING_WRITE, got \(frame)")
            return
        }
        #expect(className == "Task")
        #expect(pk == .int(2))
        #expect(message.contains("Task 2"), "\(message)")
        #expect(message.contains("title BEGINSWITH 'ok'"), "\(message)")

        // The allowed create is stored; nothing of the refused one is.
        let lines = try await dump(postgres, partition)
        #expect(object(lines, "Task", 1)?["title"] as? String == "ok one")
        #expect(object(lines, "Task", 2) == nil)
        #expect(try await Self.count(postgres, """
            SELECT count(*) FROM coffer_sync_properties WHERE partition = '\(partition)' AND txt = 'secret two'
            """) == 0)
        #expect(try await Self.count(postgres, """
            SELECT count(*) FROM coffer_sync_history
            WHERE partition = '\(partition)' AND position('secret two'::bytea in changeset) > 0
            """) == 0)
        // The client's changeset without the refused change, then the service's compensating delete.
        let history = try await PrivatePostgres.shared.sql(postgres, """
            SELECT string_agg(encode(origin, 'hex') || ':' || client_version || ':' || clock, ',' ORDER BY server_version)
            FROM coffer_sync_history WHERE partition = '\(partition)'
            """)
        #expect(history == "\(client.id.bytes.map { String(format: "%02x", $0) }.joined()):1:\(clock),"
                         + "\(String(repeating: "0", count: 32)):0:\(clock + 1)")

        // Another client downloads the compensating changeset, stamped above
        // the refused create; it never had task 2, so the delete of it is
        // left out (read rules, docs/SYNC.md "Security model").
        let other = TestClient(url: service.url)
        try await other.hello(partition: partition, token: token)
        let downloaded = try await other.downloadAll()
        #expect(downloaded.count == 2)
        let compensation = try #require(downloaded.last)
        #expect(compensation.origin == Compensation.origin)
        #expect(compensation.changeset.clock == clock + 1)
        #expect(compensation.changeset.changes == [])

        // Changing an allowed task so that it breaks the rule: refused, and
        // restated with its stored title.
        try await client.upload([Changeset(clientVersion: 2, clock: clock + 10, changes: [
            TestSchema.setTitle(1, "secret now"),
        ])])
        guard case .compensatingWrite(_, "Task", .int(1)) = try await client.receiveSkippingDownloads() else {
            Issue.record("the update that breaks the rule was not refused")
            return
        }
        let restated = try await other.downloadAll()
        #expect(restated.last?.changeset.changes.first == .create(class: "Task", pk: .int(1), properties: [
            .init("done", .bool(false)), .init("title", .string("ok one")),
        ]))
        #expect(object(try await dump(postgres, partition), "Task", 1)?["title"] as? String == "ok one")
        // The client's progress moved past the refused changeset all the same.
        #expect(try await Self.count(postgres, """
            SELECT last_client_version FROM coffer_sync_clients WHERE partition = '\(partition)' AND client_id = '\\x\(client.id.bytes.map { String(format: "%02x", $0) }.joined())'
            """) == 2)
        await client.close()
        await other.close()
    }

    @Test("roles come from a custom JWT's claim, survive a refresh, and open role rules")
    func jwtRoles() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await Self.service(postgres)
        defer { service.stop() }
        let jwt = try await Self.customJWT("eve", roles: ["editor", "admin"])
        let login = try await Self.post(service, "/auth/v1/login", "{\"provider\": \"jwt\", \"token\": \"\(jwt)\"}")
        let token = try #require(login["accessToken"] as? String)
        #expect(try Self.roles(ofAccessToken: token) == ["admin", "editor"])
        let refresh = try #require(login["refreshToken"] as? String)
        let refreshed = try await Self.post(service, "/auth/v1/refresh", "{\"refreshToken\": \"\(refresh)\"}")
        let again = try #require(refreshed["accessToken"] as? String)
        #expect(try Self.roles(ofAccessToken: again) == ["admin", "editor"])
        let anonymous = try await Self.post(service, "/auth/v1/login", "{\"provider\": \"anonymous\"}")
        #expect(try Self.roles(ofAccessToken: try #require(anonymous["accessToken"] as? String)) == [])

        // The admin may write any title; the editor role opens Person.
        let partition = uniquePartition()
        let client = TestClient(url: service.url)
        try await client.hello(partition: partition, token: again)
        _ = try await client.downloadAll()
        try await client.upload([Changeset(clientVersion: 1, clock: 1 << 40, changes: [
            TestSchema.createTask(1, title: "anything"),
            .create(class: "Person", pk: .string("ada"), properties: [.init("age", .int(36))]),
        ])])
        let lines = try await dump(postgres, partition)
        #expect(object(lines, "Task", 1)?["title"] as? String == "anything")
        #expect(lines.contains { $0["class"] as? String == "Person" })
        while let bytes = await client.receiveRaw(within: .milliseconds(300)) {
            if case .compensatingWrite(let message, _, _) = try Frame(decoding: bytes) {
                Issue.record("an allowed write was refused: \(message)")
            }
        }
        await client.close()
    }

    @Test("roles given in the configuration count for their user")
    func configuredRoles() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let plain = try await ServiceProcess.start(postgres: postgres, config: try Self.writeConfig("""
            {"auth": {"anonymous": true},
             "rules": {"classes": {"Task": {"read": true, "write": true},
                                   "Person": {"read": true, "write": ["editor"]}}}}
            """), environment: ["COFFER_SYNC_SIGNING_SECRET": Self.secret])
        let login = try await Self.post(plain, "/auth/v1/login", "{\"provider\": \"anonymous\"}")
        plain.stop()
        let user = try #require(login["userId"] as? String)
        let token = try #require(login["accessToken"] as? String)
        let service = try await ServiceProcess.start(postgres: postgres, config: try Self.writeConfig("""
            {"auth": {"anonymous": true},
             "rules": {"roles": {"\(user)": ["editor"]},
                       "classes": {"Person": {"read": true, "write": ["editor"]}}}}
            """), environment: ["COFFER_SYNC_SIGNING_SECRET": Self.secret])
        defer { service.stop() }
        let partition = uniquePartition()
        let client = TestClient(url: service.url)
        try await client.hello(partition: partition, token: token)
        _ = try await client.downloadAll()
        try await client.upload([Changeset(clientVersion: 1, clock: 1 << 40, changes: [
            .create(class: "Person", pk: .string("ada"), properties: [.init("age", .int(36))]),
            TestSchema.createTask(1, title: "no rule: denied"),
        ])])
        guard case .compensatingWrite(_, "Task", .int(1)) = try await client.receiveSkippingDownloads() else {
            Issue.record("a class without rules was writable")
            return
        }
        let lines = try await dump(postgres, partition)
        #expect(lines.contains { $0["class"] as? String == "Person" })
        #expect(object(lines, "Task", 1) == nil)
        await client.close()
    }

    @Test("serve refuses a bad rule, naming the class, the rule and the part")
    func badRules() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let cases: [(String, [String])] = [
            (#"{"Task": {"read": true, "write": "title == %user.name"}}"#,
             ["rules.classes.Task.write", "title == %user.name", "%user.name"]),
            (#"{"Task": {"read": "title LIKE 'a*'", "write": true}}"#, ["rules.classes.Task.read", "LIKE"]),
            (#"{"Task": {"write": true}}"#, ["rules.classes.Task", "read"]),
        ]
        for (classes, expected) in cases {
            let config = try Self.writeConfig("""
                {"auth": {"anonymous": true}, "rules": {"classes": \(classes)}}
                """)
            let result = try await ServiceProcess.command(
                ["serve", "--postgres", postgres, "--listen", "127.0.0.1:0", "--config", config],
                environment: ["COFFER_SYNC_SIGNING_SECRET": Self.secret])
            #expect(result.status != 0)
            for text in expected { #expect(result.stderr.contains(text), "\(result.stderr)") }
        }
        let withoutAuth = try Self.writeConfig(#"{"rules": {"classes": {}}}"#)
        let result = try await ServiceProcess.command(
            ["serve", "--postgres", postgres, "--listen", "127.0.0.1:0", "--config", withoutAuth])
        #expect(result.status != 0)
        #expect(result.stderr.contains("'rules' needs an 'auth' section"), "\(result.stderr)")
    }
}
