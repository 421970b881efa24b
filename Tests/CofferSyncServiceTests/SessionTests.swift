// Protocol sessions against a real `coffer-sync serve` on a free port and a
// private PostgreSQL: upload and acknowledgement, idempotent re-upload,
// download to another client, fan-out between two instances, errors for
// out-of-order and malformed frames, a client whose HELLO is behind what it
// acknowledged (CLIENT_RESET), and a client that never acknowledges.
import CofferSyncProtocol
import CofferSyncTestSupport
import Foundation
import Testing

@Suite("sync service sessions")
struct SessionTests {
    @Test("an upload is acknowledged and downloaded by another client, never by its own")
    func uploadThenDownload() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await ServiceProcess.start(postgres: postgres)
        defer { service.stop() }
        let partition = uniquePartition()

        let a = TestClient(url: service.url)
        #expect(try await a.hello(partition: partition) == (0, 0))
        #expect(try await a.downloadAll().isEmpty)
        let changeset = Changeset(clientVersion: 5, clock: 100 << 16, changes: [TestSchema.createTask(1, title: "write")])
        let (last, serverVersion) = try await a.upload([changeset])
        #expect(last == 5)
        #expect(serverVersion >= 1)

        let b = TestClient(url: service.url)
        #expect(try await b.hello(partition: partition) == (0, serverVersion))
        let received = try await b.downloadAll()
        #expect(received == [ServerChangeset(serverVersion: serverVersion, origin: a.id, changeset: changeset)])

        // A's own changeset is not sent back to it.
        let again = TestClient(url: service.url, id: a.id)
        #expect(try await again.hello(partition: partition) == (5, serverVersion))
        #expect(try await again.downloadAll().isEmpty)

        let state = try await dump(postgres, partition)
        #expect(object(state, "Task", 1)?["title"] as? String == "write")
    }

    @Test("a repeated upload is acknowledged and ignored")
    func idempotentUpload() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await ServiceProcess.start(postgres: postgres)
        defer { service.stop() }
        let partition = uniquePartition()
        let client = TestClient(url: service.url)
        try await client.hello(partition: partition)
        let batch = (1...3).map {
            Changeset(clientVersion: UInt64($0), clock: UInt64($0) << 16, changes: [TestSchema.createTask(Int64($0), title: "t\($0)")])
        }
        let first = try await client.upload(batch)
        #expect(first.0 == 3)
        // The same batch again, and a batch overlapping it by one.
        let second = try await client.upload(batch)
        #expect(second == first)
        let overlap = [batch[2], Changeset(clientVersion: 4, clock: 4 << 16, changes: [TestSchema.setTitle(1, "new")])]
        #expect(try await client.upload(overlap).0 == 4)

        let rows = try await PrivatePostgres.shared.sql(postgres,
            "SELECT string_agg(client_version::text, ',' ORDER BY server_version) FROM coffer_sync_history")
        #expect(rows == "1,2,3,4")
        // After a reconnect the service says what it has.
        let reconnected = TestClient(url: service.url, id: client.id)
        #expect(try await reconnected.hello(partition: partition).0 == 4)
    }

    @Test("two instances on one PostgreSQL: a write on one reaches a client of the other")
    func fanOutBetweenInstances() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let one = try await ServiceProcess.start(postgres: postgres)
        defer { one.stop() }
        let two = try await ServiceProcess.start(postgres: postgres, migrate: false)
        defer { two.stop() }
        let partition = uniquePartition()

        let writer = TestClient(url: one.url)
        let reader = TestClient(url: two.url)
        try await writer.hello(partition: partition)
        try await reader.hello(partition: partition)
        #expect(try await reader.downloadAll().isEmpty)

        for version in 1...3 {
            let changeset = Changeset(clientVersion: UInt64(version), clock: UInt64(version) << 16,
                                      changes: [TestSchema.createTask(Int64(version), title: "v\(version)")])
            let (_, serverVersion) = try await writer.upload([changeset])
            // Pushed to the idle reader through LISTEN/NOTIFY, without asking.
            let frame = try await reader.receive()
            guard case .download(_, let changesets) = frame else {
                Issue.record("expected DOWNLOAD, got \(frame)")
                return
            }
            #expect(changesets == [ServerChangeset(serverVersion: serverVersion, origin: writer.id, changeset: changeset)])
            reader.send(.downloadAck(lastServerVersion: serverVersion))
            #expect(try await reader.receive() == .download(latestServerVersion: serverVersion, changesets: []))
        }
    }

    @Test("a HELLO with less than the client acknowledged (a file restored from a backup) gets CLIENT_RESET")
    func clientReset() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await ServiceProcess.start(postgres: postgres)
        defer { service.stop() }
        let partition = uniquePartition()
        let a = TestClient(url: service.url)
        try await a.hello(partition: partition)
        let (_, serverVersion) = try await a.upload([Changeset(clientVersion: 1, clock: 1 << 16,
                                                               changes: [TestSchema.createTask(1, title: "t")])])
        let b = TestClient(url: service.url)
        try await b.hello(partition: partition)
        #expect(try await b.downloadAll().count == 1)
        // The acknowledgement is recorded in its own transaction: wait for it.
        for _ in 0..<100 {
            let acked = try await PrivatePostgres.shared.sql(postgres,
                "SELECT max(last_acked_server_version) FROM coffer_sync_clients WHERE partition = '\(partition)'")
            if acked == "\(serverVersion)" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let restored = TestClient(url: service.url, id: b.id)
        restored.send(.hello(protocolVersion: WireLimits.protocolVersion, client: b.id, partition: partition, token: "",
                             lastServerVersion: 0, schema: TestSchema.schema))
        let frame = try await restored.receive()
        guard case .error(let code, let message, let fatal) = frame else {
            Issue.record("expected ERROR, got \(frame)")
            return
        }
        #expect(code == ErrorCode.clientReset.rawValue, "\(message)")
        #expect(message.contains("acknowledged \(serverVersion)"), "\(message)")
        #expect(fatal)
        // With what it acknowledged, the same client is welcome.
        let caughtUp = TestClient(url: service.url, id: b.id)
        #expect(try await caughtUp.hello(partition: partition, lastServerVersion: serverVersion).1 == serverVersion)
    }

    @Test("frames out of order, undecodable frames and unsupported versions end the session with their codes")
    func protocolErrors() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await ServiceProcess.start(postgres: postgres)
        defer { service.stop() }
        let partition = uniquePartition()

        func expectError(_ client: TestClient, _ code: ErrorCode, containing text: String) async throws {
            let frame = try await client.receiveSkippingDownloads()
            guard case .error(let got, let message, let fatal) = frame else {
                Issue.record("expected ERROR, got \(frame)")
                return
            }
            #expect(got == code.rawValue, "\(message)")
            #expect(message.contains(text), "\(message)")
            #expect(fatal)
            // The service closes the connection after a fatal error.
            #expect(await client.receiveRaw(within: .seconds(20)) == nil)
        }

        let early = TestClient(url: service.url)
        early.send(.upload([]))
        try await expectError(early, .protocol, containing: "first frame must be HELLO")

        let garbage = TestClient(url: service.url)
        garbage.sendRaw([1, 1, 2, 3])
        try await expectError(garbage, .protocol, containing: "truncated client id")

        let future = TestClient(url: service.url)
        future.send(.hello(protocolVersion: 99, client: .random(), partition: partition, token: "",
                           lastServerVersion: 0, schema: TestSchema.schema))
        try await expectError(future, .version, containing: "protocol version 99")

        let reversed = TestClient(url: service.url)
        try await reversed.hello(partition: partition)
        reversed.send(.upload([Changeset(clientVersion: 2, clock: 1, changes: []),
                               Changeset(clientVersion: 1, clock: 1, changes: [])]))
        try await expectError(reversed, .protocol, containing: "increasing client version")

        let acker = TestClient(url: service.url)
        try await acker.hello(partition: partition)
        acker.send(.downloadAck(lastServerVersion: 1000))
        try await expectError(acker, .protocol, containing: "which was not sent")
    }

    @Test("breaking schema changes and changesets that do not fit the schema are refused")
    func schemaErrors() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await ServiceProcess.start(postgres: postgres)
        defer { service.stop() }
        let partition = uniquePartition()
        let first = TestClient(url: service.url)
        try await first.hello(partition: partition)

        var changed = TestSchema.schema
        changed.classes[0].properties[1] = SchemaProperty(name: "title", type: 2)
        let breaking = TestClient(url: service.url)
        breaking.send(.hello(protocolVersion: 1, client: .random(), partition: partition, token: "",
                             lastServerVersion: 0, schema: changed))
        let frame = try await breaking.receive()
        guard case .error(let code, let message, true) = frame else {
            Issue.record("expected a fatal ERROR, got \(frame)")
            return
        }
        #expect(code == ErrorCode.schemaMismatch.rawValue)
        #expect(message.contains("Task.title"))

        // An additive change is accepted, and its class can be used.
        var additive = TestSchema.schema
        additive.classes.append(SchemaClass(name: "Tag", primaryKey: "name",
                                            properties: [SchemaProperty(name: "name", type: 5)]))
        let adder = TestClient(url: service.url)
        try await adder.hello(partition: partition, schema: additive)
        #expect(try await adder.upload([Changeset(clientVersion: 1, clock: 1 << 16, changes: [
            .create(class: "Tag", pk: .string("red"), properties: [])])]).0 == 1)

        let cases: [(Change, String)] = [
            (.create(class: "Nope", pk: .int(1), properties: []), "unknown class 'Nope'"),
            (.create(class: "Task", pk: .string("1"), properties: []), "primary key of 'Task'"),
            (.update(class: "Task", pk: .int(1), properties: [.init("title", .int(3))]), "'Task.title' takes a string, not a int"),
            (.update(class: "Task", pk: .int(1), properties: [.init("missing", .int(3))]), "unknown property 'Task.missing'"),
            (.setAdd(class: "Task", pk: .int(1), property: "steps", value: .string("x")), "'Task.steps' is not a set"),
            (.update(class: "Task", pk: .int(1), properties: [.init("owner", .link(targetClass: "Task", primaryKey: .int(1)))]),
             "takes a link to 'Person'"),
            (.listErase(class: "Task", pk: .int(1), property: "steps",
                        id: ElementID(clock: 1, client: clientID(1), seq: 0)), "does not have"),
        ]
        for (change, text) in cases {
            let client = TestClient(url: service.url)
            try await client.hello(partition: partition)
            client.send(.upload([Changeset(clientVersion: 1, clock: 2 << 16, changes: [change])]))
            let frame = try await client.receiveSkippingDownloads()
            guard case .error(let code, let message, true) = frame else {
                Issue.record("expected a fatal ERROR for \(change), got \(frame)")
                continue
            }
            #expect(code == ErrorCode.badChangeset.rawValue, "\(message)")
            #expect(message.contains(text), "\(message)")
        }
        // Nothing of the refused batches was integrated.
        #expect(try await PrivatePostgres.shared.sql(postgres, "SELECT count(*) FROM coffer_sync_history") == "1")
    }

    @Test("a client that never acknowledges stops receiving at 4 MiB unacknowledged, then catches up")
    func downloadWindow() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await ServiceProcess.start(postgres: postgres)
        defer { service.stop() }
        let partition = uniquePartition()

        // 48 changesets of about 200 KB: 9.6 MB in all.
        let writer = TestClient(url: service.url)
        try await writer.hello(partition: partition)
        let big = String(repeating: "x", count: 200_000)
        for start in stride(from: 1, through: 48, by: 4) {
            let batch = (start..<start + 4).map {
                Changeset(clientVersion: UInt64($0), clock: UInt64($0) << 16,
                          changes: [TestSchema.createTask(Int64($0), title: big)])
            }
            try await writer.upload(batch)
        }

        let slow = TestClient(url: service.url)
        try await slow.hello(partition: partition)
        var unacknowledged = 0
        var lastVersion: UInt64 = 0
        var received = 0
        // Read without acknowledging: the window fills (each frame must come),
        // then the service stops sending (nothing more within a few seconds).
        while let bytes = await slow.receiveRaw(
            within: unacknowledged <= WireLimits.windowBytes - WireLimits.batchBytes ? .seconds(30) : .seconds(3)) {
            guard case .download(_, let changesets) = try Frame(decoding: bytes) else {
                Issue.record("expected DOWNLOAD")
                return
            }
            #expect(bytes.count <= WireLimits.batchBytes + 64)
            unacknowledged += bytes.count
            received += changesets.count
            lastVersion = changesets.last?.serverVersion ?? lastVersion
        }
        #expect(unacknowledged <= WireLimits.windowBytes)
        #expect(unacknowledged > WireLimits.windowBytes - WireLimits.batchBytes)
        #expect(received < 48)

        // Acknowledging opens the window; the rest follows.
        slow.send(.downloadAck(lastServerVersion: lastVersion))
        received += try await slow.downloadAll().count
        #expect(received == 48)
    }

    @Test("the service refuses to start without a PostgreSQL URL or on an unmigrated database")
    func startupErrors() async throws {
        var env = ProcessInfo.processInfo.environment
        env["COFFER_SYNC_POSTGRES"] = nil
        env["COFFER_SYNC_CONFIG"] = nil
        let none = try await ServiceProcess.command(["serve"], environment: env)
        #expect(none.status != 0)
        #expect(none.stderr.contains("no PostgreSQL URL"))

        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let unmigrated = try await ServiceProcess.command(["serve", "--postgres", postgres, "--listen", "127.0.0.1:0"])
        #expect(unmigrated.status != 0)
        #expect(unmigrated.stderr.contains("version 0"))
        #expect(unmigrated.stderr.contains("run coffer-sync migrate"))

        // From the environment and a configuration file.
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-\(UUID()).json")
        try Data("{\"postgres\": \"\(postgres)\", \"bogus\": 1}".utf8).write(to: config)
        defer { try? FileManager.default.removeItem(at: config) }
        env["COFFER_SYNC_CONFIG"] = config.path
        let unknownKey = try await ServiceProcess.command(["migrate"], environment: env)
        #expect(unknownKey.stderr.contains("unknown setting 'bogus'"))
        try Data("{\"postgres\": \"\(postgres)\"}".utf8).write(to: config)
        let migrated = try await ServiceProcess.command(["migrate"], environment: env)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("from version 0 to 6"))
        let again = try await ServiceProcess.command(["migrate"], environment: env)
        #expect(again.stdout.contains("version 6; nothing to do"))

        // A version 1 database (before users and authentication) upgrades in
        // place and keeps its clients.
        _ = try await PrivatePostgres.shared.sql(postgres, """
            INSERT INTO coffer_sync_partitions (partition, schema) VALUES ('old', '\\x') ;
            INSERT INTO coffer_sync_clients (partition, client_id) VALUES ('old', '\\x00') ;
            DROP TABLE coffer_sync_refresh_tokens, coffer_sync_identities, coffer_sync_users ;
            DROP TABLE coffer_sync_client_objects ;
            ALTER TABLE coffer_sync_clients DROP COLUMN user_id, DROP COLUMN read_as ;
            ALTER TABLE coffer_sync_properties DROP COLUMN num, DROP COLUMN txt ;
            DROP INDEX coffer_sync_properties_by_value ;
            INSERT INTO coffer_sync_properties (partition, class, pk, property, value, stamp) VALUES
                ('old', 'Task', '\\x0202', 'rank', '\\x0214', '\\x00'),
                ('old', 'Task', '\\x0202', 'title', '\\x05026162', '\\x00'),
                ('old', 'Task', '\\x0202', 'done', '\\x0101', '\\x00') ;
            UPDATE coffer_sync_meta SET version = 1
            """)
        let upgraded = try await ServiceProcess.command(["migrate"], environment: env)
        #expect(upgraded.stdout.contains("from version 1 to 6"), "\(upgraded.stderr)")
        // Version 3 fills the typed columns of the rows stored before it:
        // the int 10 (zigzag 20) gets a number, the string "ab" a text, a bool neither.
        let typed = try await PrivatePostgres.shared.sql(postgres, """
            SELECT property || '=' || coalesce(num::text, '-') || '/' || coalesce(txt, '-')
            FROM coffer_sync_properties WHERE partition = 'old' ORDER BY property
            """)
        #expect(typed == "done=-/-\nrank=10/-\ntitle=-/ab", "\(typed)")
        let clients = try await PrivatePostgres.shared.sql(postgres, "SELECT count(*) FROM coffer_sync_clients WHERE user_id IS NULL")
        #expect(clients.contains("1"), "\(clients)")
        let users = try await PrivatePostgres.shared.sql(postgres, "SELECT count(*) FROM coffer_sync_users")
        #expect(users.contains("0"), "\(users)")

        // A newer schema than this build knows is refused, naming both versions.
        _ = try await PrivatePostgres.shared.sql(postgres, "UPDATE coffer_sync_meta SET version = 7")
        for command in [["migrate"], ["serve", "--listen", "127.0.0.1:0"], ["dump", "--partition", "p"]] {
            let newer = try await ServiceProcess.command(command, environment: env)
            #expect(newer.status != 0)
            #expect(newer.stderr.contains("version 7, newer than version 6"), "\(command): \(newer.stderr)")
        }
    }
}
