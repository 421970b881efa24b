// Parses a PostgreSQL connection URL into what PostgresNIO needs:
// postgres://user[:password]@host[:port]/database. TLS is not spoken yet, so
// any sslmode other than "disable" is refused rather than silently ignored.
import Foundation
import PostgresNIO

/// A PostgreSQL connection URL.
struct PostgresURL: Equatable, CustomStringConvertible {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String

    init(_ text: String) throws {
        guard let parts = URLComponents(string: text), let scheme = parts.scheme,
              scheme == "postgres" || scheme == "postgresql" else {
            throw ConfigurationError("PostgreSQL URL '\(Self.redacted(text))' must start with postgres://")
        }
        guard let host = parts.host, !host.isEmpty else {
            throw ConfigurationError("PostgreSQL URL '\(Self.redacted(text))' names no host")
        }
        guard let user = parts.user, !user.isEmpty else {
            throw ConfigurationError("PostgreSQL URL '\(Self.redacted(text))' names no user")
        }
        let database = String(parts.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else {
            throw ConfigurationError("PostgreSQL URL '\(Self.redacted(text))' names no database")
        }
        for item in parts.queryItems ?? [] {
            guard item.name == "sslmode", item.value == "disable" else {
                throw ConfigurationError("PostgreSQL URL parameter '\(item.name)=\(item.value ?? "")' is not supported (only sslmode=disable)")
            }
        }
        self.host = host
        self.port = parts.port ?? 5432
        self.user = user
        self.password = parts.password
        self.database = database
    }

    /// The URL without its password, for messages.
    var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    static func redacted(_ text: String) -> String {
        guard var parts = URLComponents(string: text), parts.password != nil else { return text }
        parts.password = "***"
        return parts.string ?? text
    }

    var clientConfiguration: PostgresClient.Configuration {
        PostgresClient.Configuration(host: host, port: port, username: user, password: password,
                                     database: database, tls: .disable)
    }

    var connectionConfiguration: PostgresConnection.Configuration {
        PostgresConnection.Configuration(host: host, port: port, username: user, password: password,
                                         database: database, tls: .disable)
    }
}
