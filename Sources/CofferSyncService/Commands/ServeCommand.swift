// `coffer-sync serve`: the WebSocket endpoint /sync/v1, the authentication
// endpoints /auth/v1/* (and GET /health), over TLS when given a certificate
// and key,
// with the PostgreSQL pool and the notification hub running beside it. It
// refuses to start on a database whose schema version is not its own.
import ArgumentParser
import CofferSyncProtocol
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOSSL
import PostgresNIO

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve sync clients over WebSocket at ws://HOST:PORT/sync/v1 (wss:// with --tls-certificate and --tls-key).")

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "HOST:PORT to listen on (port 0 picks a free one); or COFFER_SYNC_LISTEN. Default 127.0.0.1:7800.")
    var listen: String?

    @OptionGroup var tls: TLSOptions

    func run() async throws {
        let settings = try ServiceConfiguration.resolve(options: connection, listen: listen, tls: tls)
        let tlsConfiguration = try settings.tls.map(Self.serverTLS)
        let logger: Logger = {
            var logger = Logger(label: "coffer-sync")
            logger.logLevel = ProcessInfoLogLevel.level ?? .info
            return logger
        }()
        let postgres = PostgresClient(configuration: settings.postgres.clientConfiguration, backgroundLogger: logger)
        let hub = NotificationHub()
        let store = SyncStore(client: postgres, logger: logger)
        let limiter = SessionLimiter(limit: settings.maxSessions)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await postgres.run() }
            do {
                try await SchemaMigrations.check(client: postgres, logger: logger)
            } catch {
                group.cancelAll()
                throw StoreError.postgres(settings.postgres, error)
            }
            let authenticator: Authenticator?
            if let auth = settings.auth {
                authenticator = try await Authenticator(settings: auth, users: UserStore(client: postgres, logger: logger),
                                                        rolesClaim: settings.rules?.rolesClaim)
                logger.info("authentication: providers \(auth.providerNames.joined(separator: ", ")); access tokens live \(auth.accessTokenLifetime) s, refresh tokens \(auth.refreshTokenLifetime) s")
            } else {
                authenticator = nil
                logger.warning("development mode: any client id is accepted and tokens are not checked")
            }
            let accessTokens = authenticator?.accessTokens
            if let rules = settings.rules {
                logger.info("permissions: rules for \(rules.classes.count) classes (\(rules.classes.keys.sorted().joined(separator: ", "))), others read \(rules.fallback.read.text), write \(rules.fallback.write.text)")
            }
            group.addTask { await hub.run(url: settings.postgres, logger: logger) }
            let router = Router()
            router.get("/health") { _, _ in "ok" }
            AuthRoutes.add(to: router, authenticator: authenticator, logger: logger)
            let sessionLogger = logger
            let webSocket: HTTPServerBuilder = .http1WebSocketUpgrade(
                configuration: .init(ws: .init(maxFrameSize: WireLimits.maxFrameBytes,
                                               autoPing: .enabled(timePeriod: .milliseconds(Int64(settings.pingPeriod * 1000)))))
            ) { request, _, _ in
                guard request.path?.split(separator: "?").first == "/sync/v1" else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in
                    await SyncSession(store: store, hub: hub, limiter: limiter, accessTokens: accessTokens,
                                      rules: settings.rules, logger: sessionLogger,
                                      maxOfflineTime: settings.maxOfflineTime)
                        .run(inbound: inbound, outbound: outbound)
                }
            }
            let server: HTTPServerBuilder
            if let tlsConfiguration {
                server = try .tls(webSocket, tlsConfiguration: tlsConfiguration)
            } else {
                server = webSocket
            }
            let app = Application(
                router: router,
                server: server,
                configuration: .init(address: .hostname(settings.listenHost, port: settings.listenPort),
                                     serverName: "coffer-sync"),
                onServerRunning: { channel in
                    // Tests and scripts read the bound port from this line.
                    let port = channel.localAddress?.port ?? settings.listenPort
                    ListeningLine.write("coffer-sync listening on \(settings.listenHost):\(port)\n")
                },
                logger: logger
            )
            group.addTask { try await app.runService() }
            // The server ends on SIGTERM/SIGINT (runService handles them); the rest follow.
            try await group.next()
            group.cancelAll()
        }
    }
}

extension ServeCommand {
    /// The server's TLS configuration from its PEM files; the error names the
    /// file that does not load.
    static func serverTLS(_ files: ServiceConfiguration.TLSFiles) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(files.certificate)
        } catch {
            throw ConfigurationError("cannot load the TLS certificate file \(files.certificate): \(error)")
        }
        guard !chain.isEmpty else { throw ConfigurationError("the TLS certificate file \(files.certificate) holds no certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: files.key, format: .pem)
        } catch {
            throw ConfigurationError("cannot load the TLS key file \(files.key): \(error)")
        }
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) },
                                                                     privateKey: .privateKey(key))
        // Made once here so that a key that does not match the certificate is
        // refused at start, not at the first connection.
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ConfigurationError("cannot use the TLS key file \(files.key) with the certificate file \(files.certificate) (does the key belong to the certificate?): \(error)")
        }
        return configuration
    }
}

/// Writes the listening line straight to standard output, unbuffered, so a
/// process reading the pipe sees it at once.
enum ListeningLine {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Foundation.write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}
