// wss:// end to end: `coffer-sync serve --tls-certificate --tls-key` with a
// throwaway CA and server certificate made by openssl at test time, and
// Swift databases syncing through NIOWebSocketTransport; a transport that
// trusts another CA is refused with the certificate problem named; the
// session's state changes are observed on the way.
import Coffer
import CofferSyncNIO
import CofferSyncTestSupport
import Foundation
import Testing

/// A CA and a server certificate for 127.0.0.1 signed by it, in a folder of
/// their own; `other` is a CA that signed nothing.
struct ThrowawayCertificates {
    let folder: URL
    var caCertificate: String { folder.appendingPathComponent("ca.pem").path }
    var otherCACertificate: String { folder.appendingPathComponent("other-ca.pem").path }
    var serverCertificate: String { folder.appendingPathComponent("server.pem").path }
    var serverKey: String { folder.appendingPathComponent("server.key").path }

    static func make() throws -> ThrowawayCertificates {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-tls-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificates = ThrowawayCertificates(folder: folder)
        func openssl(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["openssl"] + arguments
            process.currentDirectoryURL = folder
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw TestFailure("openssl \(arguments.joined(separator: " ")) failed (is openssl installed? scripts/setup)")
            }
        }
        for ca in ["ca", "other-ca"] {
            try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Coffer test \(ca)",
                         "-keyout", "\(ca).key", "-out", "\(ca).pem"])
        }
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                     "-keyout", "server.key", "-out", "server.csr"])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(to: folder.appendingPathComponent("san.ext"),
                                                                 atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-days", "2", "-extfile", "san.ext", "-out", "server.pem"])
        return certificates
    }
}

@Suite("Swift sync over wss://")
struct TLSSyncTests {
    static func tlsService(_ certificates: ThrowawayCertificates) async throws -> ServiceProcess {
        try await ServiceProcess.start(postgres: try await PrivatePostgres.shared.freshDatabase(),
                                       environment: ["COFFER_SYNC_TLS_CERTIFICATE": certificates.serverCertificate,
                                                     "COFFER_SYNC_TLS_KEY": certificates.serverKey])
    }

    static func wssURL(_ service: ServiceProcess) -> URL {
        URL(string: "wss://127.0.0.1:\(service.port)/sync/v1")!
    }

    @Test("two replicas converge over wss:// trusting the service's CA, and the states are observed")
    func converge() async throws {
        let certificates = try ThrowawayCertificates.make()
        let service = try await Self.tlsService(certificates)
        defer { service.stop() }
        let partition = freshPartition()
        let transport = try NIOWebSocketTransport(trustingCertificateAt: certificates.caCertificate)
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

        // A big frame (a few MiB) passes too.
        let big = String(repeating: "x", count: 3 << 20)
        try await second.add("big", big)
        try await syncSession(of: second).wait(for: .upload, timeout: patience)
        #expect(try await notes(of: first, once: ["a": "over TLS", "big": big])["big"]?.count == big.count)

        // Paused at once; connected again after resume.
        session.pause()
        #expect(session.state == .paused)
        #expect(await states.next() == .disconnected)
        session.resume()
        #expect(await states.next() == .connecting)
        #expect(await states.next() == .connected)
    }

    @Test("a transport trusting another CA is refused, naming the certificate problem")
    func wrongCA() async throws {
        let certificates = try ThrowawayCertificates.make()
        let service = try await Self.tlsService(certificates)
        defer { service.stop() }
        let transport = try NIOWebSocketTransport(trustingCertificateAt: certificates.otherCACertificate)
        let replica = try await Replica(sync: SyncConfiguration(url: Self.wssURL(service), partitionValue: freshPartition(),
                                                                transport: transport))
        let session = try await syncSession(of: replica)
        try await eventually { session.lastError != nil }
        let error = try #require(session.lastError)
        #expect(error.message.contains("certificate verification failed"), "\(error)")
        #expect(error.message.contains("wss://127.0.0.1:\(service.port)/sync/v1"), "\(error)")
        #expect(session.connectionState != .connected)
        try await replica.add("k", "kept")
        await #expect(throws: CofferError.self) {
            try await session.wait(for: .upload, timeout: .milliseconds(300))
        }
    }

    @Test("the same transport speaks ws:// to a service without TLS")
    func plainWebSocket() async throws {
        let service = try await ServiceProcess.start(postgres: try await PrivatePostgres.shared.freshDatabase())
        defer { service.stop() }
        let sync = SyncConfiguration(url: URL(string: service.url)!, partitionValue: freshPartition(),
                                     transport: NIOWebSocketTransport())
        let replica = try await Replica(sync: sync)
        try await replica.add("p", "plain")
        try await syncSession(of: replica).wait(for: .upload, timeout: patience)
    }

    @Test("a CA file that is not there is refused naming it")
    func missingCAFile() {
        #expect {
            _ = try NIOWebSocketTransport(trustingCertificateAt: "/nonexistent/ca.pem")
        } throws: { error in
            "\(error)".contains("/nonexistent/ca.pem")
        }
    }
}
