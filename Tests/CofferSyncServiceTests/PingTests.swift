// The service's pings (hummingbird-websocket's auto-ping, its period from
// COFFER_SYNC_PING_PERIOD): an upload whose integration lasts several
// periods keeps its connection, because the session reads the client's
// pongs while it integrates; a peer that answers no ping is closed. The
// clients that must answer in time are isolated connections: with every
// other suite running beside them, the shared pool and event loops of this
// process can stall for longer than a period.
import CofferSyncProtocol
@testable import CofferSyncService
import CofferSyncTestSupport
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import PostgresNIO
import Testing

@Suite("sync service pings")
struct PingTests {
    static let period = ["COFFER_SYNC_PING_PERIOD": "4"]

    @Test("an upload integrated for three ping periods keeps its connection")
    func slowIntegrationKeepsConnection() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await ServiceProcess.start(postgres: postgres, environment: Self.period)
        defer { service.stop() }
        let partition = uniquePartition()
        let a = TestClient(url: service.url, isolated: true)
        try await a.hello(partition: partition)
        #expect(try await a.downloadAll().isEmpty)

        // The history table locked: the upload's integration waits for the lock.
        let logger = Logger(label: "ping-tests")
        try await PostgresSession.with(try PostgresURL(postgres), logger: logger) { client in
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("LOCK TABLE coffer_sync_history IN EXCLUSIVE MODE", logger: logger)
                a.send(.upload([Changeset(clientVersion: 1, clock: 1 << 16, changes: [TestSchema.createTask(1, title: "slow")])]))
                try await Task.sleep(for: .seconds(12))
                #expect(await a.receiveRaw(within: .milliseconds(10)) == nil, "acknowledged while the lock was held")
            }
        }
        let frame = try await a.receive()
        guard case .uploadAck(let last, _) = frame else {
            Issue.record("expected UPLOAD_ACK, got \(frame)")
            return
        }
        #expect(last == 1)
        // The connection goes on.
        let (next, _) = try await a.upload([Changeset(clientVersion: 2, clock: 2 << 16, changes: [
            TestSchema.setTitle(1, "fast")])])
        #expect(next == 2)
    }

    @Test("an idle connection that answers pings stays open; one that answers none is closed")
    func silentPeerClosed() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let service = try await ServiceProcess.start(postgres: postgres, environment: Self.period)
        defer { service.stop() }

        // Answers pings (its WebSocket reads all the time): usable after three periods.
        let live = TestClient(url: service.url, isolated: true)
        try await live.hello(partition: uniquePartition())
        #expect(try await live.downloadAll().isEmpty)
        try await Task.sleep(for: .seconds(12))
        let (last, _) = try await live.upload([Changeset(clientVersion: 1, clock: 1 << 16, changes: [
            TestSchema.createTask(1, title: "idle")])])
        #expect(last == 1)

        // Sends HELLO, then reads nothing for three periods, so it answers no
        // ping: the service closes with GOING_AWAY (1001).
        let logger = {
            var logger = Logger(label: "ping-tests")
            logger.logLevel = .critical
            return logger
        }()
        let hello = Frame.hello(protocolVersion: WireLimits.protocolVersion, client: .random(),
                                partition: uniquePartition(), token: "", lastServerVersion: 0,
                                schema: TestSchema.schema).encoded
        let url = service.url
        let close = try await withThrowingTaskGroup(of: WebSocketCloseFrame?.self) { group in
            group.addTask {
                try await WebSocketClient.connect(
                    url: url, configuration: .init(maxFrameSize: WireLimits.maxFrameBytes), logger: logger
                ) { inbound, outbound, _ in
                    try await outbound.write(.binary(ByteBuffer(bytes: hello)))
                    try await Task.sleep(for: .seconds(12))
                    for try await _ in inbound.messages(maxSize: WireLimits.maxFrameBytes) {}
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                throw TestFailure("the silent connection was still open after 30 s")
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
        #expect(close?.closeCode == .goingAway, "\(String(describing: close))")
    }

    @Test("a ping period that is not a number of seconds, or too short, is refused naming it")
    func badPingPeriod() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        for (value, message) in [("soon", "COFFER_SYNC_PING_PERIOD must be a number of seconds, not 'soon'"),
                                 ("0", "pingPeriod must be at least 0.1 seconds, not 0.0")] {
            let result = try await ServiceProcess.command(["serve", "--postgres", postgres, "--listen", "127.0.0.1:0"],
                                                          environment: ["COFFER_SYNC_PING_PERIOD": value])
            #expect(result.status != 0)
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }
}
