// Swift databases syncing through a real `coffer-sync serve` on a private
// PostgreSQL: two replicas of a partition converge, writes made while a
// session is paused are uploaded after it resumes, a wait against a stopped
// service times out keeping the local write, and a bad URL is refused.
import Coffer
import CofferSyncTestSupport
import Foundation
import Testing

@Suite("Swift sync client")
struct SyncClientTests {
    static func service() async throws -> ServiceProcess {
        try await ServiceProcess.start(postgres: try await PrivatePostgres.shared.freshDatabase())
    }

    static func sync(_ service: ServiceProcess, _ partition: String) -> SyncConfiguration {
        SyncConfiguration(url: URL(string: service.url)!, partitionValue: partition)
    }

    @Test("a write on one replica reaches another replica of the partition")
    func converge() async throws {
        let service = try await Self.service()
        defer { service.stop() }
        let partition = freshPartition()
        let first = try await Replica(sync: Self.sync(service, partition))
        let second = try await Replica(sync: Self.sync(service, partition))
        try await first.add("a", "from the first")
        try await syncSession(of: first).wait(for: .upload, timeout: patience)
        #expect(try await notes(of: second, once: ["a": "from the first"]) == ["a": "from the first"])

        try await second.add("b", "from the second")
        try await syncSession(of: second).wait(for: .upload, timeout: patience)
        let both = ["a": "from the first", "b": "from the second"]
        #expect(try await notes(of: first, once: both) == both)
        #expect(try await syncSession(of: first).state == .active)
        #expect(try await syncSession(of: first).connectionState == .connected)
        #expect(try await syncSession(of: first).lastError == nil)
    }

    @Test("writes made while paused are uploaded after resume")
    func pauseResume() async throws {
        let service = try await Self.service()
        defer { service.stop() }
        let partition = freshPartition()
        let writer = try await Replica(sync: Self.sync(service, partition))
        let reader = try await Replica(sync: Self.sync(service, partition))
        let session = try await syncSession(of: writer)
        try await session.wait(for: .download, timeout: patience)

        session.pause()
        // The session thread closes the connection after the frame it is handling.
        try await eventually { session.state == .paused }
        #expect(session.connectionState == .disconnected)
        try await writer.add("p", "written while paused")
        await #expect(throws: CofferError.self) {
            try await session.wait(for: .upload, timeout: .milliseconds(300))
        }
        try await reader.session!.wait(for: .download, timeout: patience)
        #expect(try await reader.notes().isEmpty, "a paused session uploaded")

        session.resume()
        try await session.wait(for: .upload, timeout: patience)
        #expect(try await notes(of: reader, once: ["p": "written while paused"]) == ["p": "written while paused"])
        #expect(session.state == .active)
    }

    @Test("a wait against a stopped service throws .timeout and keeps the local write")
    func timeoutKeepsWrite() async throws {
        let service = try await Self.service()
        let replica = try await Replica(sync: Self.sync(service, freshPartition()))
        let session = try await syncSession(of: replica)
        try await session.wait(for: .download, timeout: patience)
        service.kill()
        try await replica.add("k", "kept")
        do {
            try await session.wait(for: .upload, timeout: .milliseconds(500))
            Issue.record("the wait returned with the service stopped")
        } catch let error as CofferError {
            #expect(error.code == .timeout, "\(error)")
            #expect(error.message.contains("upload"), "\(error)")
        }
        #expect(try await replica.notes() == ["k": "kept"])
        #expect(session.state == .active)
        #expect(session.connectionState != .connected)
    }

    @Test("cancelling the task stops a wait that has no timeout")
    func cancelledWait() async throws {
        let service = try await Self.service()
        let replica = try await Replica(sync: Self.sync(service, freshPartition()))
        let session = try await syncSession(of: replica)
        try await session.wait(for: .download, timeout: patience)
        service.kill()
        try await replica.add("c", "never uploaded")
        let waiting = Task { try await session.wait(for: .upload) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test("an http:// URL is refused naming it")
    func badURL() async throws {
        let sync = SyncConfiguration(url: URL(string: "http://127.0.0.1:9/sync/v1")!, partitionValue: "p")
        do {
            _ = try await Replica(sync: sync)
            Issue.record("a database opened with an http:// sync URL")
        } catch let error as CofferError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("http://127.0.0.1:9/sync/v1"), "\(error)")
        }
    }

    @Test("a wss:// URL is refused: the built-in transport has no TLS")
    func wssURL() async throws {
        let sync = SyncConfiguration(url: URL(string: "wss://sync.example.com/sync/v1")!, partitionValue: "p")
        do {
            _ = try await Replica(sync: sync)
            Issue.record("a database opened with a wss:// sync URL")
        } catch let error as CofferError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("wss://sync.example.com/sync/v1") && error.message.contains("TLS"), "\(error)")
        }
    }

    @Test("an empty partition is refused")
    func emptyPartition() async throws {
        let sync = SyncConfiguration(url: URL(string: "ws://127.0.0.1:9/sync/v1")!, partitionValue: "")
        await #expect(throws: CofferError(.invalidArgument, "sync partitionValue is empty")) {
            _ = try await Replica(sync: sync)
        }
    }

    @Test("a database without sync has no session")
    func noSession() async throws {
        let replica = try await Replica(sync: nil)
        #expect(await replica.session == nil)
    }
}
