// The entry point: parses the command line, runs the command, and maps every
// failure to its documented exit status (0 ok, 1 data or query error, 2
// usage error) with the message on stderr.

import ArgumentParser
import Foundation

@main
enum Entry {
    static func main() {
        exit(run(CommandLine.arguments.dropFirst().map { $0 }))
    }

    /// Runs one command line (without the program name) and returns its exit
    /// status; the shell runs its dot-commands through this too.
    static func run(_ arguments: [String]) -> Int32 {
        guard !arguments.isEmpty else {
            Output.error(CofferCommand.helpMessage())
            return CLIError.usageFailure
        }
        do {
            var command = try CofferCommand.parseAsRoot(arguments)
            try command.run()
            return 0
        } catch let error as CLIError {
            Output.error("coffer: \(error.message)")
            return error.exitCode
        } catch {
            let code = CofferCommand.exitCode(for: error)
            let message = CofferCommand.fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { Output.line(message) }
                return 0
            }
            Output.error(message)
            // Usage errors of the parser (and its own codes) are status 2.
            return code.rawValue == 0 ? 0 : CLIError.usageFailure
        }
    }
}

/// The root command: `coffer help` and `coffer CMD --help` come from here.
struct CofferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "Inspect, query, export, import and copy Coffer database files.",
        discussion: """
            Keys of encrypted files come from --key-file FILE (128 hex digits or 64 raw bytes) or \
            the COFFER_KEY environment variable (128 hex digits), never from the command line.
            Exit status: 0 success, 1 data or query error (bad file, key, class, query or \
            input line), 2 usage error (bad command line). Errors go to stderr, data to stdout.
            """,
        version: "coffer \(cofferLibraryVersion())",
        subcommands: CommandRegistry.commands
    )
}
