// Where the service's settings come from: a command-line option wins, then the
// environment (COFFER_SYNC_POSTGRES, COFFER_SYNC_LISTEN, COFFER_SYNC_CONFIG,
// COFFER_SYNC_SIGNING_SECRET), then the JSON configuration file, then the
// built-in default.
import ArgumentParser
import Foundation

/// Options every command shares.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "PostgreSQL URL (postgres://user[:password]@host[:port]/database); or COFFER_SYNC_POSTGRES.")
    var postgres: String?

    @Option(help: "A JSON configuration file with \"postgres\", \"listen\", \"maxSessions\", \"pingPeriod\", \"maxOfflineTime\", \"tlsCertificate\", \"tlsKey\", \"auth\" and \"rules\"; or COFFER_SYNC_CONFIG.")
    var config: String?
}

/// `serve`'s TLS options: both files, or neither.
struct TLSOptions: ParsableArguments {
    @Option(name: .customLong("tls-certificate"),
            help: "A PEM file with the server's certificate chain: serve wss:// (with --tls-key); or COFFER_SYNC_TLS_CERTIFICATE.")
    var certificate: String?

    @Option(name: .customLong("tls-key"), help: "The PEM file of the certificate's private key; or COFFER_SYNC_TLS_KEY.")
    var key: String?
}

/// The settings after resolution.
struct ServiceConfiguration: Equatable {
    static let defaultListen = "127.0.0.1:7800"
    static let defaultMaxSessions = 10_000
    static let defaultPingPeriod = 30.0

    var postgres: PostgresURL
    var listenHost: String
    var listenPort: Int
    var maxSessions: Int
    /// Seconds between the pings the service sends each connection; a
    /// connection whose pong has not come by the next ping is closed.
    var pingPeriod: Double = defaultPingPeriod
    /// Users and authentication; nil: development mode (any client, tokens not checked).
    var auth: AuthSettings?
    /// The PEM files of the server's certificate chain and key: TLS (wss://); nil: ws://.
    var tls: TLSFiles?
    /// Per-class read and write rules; nil: every client may read and write everything.
    var rules: PermissionRules?
    /// Seconds a client may stay away: one that missed a change older than
    /// this gets CLIENT_RESET at HELLO; nil: no limit.
    var maxOfflineTime: Double? = nil

    struct TLSFiles: Equatable {
        var certificate: String
        var key: String
    }

    /// Resolves the settings; `environment` is the process environment in use.
    static func resolve(options: ConnectionOptions, listen: String?, tls: TLSOptions? = nil,
                        environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ServiceConfiguration {
        let file = try ConfigFile.load(path: options.config ?? environment["COFFER_SYNC_CONFIG"],
                                       signingSecret: environment["COFFER_SYNC_SIGNING_SECRET"])
        guard let url = options.postgres ?? environment["COFFER_SYNC_POSTGRES"] ?? file.postgres else {
            throw ConfigurationError("no PostgreSQL URL: pass --postgres, set COFFER_SYNC_POSTGRES or put \"postgres\" in the configuration file")
        }
        let address = listen ?? environment["COFFER_SYNC_LISTEN"] ?? file.listen ?? defaultListen
        let (host, port) = try parseListen(address)
        if let rules = file.rules {
            guard let auth = file.auth else {
                throw ConfigurationError("'rules' needs an 'auth' section: without authentication clients have no user to check rules for")
            }
            if rules.rolesClaim != nil && auth.jwt == nil {
                throw ConfigurationError("'rules.rolesClaim' names a claim of custom JWTs, but 'auth.jwt' is not configured")
            }
        }
        let maxSessions = file.maxSessions ?? defaultMaxSessions
        guard maxSessions > 0 else { throw ConfigurationError("maxSessions must be at least 1, not \(maxSessions)") }
        let pingText = environment["COFFER_SYNC_PING_PERIOD"]
        let pingPeriod = try pingText.map { text in
            guard let seconds = Double(text) else {
                throw ConfigurationError("COFFER_SYNC_PING_PERIOD must be a number of seconds, not '\(text)'")
            }
            return seconds
        } ?? file.pingPeriod ?? defaultPingPeriod
        guard pingPeriod.isFinite, pingPeriod >= 0.1 else {
            throw ConfigurationError("pingPeriod must be at least 0.1 seconds, not \(pingPeriod)")
        }
        let offlineText = environment["COFFER_SYNC_MAX_OFFLINE_TIME"]
        let maxOfflineTime = try offlineText.map { text in
            guard let seconds = Double(text) else {
                throw ConfigurationError("COFFER_SYNC_MAX_OFFLINE_TIME must be a number of seconds, not '\(text)'")
            }
            return seconds
        } ?? file.maxOfflineTime
        if let maxOfflineTime, !(maxOfflineTime.isFinite && maxOfflineTime > 0) {
            throw ConfigurationError("maxOfflineTime must be a positive number of seconds, not \(maxOfflineTime)")
        }
        let certificate = tls?.certificate ?? environment["COFFER_SYNC_TLS_CERTIFICATE"] ?? file.tlsCertificate
        let key = tls?.key ?? environment["COFFER_SYNC_TLS_KEY"] ?? file.tlsKey
        let files: TLSFiles?
        switch (certificate, key) {
        case let (certificate?, key?): files = TLSFiles(certificate: certificate, key: key)
        case (nil, nil): files = nil
        case (_?, nil):
            throw ConfigurationError("a TLS certificate without its key: pass --tls-key, set COFFER_SYNC_TLS_KEY or put \"tlsKey\" in the configuration file")
        case (nil, _?):
            throw ConfigurationError("a TLS key without its certificate: pass --tls-certificate, set COFFER_SYNC_TLS_CERTIFICATE or put \"tlsCertificate\" in the configuration file")
        }
        return ServiceConfiguration(postgres: try PostgresURL(url), listenHost: host, listenPort: port,
                                    maxSessions: maxSessions, pingPeriod: pingPeriod, auth: file.auth, tls: files,
                                    rules: file.rules, maxOfflineTime: maxOfflineTime)
    }

    /// "HOST:PORT" (an IPv6 host in brackets: "[::1]:7800"); port 0 picks a free one.
    static func parseListen(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw ConfigurationError("listen address '\(text)' is not HOST:PORT")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ConfigurationError("listen address '\(text)' is not HOST:PORT with a port from 0 to 65535")
        }
        return (host, port)
    }
}

/// A setting that is missing or malformed; the message names it.
struct ConfigurationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The configuration file: a JSON object whose keys are the settings.
struct ConfigFile {
    var postgres: String?
    var listen: String?
    var maxSessions: Int?
    var pingPeriod: Double?
    var maxOfflineTime: Double?
    var auth: AuthSettings?
    var tlsCertificate: String?
    var tlsKey: String?
    var rules: PermissionRules?

    static let keys: Set<String> = ["postgres", "listen", "maxSessions", "pingPeriod", "maxOfflineTime", "auth", "tlsCertificate", "tlsKey", "rules"]

    static func load(path: String?, signingSecret: String? = nil) throws -> ConfigFile {
        guard let path else { return ConfigFile() }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ConfigurationError("cannot read configuration file \(path): \(error.localizedDescription)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ConfigurationError("configuration file \(path) is not a JSON object")
        }
        if let unknown = object.keys.filter({ !keys.contains($0) }).sorted().first {
            throw ConfigurationError("configuration file \(path): unknown setting '\(unknown)' (known: \(keys.sorted().joined(separator: ", ")))")
        }
        var file = ConfigFile()
        for (key, value) in object {
            switch key {
            case "postgres", "listen", "tlsCertificate", "tlsKey":
                guard let text = value as? String else {
                    throw ConfigurationError("configuration file \(path): '\(key)' must be a string")
                }
                switch key {
                case "postgres": file.postgres = text
                case "listen": file.listen = text
                case "tlsCertificate": file.tlsCertificate = text
                default: file.tlsKey = text
                }
            case "auth":
                file.auth = try AuthSettings.parse(value, path: path, secretFromEnvironment: signingSecret)
            case "rules":
                do {
                    file.rules = try PermissionRules.parse(value)
                } catch let error as ConfigurationError {
                    throw ConfigurationError("configuration file \(path): \(error.description)")
                }
            case "pingPeriod", "maxOfflineTime":
                guard let seconds = value as? Double else {
                    throw ConfigurationError("configuration file \(path): '\(key)' must be a number of seconds")
                }
                if key == "pingPeriod" { file.pingPeriod = seconds } else { file.maxOfflineTime = seconds }
            default:
                guard let number = value as? Int else {
                    throw ConfigurationError("configuration file \(path): 'maxSessions' must be an integer")
                }
                file.maxSessions = number
            }
        }
        return file
    }
}
