// NIOWebSocketTransport: a sync transport (Coffer's SyncTransport, bridged
// to the C core's coffer_sync_transport) on SwiftNIO, with TLS through
// swift-nio-ssl: wss:// as well as ws://.

public import Coffer
public import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
public import NIOSSL

/// A WebSocket transport on SwiftNIO for ``Coffer/SyncConfiguration``:
/// `wss://` (TLS through swift-nio-ssl) and `ws://` URLs.
///
/// ```swift
/// import Coffer
/// import CofferSyncNIO
///
/// let sync = SyncConfiguration(url: URL(string: "wss://sync.example.com/sync/v1")!,
///                              partitionValue: "team-1",
///                              transport: NIOWebSocketTransport())
/// ```
///
/// By default the service's certificate must chain to the system's trust
/// roots. A self-hosted service with its own certificate authority, or a
/// test's throwaway one: ``init(trustingCertificateAt:)``; anything else
/// (client certificates, pinned roots): ``init(tls:connectTimeout:)`` with a
/// `TLSConfiguration` of your own.
///
/// It keeps the limits of the C core's built-in transport: messages up to
/// 64 MiB (a larger one fails the connection), connecting (TCP, TLS and the
/// WebSocket upgrade) within ``connectTimeout``, and a close handshake when
/// the session closes. A failed connection throws a ``NIOWebSocketTransportError``
/// naming the URL and the cause, which the session reports as its
/// `lastError`; an untrusted certificate says so.
public struct NIOWebSocketTransport: SyncTransport {
    /// The largest message sent or received, as the built-in transport's.
    public static let maxMessageSize = 64 << 20

    /// The TLS configuration of `wss://` connections.
    public let tls: TLSConfiguration
    /// How long connecting may take, TLS handshake and upgrade included.
    public let connectTimeout: Duration

    /// A transport with `tls` for `wss://` URLs (by default the system's
    /// trust roots and full certificate verification).
    public init(tls: TLSConfiguration = .makeClientConfiguration(), connectTimeout: Duration = .seconds(10)) {
        self.tls = tls
        self.connectTimeout = connectTimeout
    }

    /// A transport that trusts the certificate authorities in the PEM file
    /// at `path` (and no others): a self-hosted service's own CA, or a
    /// test's. Throws ``NIOWebSocketTransportError`` naming the file when it
    /// cannot be read or holds no certificate.
    public init(trustingCertificateAt path: String, connectTimeout: Duration = .seconds(10)) throws {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw NIOWebSocketTransportError("cannot read the CA certificate file '\(path)': \(error)")
        }
        guard !certificates.isEmpty else {
            throw NIOWebSocketTransportError("the CA certificate file '\(path)' holds no certificate")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(certificates)
        self.init(tls: tls, connectTimeout: connectTimeout)
    }

    /// Connects to `url` (`ws://` or `wss://` with a host name) and completes
    /// the WebSocket upgrade within ``connectTimeout``.
    ///
    /// - Throws: ``NIOWebSocketTransportError`` naming the URL and the cause:
    ///   another scheme, a `wss://` URL with an IP address instead of a host
    ///   name, a refused connection, a certificate that is not trusted, a
    ///   refused upgrade, or a timeout.
    public func connect(to url: URL) throws -> any SyncConnection {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss", let host = url.host, !host.isEmpty
        else {
            throw NIOWebSocketTransportError("'\(url.absoluteString)' is not a ws:// or wss:// URL with a host")
        }
        if scheme == "wss" && Self.isIPAddress(host) {
            throw NIOWebSocketTransportError(
                "'\(url.absoluteString)': a wss:// URL needs the service's host name, not the IP address \(host) "
                    + "(the TLS client names the server by its host name, which its certificate must list)")
        }
        let connection = NIOWebSocketConnection(url: url)
        connection.start(tls: scheme == "wss" ? tls : nil)
        try connection.waitUntilOpen(timeout: connectTimeout)
        return connection
    }
}

extension NIOWebSocketTransport {
    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || (host.split(separator: ".").count == 4 && host.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") })
    }
}

/// Why a ``NIOWebSocketTransport`` connection failed; its description is
/// the session's `lastError`.
public struct NIOWebSocketTransportError: Error, CustomStringConvertible, Sendable {
    /// What failed: the URL and the cause.
    public let description: String

    init(_ description: String) {
        self.description = description
    }

    /// The message for `error` thrown while connecting to or talking with `url`.
    static func describing(_ error: any Error, url: URL) -> NIOWebSocketTransportError {
        let text = String(describing: error)
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
            return NIOWebSocketTransportError(
                "TLS handshake with \(url.absoluteString) failed: certificate verification failed, "
                    + "the service's certificate is not trusted (not signed by a trusted CA, expired, "
                    + "or for another host): \(text)")
        }
        if error is NIOSSLError || text.contains("handshakeFailed") {
            return NIOWebSocketTransportError("TLS handshake with \(url.absoluteString) failed: \(text)")
        }
        return NIOWebSocketTransportError("WebSocket connection to \(url.absoluteString) failed: \(text)")
    }
}

/// One connection: the WebSocket client runs in a task of its own, and the
/// sync thread meets it through a condition (messages in, frames out).
final class NIOWebSocketConnection: SyncConnection, @unchecked Sendable {
    private let url: URL
    private let condition = NSCondition()
    private var opened = false
    /// Closed or given up on by the sync thread: a connection that opens
    /// late is closed at once.
    private var abandoned = false
    private var finished = false
    private var ended: (any Error)?
    private var inbox: [[UInt8]] = []
    private var outbound: WebSocketOutboundWriter?
    private var task: Task<Void, Never>?

    init(url: URL) {
        self.url = url
    }

    private func locked<Value>(_ body: () throws -> Value) rethrows -> Value {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    func start(tls: TLSConfiguration?) {
        let logger: Logger = {
            var logger = Logger(label: "coffer.sync.nio")
            logger.logLevel = .critical
            return logger
        }()
        let configuration = WebSocketClientConfiguration(maxFrameSize: NIOWebSocketTransport.maxMessageSize)
        let text = url.absoluteString
        task = Task.detached { [self] in
            do {
                try await WebSocketClient.connect(url: text, configuration: configuration, tlsConfiguration: tls,
                                                  logger: logger) { inbound, outbound, _ in
                    guard self.didOpen(outbound) else { return }
                    for try await message in inbound.messages(maxSize: NIOWebSocketTransport.maxMessageSize) {
                        switch message {
                        case .binary(let buffer):
                            self.received(Array(buffer.readableBytesView))
                        case .text:
                            self.didEnd(NIOWebSocketTransportError(
                                "the sync service at \(text) sent a text message; the protocol has binary messages only"))
                            return
                        }
                    }
                }
                self.didEnd(nil)
            } catch {
                self.didEnd(error)
            }
        }
    }

    /// Whether the connection is still wanted; if so the writer is kept.
    private func didOpen(_ writer: WebSocketOutboundWriter) -> Bool {
        locked {
            guard !abandoned else { return false }
            outbound = writer
            opened = true
            condition.broadcast()
            return true
        }
    }

    private func received(_ bytes: [UInt8]) {
        locked {
            inbox.append(bytes)
            condition.broadcast()
        }
    }

    /// The first end counts: a protocol error stays the cause of the close that follows it.
    private func didEnd(_ error: (any Error)?) {
        locked {
            guard !finished else { return }
            finished = true
            ended = error
            condition.broadcast()
        }
    }

    func waitUntilOpen(timeout: Duration) throws {
        let deadline = Date(after: timeout)
        let outcome: Swift.Result<Void, NIOWebSocketTransportError>? = locked {
            while !opened && !finished {
                if !condition.wait(until: deadline) { break }
            }
            if opened { return .success(()) }
            abandoned = true
            if finished {
                return .failure(ended.map { NIOWebSocketTransportError.describing($0, url: url) }
                    ?? NIOWebSocketTransportError("\(url.absoluteString) closed the connection during the upgrade"))
            }
            return nil
        }
        switch outcome {
        case .success: return
        case .failure(let error):
            throw error
        case nil:
            task?.cancel()
            throw NIOWebSocketTransportError("connecting to \(url.absoluteString) took more than \(timeout)")
        }
    }

    func send(_ frame: [UInt8]) throws {
        guard frame.count <= NIOWebSocketTransport.maxMessageSize else {
            throw NIOWebSocketTransportError(
                "a message of \(frame.count) bytes is larger than the \(NIOWebSocketTransport.maxMessageSize)-byte limit (64 MiB)")
        }
        guard let writer = locked({ finished ? nil : outbound }) else {
            throw failure()
        }
        let pending = PendingWrite()
        Task.detached {
            do {
                try await writer.write(.binary(ByteBuffer(bytes: frame)))
                pending.finish(.success(()))
            } catch {
                pending.finish(.failure(error))
            }
        }
        if case .failure(let error) = pending.wait() {
            throw locked { finished ? failureLocked() : NIOWebSocketTransportError.describing(error, url: url) }
        }
    }

    func receive(timeout: Duration) throws -> [UInt8]? {
        let deadline = Date(after: timeout)
        return try locked { () throws -> [UInt8]? in
            while inbox.isEmpty && !finished {
                if !condition.wait(until: deadline) { break }
            }
            if !inbox.isEmpty { return inbox.removeFirst() }
            if finished { throw failureLocked() }
            return nil
        }
    }

    private func failure() -> NIOWebSocketTransportError {
        locked { failureLocked() }
    }

    private func failureLocked() -> NIOWebSocketTransportError {
        ended.map { NIOWebSocketTransportError.describing($0, url: url) }
            ?? NIOWebSocketTransportError("the sync service at \(url.absoluteString) closed the connection")
    }

    func close() {
        let writer: WebSocketOutboundWriter? = locked {
            abandoned = true
            return finished ? nil : outbound
        }
        if let writer {
            // The close handshake; the client's task ends when the service answers.
            Task.detached { try? await writer.close(.normalClosure, reason: nil) }
            let deadline = Date(after: .seconds(5))
            locked {
                while !finished {
                    if !condition.wait(until: deadline) { break }
                }
            }
        }
        task?.cancel()
    }
}

/// One write handed to the client's event loop, waited for by the sync thread.
private final class PendingWrite: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<Void, any Error>?

    func finish(_ result: Result<Void, any Error>) {
        condition.lock()
        self.result = result
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> Result<Void, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return result!
    }
}

extension Date {
    /// `duration` from now.
    fileprivate init(after duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = Date().addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
    }
}
