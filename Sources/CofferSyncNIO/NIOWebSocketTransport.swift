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

    public func connect(to url: URL) throws -> any SyncConnection {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss", url.host != nil else {
            throw NIOWebSocketTransportError("'\(url.absoluteString)' is not a ws:// or wss:// URL with a host")
        }
        let connection = NIOWebSocketConnection(url: url)
        connection.start(tls: scheme == "wss" ? tls : nil)
        try connection.waitUntilOpen(timeout: connectTimeout)
        return connection
    }
}

/// Why a ``NIOWebSocketTransport`` connection failed; its description is
/// the session's `lastError`.
public struct NIOWebSocketTransportError: Error, CustomStringConvertible, Sendable {
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
    private var ended: (any Error)?
    private var finished = false
    private var inbox: [[UInt8]] = []
    private var outbound: WebSocketOutboundWriter?
    private var task: Task<Void, Never>?

    init(url: URL) {
        self.url = url
    }

    func start(tls: TLSConfiguration?) {
        var logger = Logger(label: "coffer.sync.nio")
        logger.logLevel = .critical
        let configuration = WebSocketClientConfiguration(maxFrameSize: NIOWebSocketTransport.maxMessageSize)
        let text = url.absoluteString
        task = Task.detached { [self] in
            do {
                try await WebSocketClient.connect(url: text, configuration: configuration, tlsConfiguration: tls,
                                                  logger: logger) { inbound, outbound, _ in
                    self.didOpen(outbound)
                    for try await message in inbound.messages(maxSize: NIOWebSocketTransport.maxMessageSize) {
                        switch message {
                        case .binary(let buffer):
                            self.received(Array(buffer.readableBytesView))
                        case .text:
                            throw NIOWebSocketTransportError("the sync service sent a text message")
                        }
                    }
                }
                self.didEnd(nil)
            } catch {
                self.didEnd(error)
            }
        }
    }

    private func didOpen(_ writer: WebSocketOutboundWriter) {
        condition.withLock {
            outbound = writer
            opened = true
            condition.broadcast()
        }
    }

    private func received(_ bytes: [UInt8]) {
        condition.withLock {
            inbox.append(bytes)
            condition.broadcast()
        }
    }

    private func didEnd(_ error: (any Error)?) {
        condition.withLock {
            finished = true
            ended = error
            condition.broadcast()
        }
    }

    func waitUntilOpen(timeout: Duration) throws {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        let outcome: Result<Void, NIOWebSocketTransportError>? = condition.withLock {
            while !opened && !finished {
                if !condition.wait(until: deadline) { break }
            }
            if opened { return .success(()) }
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
        guard let writer = condition.withLock({ finished ? nil : outbound }) else {
            throw failure()
        }
        let sent = NSCondition()
        nonisolated(unsafe) var outcome: Result<Void, any Error>?
        Task.detached {
            let result: Result<Void, any Error>
            do {
                try await writer.write(.binary(ByteBuffer(bytes: frame)))
                result = .success(())
            } catch {
                result = .failure(error)
            }
            sent.withLock {
                outcome = result
                sent.broadcast()
            }
        }
        let result = sent.withLock { () -> Result<Void, any Error> in
            while outcome == nil { sent.wait() }
            return outcome!
        }
        if case .failure(let error) = result {
            throw NIOWebSocketTransportError.describing(error, url: url)
        }
    }

    func receive(timeout: Duration) throws -> [UInt8]? {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        return try condition.withLock { () throws -> [UInt8]? in
            while inbox.isEmpty && !finished {
                if !condition.wait(until: deadline) { break }
            }
            if !inbox.isEmpty { return inbox.removeFirst() }
            if finished { throw failureLocked() }
            return nil
        }
    }

    private func failure() -> NIOWebSocketTransportError {
        condition.withLock { failureLocked() }
    }

    private func failureLocked() -> NIOWebSocketTransportError {
        ended.map { NIOWebSocketTransportError.describing($0, url: url) }
            ?? NIOWebSocketTransportError("the sync service at \(url.absoluteString) closed the connection")
    }

    func close() {
        let writer = condition.withLock { finished ? nil : outbound }
        if let writer {
            // The close handshake; the client's task ends when the service answers.
            Task.detached { try? await writer.close(.normalClosure, reason: nil) }
            let deadline = Date().addingTimeInterval(5)
            condition.withLock {
                while !finished {
                    if !condition.wait(until: deadline) { break }
                }
            }
        }
        task?.cancel()
    }
}
