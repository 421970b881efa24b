// The list of `coffer` commands. A new command is a ParsableCommand in
// Commands/ added here; the interactive shell offers every one of them as a
// dot-command (`.schema`, `.count`, ...) with the shell's file filled in.

import ArgumentParser
import CCoffer

enum CommandRegistry {
    static let commands: [any ParsableCommand.Type] = [
        SchemaCommand.self,
        CountCommand.self,
        QueryCommand.self,
        ExportCommand.self,
        ImportCommand.self,
        StatsCommand.self,
        VerifyCommand.self,
        CompactCommand.self,
        CopyCommand.self,
        ShellCommand.self,
    ]

    /// Command names as typed after `coffer` (and after '.' in the shell).
    static var names: [String] {
        commands.compactMap { $0.configuration.commandName }
    }
}

func cofferLibraryVersion() -> String {
    String(cString: coffer_version())
}
