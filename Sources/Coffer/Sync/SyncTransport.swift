// SyncTransport: how a synced database exchanges frames with the service, in
// Swift; bridged to the C core's coffer_sync_transport.

import Foundation
internal import CCoffer

/// A way to reach a `coffer-sync` service: opens connections that carry one
/// binary WebSocket message per frame (docs/SYNC.md, "Wire protocol").
///
/// Without one, a database syncs through the C core's built-in `ws://`
/// client, which has no TLS. Give one as ``SyncConfiguration/transport`` for
/// `wss://` URLs: the `CofferSyncNIO` library has `NIOWebSocketTransport`
/// (SwiftNIO, TLS through swift-nio-ssl), and a program may bring its own.
///
/// Every call comes from the database's sync thread, one at a time, and may
/// block it: a transport answers in its own time, within the limits it
/// keeps (the built-in one gives up connecting after 10 s and refuses
/// messages over 64 MiB). A thrown error fails the connection; the session
/// reports it as its ``SyncSession/lastError`` (so make the error's
/// description say what went wrong) and connects again with backoff.
public protocol SyncTransport: Sendable {
    /// Connects to `url` (the configuration's ``SyncConfiguration/url``) and
    /// completes the WebSocket upgrade.
    func connect(to url: URL) throws -> any SyncConnection
}

/// One open connection of a ``SyncTransport``; used from the sync thread only.
public protocol SyncConnection: AnyObject {
    /// Sends one frame as one binary message.
    func send(_ frame: [UInt8]) throws
    /// Waits at most `timeout` for the next binary message: its bytes, or nil
    /// when none came in time. Throws when the connection failed or the
    /// service closed it.
    func receive(timeout: Duration) throws -> [UInt8]?
    /// Closes the connection (a WebSocket close handshake where it can) and
    /// frees what it holds. Called once.
    func close()
}

/// The C transport over a ``SyncTransport``: its context, kept alive by the
/// configuration (and so by every handle opened with it).
final class SyncTransportBridge: @unchecked Sendable {
    let transport: any SyncTransport

    init(_ transport: any SyncTransport) {
        self.transport = transport
    }

    /// A connection and the frame its last receive returned (valid until the
    /// next receive or close, as the C interface says).
    final class Connection {
        let connection: any SyncConnection
        var lastFrame: UnsafeMutableRawBufferPointer?

        init(_ connection: any SyncConnection) {
            self.connection = connection
        }

        func dropFrame() {
            lastFrame?.deallocate()
            lastFrame = nil
        }
    }

    /// The C struct; its context is this bridge, unretained.
    var cTransport: coffer_sync_transport {
        var t = coffer_sync_transport()
        t.ctx = Unmanaged.passUnretained(self).toOpaque()
        t.open = { ctx, url, out in
            let bridge = Unmanaged<SyncTransportBridge>.fromOpaque(ctx!).takeUnretainedValue()
            let text = String(cString: url!)
            guard let parsed = URL(string: text) else {
                return coffer_sync_transport_fail(COFFER_ERR_INVALID_ARGUMENT, "sync url '\(text)' does not parse")
            }
            do {
                let connection = try bridge.transport.connect(to: parsed)
                out!.pointee = Unmanaged.passRetained(Connection(connection)).toOpaque()
                return COFFER_OK
            } catch {
                return coffer_sync_transport_fail(COFFER_ERR_IO, "\(error)")
            }
        }
        t.send = { _, conn, frame, size in
            let c = Unmanaged<Connection>.fromOpaque(conn!).takeUnretainedValue()
            do {
                try c.connection.send(Array(UnsafeBufferPointer(start: frame, count: size)))
                return COFFER_OK
            } catch {
                return coffer_sync_transport_fail(COFFER_ERR_IO, "\(error)")
            }
        }
        t.receive = { _, conn, timeoutMs, frame, size in
            let c = Unmanaged<Connection>.fromOpaque(conn!).takeUnretainedValue()
            c.dropFrame()
            do {
                guard let bytes = try c.connection.receive(timeout: .milliseconds(max(timeoutMs, 0))) else {
                    return COFFER_ERR_TIMEOUT
                }
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
                buffer.copyBytes(from: bytes)
                c.lastFrame = buffer
                frame!.pointee = UnsafePointer(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
                size!.pointee = bytes.count
                return COFFER_OK
            } catch {
                return coffer_sync_transport_fail(COFFER_ERR_IO, "\(error)")
            }
        }
        t.close = { _, conn in
            let c = Unmanaged<Connection>.fromOpaque(conn!).takeRetainedValue()
            c.dropFrame()
            c.connection.close()
        }
        return t
    }
}
