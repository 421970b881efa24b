// wss:// end to end: `coffer-sync serve --tls-certificate --tls-key` with a
// throwaway CA and server certificate made by openssl at test time, and
// Swift databases syncing through NIOWebSocketTransport; a transport that
// trusts another CA is refused with the certificate problem named; ws://
// through the same transport; a message of many MiB, and one over the
// 64 MiB limit.
import Coffer
import CofferSyncNIO
import CofferSyncProtocol
import CofferSyncTestSupport
import Foundation
import Testing

/// A CA and a server certificate for localhost signed by it, in a folder of
/// their own; `other` is a CA that signed nothing.
struct ThrowawayCertificates {
    let folder: URL
    var caCertificate: String { folder.appendingPathComponent("ca.pem").path }
    var otherCACertificate: String { folder.appendingPathComponent("other-ca.pem").path }
    var serverCertificate: String { folder.appendingPathComponent("server.pem").path }
    var serverKey: String { folder.appendingPathComponent("server.key").path }

    /// Runs openssl off the concurrency pool (Command.run): key generation
    /// takes seconds on a loaded machine, and a test blocking a pool thread
    /// that long delays every other test's tasks, their WebSocket pongs too.
    static func make() async throws -> ThrowawayCertificates {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-tls-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificates = ThrowawayCertificates(folder: folder)
        func openssl(_ arguments: [String]) async throws {
            let result = try await Command.run("/usr/bin/env", ["-C", folder.path, "openssl"] + arguments)
            guard result.status == 0 else {
                throw TestFailure("openssl \(arguments.joined(separator: " ")) failed (is openssl installed? scripts/setup): \(result.stderr)")
            }
        }
        for ca in ["ca", "other-ca"] {
            try await openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Coffer test \(ca)",
                               "-keyout", "\(ca).key", "-out", "\(ca).pem"])
        }
        try await openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                           "-keyout", "server.key", "-out", "server.csr"])
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(to: folder.appendingPathComponent("san.ext"),
                                                                 atomically: true, encoding: .utf8)
        try await openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                           "-days", "2", "-extfile", "san.ext", "-out", "server.pem"])
        return certificates
    }

    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}

@Suite("Swift sync over wss://")
struct TLSSyncTests {
    // Transports connecting over wss:// get ``patience`` to connect: with every
    // suite starting its services at once, a debug build's TLS handshake can
    // take longer than the transport's 10-second default.

    /// `serve` with the certificate and key as command-line options.
    static func tlsService(_ certificates: ThrowawayCertificates) async throws -> ServiceProcess {
        try await ServiceProcess.start(postgres: try await PrivatePostgres.shared.freshDatabase(),
                                       arguments: ["--tls-certificate", certificates.serverCertificate,
                                                   "--tls-key", certificates.serverKey])
    }

    /// The service's wss:// URL; TLS names the server by its host name.
    static func wssURL(_ service: ServiceProcess) -> URL {
        URL(string: "wss://localhost:\(service.port)/sync/v1")!
    }

    @Test("two replicas converge over wss:// trusting the service's CA, and the states are observed")
    func converge() async throws {
        let certificates = try await ThrowawayCertificates.make()
        defer { certificates.remove() }
        let service = try await Self.tlsService(certificates)
        defer { service.stop() }
        let partition = freshPartition()
        let transport = try NIOWebSocketTransport(trustingCertificateAt: certificates.caCertificate, connectTimeout: patience)
        let sync = SyncConfiguration(url: Self.wssURL(service), partitionValue: partition, transport: transport)
        let first = try await Replica(sync: sync)
        let second = try await Replica(sync: sync)
        let session = try await syncSession(of: first)
        var states = session.connectionStates.makeAsyncIterator()
        var seen: [SyncSession.ConnectionState] = []
        while let state = await states.next() {
            seen.append(state)
            if state == .connected { break }
        }
        #expect(seen.last == .connected)

        try await first.add("a", "over TLS")
        try await session.wait(for: .upload, timeout: patience)
        #expect(try await notes(of: second, once: ["a": "over TLS"]) == ["a": "over TLS"])

        // A commit of 300 objects, 600 KB: messages of many TLS records, up
        // and down. (Not thousands: the service reads no pong while it stores
        // an upload, and on a loaded machine 2,000 objects took longer than
        // its ping timeout.)
        let batch = Dictionary(uniqueKeysWithValues: (0..<300).map { ("n\($0)", "\($0) " + String(repeating: "x", count: 2000)) })
        try await second.add(batch)
        try await syncSession(of: second).wait(for: .upload, timeout: patience)
        var expected = batch
        expected["a"] = "over TLS"
        #expect(try await notes(of: first, once: expected) == expected)
        #expect(session.lastError == nil)

        // Paused at once; connected again (a new TLS connection) after resume.
        session.pause()
        #expect(session.state == .paused)
        #expect(await states.next() == .disconnected)
        session.resume()
        #expect(await states.next() == .connecting)
        #expect(await states.next() == .connected)
        try await first.add("b", "after resume")
        try await session.wait(for: .upload, timeout: patience)
        expected["b"] = "after resume"
        #expect(try await notes(of: second, once: expected) == expected)
    }

    @Test("a transport trusting another CA is refused, naming the certificate problem; nothing local is lost")
    func wrongCA() async throws {
        let certificates = try await ThrowawayCertificates.make()
        defer { certificates.remove() }
        let service = try await Self.tlsService(certificates)
        defer { service.stop() }
        let transport = try NIOWebSocketTransport(trustingCertificateAt: certificates.otherCACertificate,
                                                  connectTimeout: patience)
        let replica = try await Replica(sync: SyncConfiguration(url: Self.wssURL(service), partitionValue: freshPartition(),
                                                                transport: transport))
        let session = try await syncSession(of: replica)
        // The handshake's own failure, not a connection that took too long on a busy machine.
        try await eventually { session.lastError?.message.contains("certificate") == true }
        let error = try #require(session.lastError)
        #expect(error.message.contains("certificate is not trusted"), "\(error)")
        #expect(error.message.contains("CERTIFICATE_VERIFY_FAILED"), "\(error)")
        #expect(error.message.contains("wss://localhost:\(service.port)/sync/v1"), "\(error)")
        #expect(session.connectionState != .connected)
        #expect(session.state == .active, "a refused certificate is retried, as any failed connection")
        try await replica.add("k", "kept")
        await #expect(throws: CofferError.self) {
            try await session.wait(for: .upload, timeout: .milliseconds(300))
        }
        #expect(try await replica.notes() == ["k": "kept"])
    }

    @Test("a wss:// URL with an IP address instead of a host name is refused, saying so")
    func ipAddressHost() throws {
        let transport = NIOWebSocketTransport()
        for url in ["wss://127.0.0.1:9/sync/v1", "wss://[::1]:9/sync/v1"] {
            let error = #expect(throws: NIOWebSocketTransportError.self) {
                _ = try transport.connect(to: URL(string: url)!)
            }
            #expect(error?.description.contains("needs the service's host name") == true, "\(String(describing: error))")
        }
        let other = #expect(throws: NIOWebSocketTransportError.self) {
            _ = try transport.connect(to: URL(string: "https://localhost:9/sync/v1")!)
        }
        #expect(other?.description.contains("is not a ws:// or wss:// URL") == true)
    }

    @Test("the same transport speaks ws:// to a service without TLS")
    func plainWebSocket() async throws {
        let service = try await ServiceProcess.start(postgres: try await PrivatePostgres.shared.freshDatabase())
        defer { service.stop() }
        let partition = freshPartition()
        let nio = try await Replica(sync: SyncConfiguration(url: URL(string: service.url)!, partitionValue: partition,
                                                            transport: NIOWebSocketTransport()))
        // The built-in transport on the other side.
        let builtIn = try await Replica(sync: SyncConfiguration(url: URL(string: service.url)!, partitionValue: partition))
        try await nio.add("p", "plain")
        try await syncSession(of: nio).wait(for: .upload, timeout: patience)
        #expect(try await notes(of: builtIn, once: ["p": "plain"]) == ["p": "plain"])
        try await builtIn.add("q", "built-in")
        try await syncSession(of: builtIn).wait(for: .upload, timeout: patience)
        #expect(try await notes(of: nio, once: ["p": "plain", "q": "built-in"]) == ["p": "plain", "q": "built-in"])
    }

    @Test("a connection refused on a port where nothing listens names the URL")
    func refused() async throws {
        // A port that was free a moment ago: bind, read it, close.
        let service = try await ServiceProcess.start(postgres: try await PrivatePostgres.shared.freshDatabase())
        let port = service.port
        service.kill()
        let error = #expect(throws: NIOWebSocketTransportError.self) {
            _ = try NIOWebSocketTransport().connect(to: URL(string: "ws://localhost:\(port)/sync/v1")!)
        }
        #expect(error?.description.contains("ws://localhost:\(port)/sync/v1") == true, "\(String(describing: error))")
    }

    @Test("a message of many MiB reaches the service over wss://; one byte over 64 MiB is refused before sending")
    func messageLimit() async throws {
        let certificates = try await ThrowawayCertificates.make()
        defer { certificates.remove() }
        let service = try await Self.tlsService(certificates)
        defer { service.stop() }
        let transport = try NIOWebSocketTransport(trustingCertificateAt: certificates.caCertificate, connectTimeout: patience)
        #expect(NIOWebSocketTransport.maxMessageSize == WireLimits.maxFrameBytes)
        let url = Self.wssURL(service)
        let connection = try await offPool { Unchecked(try transport.connect(to: url)) }.value
        defer { connection.close() }
        let over = [UInt8](repeating: 0xFF, count: WireLimits.maxFrameBytes + 1)
        let error = #expect(throws: NIOWebSocketTransportError.self) { try connection.send(over) }
        #expect(error?.description.contains("larger than the \(WireLimits.maxFrameBytes)-byte limit") == true)

        // A large message that is not a frame the service knows: it reads all
        // of it and answers with an ERROR frame before closing. (8 MiB: in a
        // debug build on a loaded machine a whole 64 MiB message did not get
        // through TLS before the service's ping timeout, 2 × 30 s, closed
        // the connection.)
        let large = [UInt8](repeating: 0xFF, count: 8 << 20)
        let shared = Unchecked(connection)
        try await offPool { try shared.value.send(large) }
        let answer = try await offPool { try shared.value.receive(timeout: .seconds(60)) }
        let frame = try Frame(decoding: try #require(answer, "no answer within 60 s"))
        guard case .error(_, let message, let fatal) = frame else {
            Issue.record("expected an ERROR frame, got \(frame)")
            return
        }
        #expect(!message.isEmpty, "fatal: \(fatal)")
        let closed = #expect(throws: NIOWebSocketTransportError.self) {
            _ = try connection.receive(timeout: .seconds(60))
        }
        #expect(closed?.description.contains("closed the connection") == true, "\(String(describing: closed))")
    }

    @Test("a CA file that is not there, or holds no certificate, is refused naming it")
    func badCAFile() throws {
        let missing = #expect(throws: NIOWebSocketTransportError.self) {
            _ = try NIOWebSocketTransport(trustingCertificateAt: "/nonexistent/ca.pem")
        }
        #expect(missing?.description.contains("/nonexistent/ca.pem") == true)
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-empty-\(UUID()).pem")
        try "not a certificate\n".write(to: empty, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: empty) }
        let garbage = #expect(throws: NIOWebSocketTransportError.self) {
            _ = try NIOWebSocketTransport(trustingCertificateAt: empty.path)
        }
        #expect(garbage?.description.contains(empty.path) == true)
    }
}

/// A connection handed to a thread of its own; it is used by one at a time.
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
