// `coffer-sync migrate`: creates or upgrades the service's PostgreSQL schema
// and says which version it found and left.
import ArgumentParser

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Create or upgrade the sync schema in PostgreSQL (refuses a newer schema).")

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let settings = try ServiceConfiguration.resolve(options: connection, listen: nil)
        let logger = commandLogger("coffer-sync.migrate")
        let (from, to) = try await PostgresSession.with(settings.postgres, logger: logger) { client in
            try await SchemaMigrations.migrate(client: client, logger: logger)
        }
        print(from == to ? "sync schema is at version \(to); nothing to do"
                         : "sync schema migrated from version \(from) to \(to)")
    }
}
