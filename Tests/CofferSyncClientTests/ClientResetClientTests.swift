// Bundled synced files and client reset from Swift, against a real
// `coffer-sync serve` (maximum offline time 2 s) on a private PostgreSQL: a
// database opened from a bundle through `seedFilePath` gets the changes made
// since the copy; one opened from a bundle older than the maximum offline
// time resets as `clientResetMode` says, and its callbacks are told.
import Coffer
import CofferSyncTestSupport
import Foundation
import Testing

/// What the reset callbacks were told, in order. The callbacks run on the
/// sync thread and the test reads from its own: the lock makes that safe,
/// hence `@unchecked Sendable`.
final class ResetEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []

    func append(_ event: String) { lock.withLock { events.append(event) } }
    var all: [String] { lock.withLock { events } }
}

@Suite("Swift bundles and client reset")
struct ClientResetClientTests {
    /// A service whose maximum offline time is 2 s, and a bundle of notes 1
    /// and 2 written by a caught-up replica, after which the service got note 3
    /// (older than the limit once `sleep` passed) and note 4.
    static func bundleAndService(sleep: Bool) async throws -> (ServiceProcess, SyncConfiguration, URL) {
        let service = try await ServiceProcess.start(postgres: try await PrivatePostgres.shared.freshDatabase(),
                                                     environment: ["COFFER_SYNC_MAX_OFFLINE_TIME": "2"])
        let sync = SyncConfiguration(url: URL(string: service.url)!, partitionValue: freshPartition())
        let a = try await Replica(sync: sync)
        try await a.add(["1": "note 1", "2": "note 2"])
        let session = try await syncSession(of: a)
        try await session.wait(for: .upload, timeout: patience)
        // A new session's caught-up download moves its progress past its own uploads.
        session.pause()
        try await eventually { session.state == .paused }
        session.resume()
        try await session.wait(for: .download, timeout: patience)
        let bundle = Replica.newFileURL().deletingLastPathComponent().appendingPathComponent("bundle.coffer")
        try await a.writeCopy(to: bundle)
        try await a.add("3", "note 3")
        try await session.wait(for: .upload, timeout: patience)
        if sleep { try await Task.sleep(for: .milliseconds(2500)) }
        try await a.add("4", "note 4")
        try await session.wait(for: .upload, timeout: patience)
        return (service, sync, bundle)
    }

    static func configuration(_ sync: SyncConfiguration, seed: URL) -> Database.Configuration {
        var config = Database.Configuration(fileURL: Replica.newFileURL(), objectTypes: [SyncNote.self], sync: sync)
        config.seedFilePath = seed
        return config
    }

    static let all = ["1": "note 1", "2": "note 2", "3": "note 3", "4": "note 4"]

    @Test("a database opened from a bundle gets what changed since the copy, without a reset")
    func bundleDelta() async throws {
        let (service, sync, bundle) = try await Self.bundleAndService(sleep: false)
        defer { service.stop() }
        let events = ResetEvents()
        var resetting = sync
        resetting.clientResetMode = .discardUnsyncedChanges(beforeReset: { events.append("before") },
                                                            afterReset: { events.append("after") })
        let b = try await Replica(configuration: Self.configuration(resetting, seed: bundle))
        #expect(try await notes(of: b, once: Self.all) == Self.all)
        #expect(events.all.isEmpty)
    }

    @Test("a bundle older than the maximum offline time resets: discardUnsyncedChanges tells before and after")
    func discardReset() async throws {
        let (service, sync, bundle) = try await Self.bundleAndService(sleep: true)
        defer { service.stop() }
        let events = ResetEvents()
        var resetting = sync
        resetting.clientResetMode = .discardUnsyncedChanges(beforeReset: { events.append("before") },
                                                            afterReset: { events.append("after") })
        let b = try await Replica(configuration: Self.configuration(resetting, seed: bundle))
        try await eventually { events.all == ["before", "after"] }
        #expect(try await notes(of: b, once: Self.all) == Self.all)
    }

    @Test("a manual client reset stops the session and changes nothing")
    func manualReset() async throws {
        let (service, sync, bundle) = try await Self.bundleAndService(sleep: true)
        defer { service.stop() }
        var manual = sync
        manual.clientResetMode = .manual
        let b = try await Replica(configuration: Self.configuration(manual, seed: bundle))
        let session = try await syncSession(of: b)
        try await eventually { session.state == .inactive }
        #expect(session.lastError?.serviceCode == .clientReset)
        #expect(try await b.notes() == ["1": "note 1", "2": "note 2"])
    }
}
