// A sync client for the tests, written with the protocol codec over a real
// WebSocket connection (hummingbird-websocket's client): frames go out in
// order, frames that arrive wait in an inbox, and every wait has a deadline
// so a broken service fails a test instead of hanging it.
import CofferSyncProtocol
import CofferSyncTestSupport
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOPosix

/// Frames that arrived, waiting to be read. A lock, not an actor: the
/// connection's task puts frames in without waiting for a thread of the
/// concurrency pool (an actor the test's own tasks also call would make it
/// wait for one), so it goes on reading, and answering pings, however busy
/// the pool is.
final class Inbox: @unchecked Sendable {
    private let lock = NSLock()
    private var frames: [[UInt8]] = []
    private var closed = false
    private var why: String?
    private var waiter: (token: Int, continuation: CheckedContinuation<[UInt8]?, Never>)?
    private var tokens = 0

    /// Why the connection ended, once it has: the peer's close frame or the error.
    var ending: String? { lock.withLock { why } }

    func put(_ frame: [UInt8]) {
        let waiting = lock.withLock { () -> CheckedContinuation<[UInt8]?, Never>? in
            if let w = waiter {
                waiter = nil
                return w.continuation
            }
            frames.append(frame)
            return nil
        }
        waiting?.resume(returning: frame)
    }

    func close(_ why: String) {
        let waiting = lock.withLock { () -> CheckedContinuation<[UInt8]?, Never>? in
            closed = true
            self.why = why
            defer { waiter = nil }
            return waiter?.continuation
        }
        waiting?.resume(returning: nil)
    }

    /// The next frame, or nil if the connection closed or none came in time.
    func next(within timeout: Duration) async -> [UInt8]? {
        await withCheckedContinuation { continuation in
            enum Outcome { case ready([UInt8]?), waiting(Int) }
            let outcome = lock.withLock { () -> Outcome in
                if !frames.isEmpty { return .ready(frames.removeFirst()) }
                if closed { return .ready(nil) }
                tokens += 1
                waiter = (tokens, continuation)
                return .waiting(tokens)
            }
            switch outcome {
            case .ready(let frame):
                continuation.resume(returning: frame)
            case .waiting(let token):
                Task {
                    try? await Task.sleep(for: timeout)
                    self.expire(token)
                }
            }
        }
    }

    private func expire(_ token: Int) {
        let waiting = lock.withLock { () -> CheckedContinuation<[UInt8]?, Never>? in
            guard let w = waiter, w.token == token else { return nil }
            waiter = nil
            return w.continuation
        }
        waiting?.resume(returning: nil)
    }
}

final class TestClient: Sendable {
    let id: ClientID
    let inbox = Inbox()
    private let outgoing: AsyncStream<[UInt8]>.Continuation
    private let connection: Task<Void, Never>

    /// Connects to `url`. An `isolated` connection reads frames and answers
    /// pings on a thread and an event loop of its own (IsolatedConnections),
    /// others on the pool and event loops all tests share.
    init(url: String, id: ClientID = .random(), isolated: Bool = false) {
        self.id = id
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        outgoing = continuation
        let inbox = self.inbox
        let executor: (any TaskExecutor)? = isolated ? IsolatedConnections.executor : nil
        let group: any EventLoopGroup = isolated ? IsolatedConnections.eventLoopGroup : MultiThreadedEventLoopGroup.singleton
        connection = Task(executorPreference: executor) {
            var logger = Logger(label: "test-client")
            logger.logLevel = .critical
            let why: String
            do {
                let close = try await WebSocketClient.connect(
                    url: url, configuration: .init(maxFrameSize: WireLimits.maxFrameBytes), eventLoopGroup: group,
                    logger: logger
                ) { inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await bytes in stream {
                                try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
                            }
                            try await outbound.close(.normalClosure, reason: nil)
                        }
                        for try await message in inbound.messages(maxSize: WireLimits.maxFrameBytes) {
                            if case .binary(let buffer) = message {
                                inbox.put(buffer.getBytes(at: buffer.readerIndex, length: buffer.readableBytes) ?? [])
                            }
                        }
                        group.cancelAll()
                    }
                }
                why = close.map { "closed with \($0.closeCode)\($0.reason.map { ": \($0)" } ?? "")" } ?? "closed"
            } catch {
                why = "failed: \(error)"
            }
            inbox.close(why)
        }
    }

    deinit {
        outgoing.finish()
        connection.cancel()
    }

    func send(_ frame: Frame) {
        outgoing.yield(frame.encoded)
    }

    func sendRaw(_ bytes: [UInt8]) {
        outgoing.yield(bytes)
    }

    /// Closes the connection from this side.
    func close() async {
        outgoing.finish()
        _ = await connection.value
    }

    /// The next frame; throws if none arrives in time or the connection closed.
    func receive(within timeout: Duration = .seconds(30)) async throws -> Frame {
        guard let bytes = await inbox.next(within: timeout) else {
            if let ending = inbox.ending {
                throw TestFailure("no frame arrived: the connection \(ending)")
            }
            throw TestFailure("no frame arrived in \(timeout)")
        }
        return try Frame(decoding: bytes)
    }

    /// The next frame that is not a DOWNLOAD.
    func receiveSkippingDownloads(within timeout: Duration = .seconds(30)) async throws -> Frame {
        while true {
            let frame = try await receive(within: timeout)
            if case .download = frame { continue }
            return frame
        }
    }

    /// The next frame's encoding, or nil if none arrives in time.
    func receiveRaw(within timeout: Duration) async -> [UInt8]? {
        await inbox.next(within: timeout)
    }

    /// HELLO, then the WELCOME's (last client version, latest server version).
    @discardableResult
    func hello(partition: String, schema: SyncSchema = TestSchema.schema, lastServerVersion: UInt64 = 0,
               version: UInt64 = WireLimits.protocolVersion, token: String = "") async throws -> (UInt64, UInt64) {
        send(.hello(protocolVersion: version, client: id, partition: partition, token: token,
                    lastServerVersion: lastServerVersion, schema: schema))
        let frame = try await receive()
        guard case .welcome(_, let lastClient, let latest) = frame else {
            throw TestFailure("expected WELCOME, got \(frame)")
        }
        return (lastClient, latest)
    }

    /// Uploads changesets in one frame and returns the acknowledgement.
    @discardableResult
    func upload(_ changesets: [Changeset]) async throws -> (UInt64, UInt64) {
        send(.upload(changesets))
        var frame = try await receive()
        // Downloads of other clients' changes may come first: acknowledged and set aside.
        while case .download(_, let changesets) = frame {
            if let last = changesets.last { send(.downloadAck(lastServerVersion: last.serverVersion)) }
            frame = try await receive()
        }
        guard case .uploadAck(let last, let serverVersion) = frame else {
            throw TestFailure("expected UPLOAD_ACK, got \(frame)")
        }
        return (last, serverVersion)
    }

    /// Reads DOWNLOAD frames, acknowledging each, until a count-0 frame says
    /// the client is caught up; returns the changesets received.
    func downloadAll() async throws -> [ServerChangeset] {
        var all: [ServerChangeset] = []
        while true {
            let frame = try await receive()
            guard case .download(_, let changesets) = frame else {
                throw TestFailure("expected DOWNLOAD, got \(frame)")
            }
            if changesets.isEmpty { return all }
            all += changesets
            send(.downloadAck(lastServerVersion: changesets.last!.serverVersion))
        }
    }
}
