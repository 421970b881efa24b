// `coffer-sync`: the sync service's command line. `migrate` creates or
// upgrades the PostgreSQL schema, `serve` runs the WebSocket endpoint,
// `dump` prints a partition's merged state (docs/SYNC.md, "The service").
import ArgumentParser

@main
struct CofferSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer-sync",
        abstract: "Coffer's sync service: replicates Coffer files through PostgreSQL.",
        subcommands: [MigrateCommand.self, ServeCommand.self, DumpCommand.self]
    )
}
