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

/// Frames that arrived, waiting to be read.
actor Inbox {
    private var frames: [[UInt8]] = []
    private var closed = false
    private var waiter: (token: Int, continuation: CheckedContinuation<[UInt8]?, Never>)?
    private var tokens = 0

    func put(_ frame: [UInt8]) {
        if let w = waiter {
            waiter = nil
            w.continuation.resume(returning: frame)
        } else {
            frames.append(frame)
        }
    }

    func close() {
        closed = true
        if let w = waiter {
            waiter = nil
            w.continuation.resume(returning: nil)
        }
    }

    /// The next frame, or nil if the connection closed or none came in time.
    func next(within timeout: Duration) async -> [UInt8]? {
        if !frames.isEmpty { return frames.removeFirst() }
        if closed { return nil }
        tokens += 1
        let token = tokens
        return await withCheckedContinuation { continuation in
            waiter = (token, continuation)
            Task {
                try? await Task.sleep(for: timeout)
                self.expire(token)
            }
        }
    }

    private func expire(_ token: Int) {
        if let w = waiter, w.token == token {
            waiter = nil
            w.continuation.resume(returning: nil)
        }
    }
}

final class TestClient: Sendable {
    let id: ClientID
    let inbox = Inbox()
    private let outgoing: AsyncStream<[UInt8]>.Continuation
    private let connection: Task<Void, Never>

    init(url: String, id: ClientID = .random()) {
        self.id = id
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        outgoing = continuation
        let inbox = self.inbox
        connection = Task {
            var logger = Logger(label: "test-client")
            logger.logLevel = .critical
            do {
                try await WebSocketClient.connect(
                    url: url, configuration: .init(maxFrameSize: WireLimits.maxFrameBytes), logger: logger
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
                                await inbox.put(buffer.getBytes(at: buffer.readerIndex, length: buffer.readableBytes) ?? [])
                            }
                        }
                        group.cancelAll()
                    }
                }
            } catch {}
            await inbox.close()
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
            throw TestFailure("no frame arrived (connection closed or \(timeout) passed)")
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
