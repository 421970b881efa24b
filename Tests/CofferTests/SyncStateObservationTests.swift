// Observing a sync session's state in the core build, with no service: a
// Swift transport (SyncTransport) that refuses every connection the way a
// TLS client refuses an untrusted certificate. The session's error names
// the transport's reason; observers see connecting and disconnected, a
// pause at once, and the end when the database is closed.
import Coffer
import Foundation
import Testing

/// A synced class: a primary key.
final class SyncStateNote: Object {
    @Persisted(primaryKey: true) var id = ""
}

/// A transport whose every connection fails as a TLS handshake with an
/// untrusted certificate does.
final class RefusingTransport: SyncTransport, @unchecked Sendable {
    struct Refusal: Error, CustomStringConvertible {
        let url: URL
        var description: String { "TLS handshake with \(url.host ?? "?") failed: certificate verify failed (self-signed test CA)" }
    }

    private let lock = NSLock()
    private var urls: [URL] = []

    var attempts: [URL] {
        lock.withLock { urls }
    }

    func connect(to url: URL) throws -> any SyncConnection {
        lock.withLock { urls.append(url) }
        throw Refusal(url: url)
    }
}

/// What an observer saw, in order.
final class Seen<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Value] = []
    private var threads: [Bool] = [] // on the main test's thread

    func add(_ value: Value) {
        lock.withLock { items.append(value) }
    }

    var values: [Value] {
        lock.withLock { items }
    }
}

@Suite("Sync state observation")
struct SyncStateObservationTests {
    let directory = TemporaryDirectory()

    func open(_ url: String, transport: (any SyncTransport)?) throws -> Database {
        let sync = SyncConfiguration(url: URL(string: url)!, partitionValue: "p", transport: transport)
        return try Database(configuration: Database.Configuration(fileURL: directory.file("\(UUID()).coffer"),
                                                                  objectTypes: [SyncStateNote.self], sync: sync))
    }

    @Test("a wss:// URL without a transport is refused, naming the URL and what to use")
    func wssWithoutTransport() throws {
        do {
            _ = try open("wss://sync.example.com/sync/v1", transport: nil)
            Issue.record("a wss:// database opened with the built-in transport")
        } catch let error as CofferError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("wss://sync.example.com/sync/v1"), "\(error)")
            #expect(error.message.contains("no TLS") && error.message.contains("NIOWebSocketTransport"), "\(error)")
        }
    }

    @Test("a transport's failure is the session's error, and observers see every state")
    func observeStates() async throws {
        let transport = RefusingTransport()
        var db: Database? = try open("wss://sync.example.com/sync/v1", transport: transport)
        var session: SyncSession? = db!.syncSession!
        let seen = Seen<SyncSession.ConnectionState>()
        let initial = Seen<SyncSession.ConnectionState?>()
        var token: NotificationToken? = session!.observe(\.connectionState, options: [.initial]) { _, change in
            if change.oldValue == nil { initial.add(change.newValue) } else { seen.add(change.newValue!) }
        }
        let states = session!.states
        #expect(initial.values.count == 1, "the .initial call came before observe returned")

        // The transport's reason, by name, once it has been asked.
        try await eventually { session!.lastError != nil }
        let error = try #require(session!.lastError)
        #expect(error.message.contains("certificate verify failed (self-signed test CA)"), "\(error)")
        #expect(error.isFatal == false)
        #expect(transport.attempts.first == URL(string: "wss://sync.example.com/sync/v1"))
        // Connecting, then disconnected (backoff), then connecting again.
        try await eventually { seen.values.contains(.disconnected) && seen.values.filter { $0 == .connecting }.count >= 1 }

        // Paused at once, and told before pause returned.
        session!.pause()
        #expect(session!.state == .paused)
        #expect(session!.connectionState == .disconnected)
        let attempts = transport.attempts.count
        try await _Concurrency.Task.sleep(for: .milliseconds(300))
        #expect(transport.attempts.count <= attempts + 1, "a paused session kept connecting")
        session!.resume()
        // Paused until the session thread starts connecting.
        try await eventually { session!.state == .active }
        try await eventually { transport.attempts.count > attempts + 1 }

        // Invalidated: no more calls.
        token!.invalidate()
        let told = seen.values.count
        session!.pause()
        session!.resume()
        #expect(seen.values.count == told)
        token = nil

        // Closing the database ends the sequence, last with .inactive; the
        // sequence does not keep the database open.
        let collected = _Concurrency.Task { () -> [SyncSession.State] in
            var all: [SyncSession.State] = []
            for await state in states { all.append(state) }
            return all
        }
        session = nil
        db = nil
        let all = await collected.value
        #expect(all.first == .active)
        #expect(all.contains(.paused))
        #expect(all.last == .inactive)
        for (a, b) in zip(all, all.dropFirst()) {
            #expect(a != b, "a repeated state in \(all)")
        }
    }

    @Test("connectionStates starts with the current state, then each change")
    func connectionStatesSequence() async throws {
        let db = try open("ws://127.0.0.1:9/sync/v1", transport: RefusingTransport())
        let session = db.syncSession!
        session.pause()
        var iterator = session.connectionStates.makeAsyncIterator()
        #expect(await iterator.next() == .disconnected)
        session.resume()
        #expect(await iterator.next() == .connecting)
        #expect(await iterator.next() == .disconnected)
    }
}

/// Waits up to 20 s for `condition`.
private func eventually(_ condition: @escaping () -> Bool) async throws {
    for _ in 0..<400 {
        if condition() { return }
        try await _Concurrency.Task.sleep(for: .milliseconds(50))
    }
    Issue.record("a condition never held")
    throw CancellationError()
}
