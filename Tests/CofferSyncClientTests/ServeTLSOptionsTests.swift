// `coffer-sync serve`'s TLS settings refused before it listens: a certificate
// without its key (or a key without its certificate) from the command line,
// the environment or the configuration file, and files that do not load;
// each message names what is missing or the file at fault.
import CofferSyncTestSupport
import Foundation
import Testing

@Suite("coffer-sync serve TLS options")
struct ServeTLSOptionsTests {
    /// A URL nothing listens on: the TLS settings are checked before PostgreSQL is reached.
    static let postgres = "postgres://coffer@127.0.0.1:1/coffer?sslmode=disable"

    /// Runs `serve` with `arguments`; it must fail, and its standard error is returned.
    static func refusal(_ arguments: [String], environment: [String: String] = [:]) async throws -> String {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COFFER_SYNC_") }
        env.merge(environment) { $1 }
        let result = try await ServiceProcess.command(["serve", "--postgres", postgres, "--listen", "127.0.0.1:0"] + arguments,
                                                      environment: env)
        #expect(result.status != 0, "serve \(arguments) did not fail: \(result.stdout) \(result.stderr)")
        return result.stderr
    }

    @Test("a certificate without its key, and a key without its certificate, are refused naming the missing one")
    func halfAPair() async throws {
        let certificates = try await ThrowawayCertificates.make()
        defer { certificates.remove() }
        let noKey = try await Self.refusal(["--tls-certificate", certificates.serverCertificate])
        #expect(noKey.contains("a TLS certificate without its key"), "\(noKey)")
        #expect(noKey.contains("--tls-key"), "\(noKey)")
        let noCertificate = try await Self.refusal(["--tls-key", certificates.serverKey])
        #expect(noCertificate.contains("a TLS key without its certificate"), "\(noCertificate)")
        #expect(noCertificate.contains("--tls-certificate"), "\(noCertificate)")

        let fromEnvironment = try await Self.refusal([], environment: ["COFFER_SYNC_TLS_CERTIFICATE": certificates.serverCertificate])
        #expect(fromEnvironment.contains("COFFER_SYNC_TLS_KEY"), "\(fromEnvironment)")

        let config = certificates.folder.appendingPathComponent("config.json")
        try #"{"tlsKey": "\#(certificates.serverKey)"}"#.write(to: config, atomically: true, encoding: .utf8)
        let fromFile = try await Self.refusal(["--config", config.path])
        #expect(fromFile.contains("a TLS key without its certificate"), "\(fromFile)")
        #expect(fromFile.contains("\"tlsCertificate\""), "\(fromFile)")

        let notAString = certificates.folder.appendingPathComponent("bad.json")
        try #"{"tlsCertificate": 7, "tlsKey": "k.pem"}"#.write(to: notAString, atomically: true, encoding: .utf8)
        let typed = try await Self.refusal(["--config", notAString.path])
        #expect(typed.contains("'tlsCertificate' must be a string"), "\(typed)")
    }

    @Test("a certificate or key file that is missing or does not load is refused naming the file")
    func filesThatDoNotLoad() async throws {
        let certificates = try await ThrowawayCertificates.make()
        defer { certificates.remove() }
        let missing = "/nonexistent/server.pem"
        let noCertificate = try await Self.refusal(["--tls-certificate", missing, "--tls-key", certificates.serverKey])
        #expect(noCertificate.contains("cannot load the TLS certificate file \(missing)"), "\(noCertificate)")

        let missingKey = "/nonexistent/server.key"
        let noKey = try await Self.refusal(["--tls-certificate", certificates.serverCertificate, "--tls-key", missingKey])
        #expect(noKey.contains("cannot load the TLS key file \(missingKey)"), "\(noKey)")

        // The certificate given as the key: a file that is there but holds no key.
        let wrongKey = try await Self.refusal(["--tls-certificate", certificates.serverCertificate,
                                               "--tls-key", certificates.serverCertificate])
        #expect(wrongKey.contains("cannot load the TLS key file \(certificates.serverCertificate)"), "\(wrongKey)")

        let garbage = certificates.folder.appendingPathComponent("garbage.pem")
        try "not a certificate\n".write(to: garbage, atomically: true, encoding: .utf8)
        let notACertificate = try await Self.refusal(["--tls-certificate", garbage.path, "--tls-key", certificates.serverKey])
        #expect(notACertificate.contains(garbage.path), "\(notACertificate)")

        // A key that does not belong to the certificate.
        let otherKey = certificates.folder.appendingPathComponent("other-ca.key").path
        let mismatch = try await Self.refusal(["--tls-certificate", certificates.serverCertificate, "--tls-key", otherKey])
        #expect(mismatch.contains(otherKey), "\(mismatch)")
    }
}
