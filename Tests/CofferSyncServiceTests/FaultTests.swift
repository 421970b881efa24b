// Faults the service must survive without losing or repeating a change: the
// service killed with -9 while uploads are in flight and started again, and
// PostgreSQL restarted under connected clients.
import CofferSyncProtocol
import CofferSyncTestSupport
import Foundation
import Testing

@Suite("sync service faults")
struct FaultTests {
    static func tasks(_ versions: ClosedRange<Int>) -> [Changeset] {
        versions.map {
            Changeset(clientVersion: UInt64($0), clock: UInt64($0) << 16,
                      changes: [TestSchema.createTask(Int64($0), title: String(repeating: "w", count: 2_000))])
        }
    }

    @Test("the service killed with -9 mid-upload and restarted loses nothing and applies nothing twice")
    func killedMidUpload() async throws {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let first = try await ServiceProcess.start(postgres: postgres)
        let partition = uniquePartition()
        let client = TestClient(url: first.url)
        try await client.hello(partition: partition)
        // 20 batches of 50 sent at once; the service is killed after the first acknowledgement.
        let all = Self.tasks(1...1000)
        for start in stride(from: 0, to: 1000, by: 50) {
            client.send(.upload(Array(all[start..<start + 50])))
        }
        var acked: UInt64 = 0
        while acked == 0 {
            if case .uploadAck(let last, _) = try await client.receive() { acked = last }
        }
        first.kill()

        let second = try await ServiceProcess.start(postgres: postgres, migrate: false)
        defer { second.stop() }
        let again = TestClient(url: second.url, id: client.id)
        let (integrated, _) = try await again.hello(partition: partition)
        #expect(integrated >= acked)
        // Batches are integrated whole or not at all.
        #expect(integrated % 50 == 0)
        let rest = all.filter { $0.clientVersion > integrated }
        for start in stride(from: 0, to: rest.count, by: 50) {
            try await again.upload(Array(rest[start..<min(start + 50, rest.count)]))
        }
        // Re-sending everything changes nothing.
        try await again.upload(Array(all[0..<50]))
        let counts = try await PrivatePostgres.shared.sql(postgres,
            "SELECT count(*) || ' ' || count(DISTINCT client_version) FROM coffer_sync_history")
        #expect(counts == "1000 1000")
        #expect(try await dump(postgres, partition).count == 1000)
    }

    @Test("PostgreSQL restarted under connected clients: uploads resume and the idle client is told")
    func postgresRestart() async throws {
        let cluster = try await PrivatePostgres.startCluster()
        defer { Task { await PrivatePostgres.stop(cluster) } }
        let service = try await ServiceProcess.start(postgres: cluster.url)
        defer { service.stop() }
        let partition = uniquePartition()

        let reader = TestClient(url: service.url)
        try await reader.hello(partition: partition)
        #expect(try await reader.downloadAll().isEmpty)
        let writer = TestClient(url: service.url)
        try await writer.hello(partition: partition)

        try await PrivatePostgres.restart(cluster)

        let changeset = Changeset(clientVersion: 1, clock: 1 << 16, changes: [TestSchema.createTask(1, title: "after")])
        // The writer retries as a client does: an INTERNAL error or a closed
        // connection means reconnect and send again.
        var uploader = writer
        var uploaded = false
        for attempt in 0..<60 where !uploaded {
            if attempt > 0 {
                try await Task.sleep(for: .milliseconds(250))
                uploader = TestClient(url: service.url, id: writer.id)
                guard (try? await uploader.hello(partition: partition)) != nil else { continue }
            }
            uploader.send(.upload([changeset]))
            while let bytes = await uploader.receiveRaw(within: .seconds(30)), let frame = try? Frame(decoding: bytes) {
                if case .uploadAck(1, _) = frame { uploaded = true; break }
                if case .error(let code, _, _) = frame {
                    #expect(code == ErrorCode.internal.rawValue)
                    break
                }
            }
        }
        #expect(uploaded)

        // The reader gets it on its connection, or after reconnecting if the
        // restart ended its session.
        var reading = reader
        var got: [ServerChangeset] = []
        for attempt in 0..<60 where got.isEmpty {
            if attempt > 0 {
                try await Task.sleep(for: .milliseconds(250))
                reading = TestClient(url: service.url, id: reader.id)
                guard (try? await reading.hello(partition: partition)) != nil else { continue }
            }
            while let bytes = await reading.receiveRaw(within: .seconds(40)), let frame = try? Frame(decoding: bytes) {
                if case .download(_, let changesets) = frame, !changesets.isEmpty {
                    got = changesets
                    break
                }
                if case .error = frame { break }
            }
        }
        #expect(got.map(\.changeset) == [changeset])
    }
}
