// `coffer-sync dump`: prints a partition's merged state as JSON lines, the
// reference the convergence tests compare every client's file with.
import ArgumentParser

struct DumpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print a partition's merged state as JSON lines, one live object per line.")

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "The partition value.")
    var partition: String

    func run() async throws {
        let settings = try ServiceConfiguration.resolve(options: connection, listen: nil)
        let logger = commandLogger("coffer-sync.dump")
        let partition = self.partition
        let lines = try await PostgresSession.with(settings.postgres, logger: logger) { client in
            try await SchemaMigrations.check(client: client, logger: logger)
            return try await StateDump.load(partition: partition, client: client, logger: logger).lines()
        }
        for line in lines { print(line) }
    }
}
