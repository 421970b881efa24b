// Runs a command's work with a PostgresClient whose connection pool is
// running, and shuts the pool down afterwards: the one place the commands
// open PostgreSQL.
import Logging
import PostgresNIO

enum PostgresSession {
    static func with<T: Sendable>(_ url: PostgresURL, logger: Logger,
                                  _ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        // The pool's own chatter (such as a lease racing its start) stays below errors.
        var background = logger
        background.logLevel = ProcessInfoLogLevel.level ?? .error
        let client = PostgresClient(configuration: url.clientConfiguration, backgroundLogger: background)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            do {
                return try await body(client)
            } catch {
                throw StoreError.postgres(url, error)
            }
        }
    }
}

/// A logger for the commands: warnings and up unless LOG_LEVEL says otherwise.
func commandLogger(_ label: String) -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = ProcessInfoLogLevel.level ?? .warning
    return logger
}

enum ProcessInfoLogLevel {
    static var level: Logger.Level? {
        guard let text = getenv("LOG_LEVEL") else { return nil }
        return Logger.Level(rawValue: String(cString: text).lowercased())
    }
}
