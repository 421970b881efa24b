// `coffer shell FILE`: an interactive prompt over one open file. A line is
// a query (CLASS, then an optional RQL query) or a dot-command: the shell's
// own (.help, .format, .limit, .classes, .quit) or any `coffer` command with
// the shell's file filled in (.schema, .count Dog, .stats, .export Dog, ...).

import ArgumentParser
import Foundation

struct ShellCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Open an interactive prompt for queries and dot-commands (.help lists them).",
        discussion: """
            History is kept in $COFFER_HISTORY (default ~/.coffer_history); tab completes class \
            names, property names and dot-commands.
            """)

    @OptionGroup var options: FileOptions

    func run() throws {
        let session = ShellSession(db: try options.open(), options: options)
        session.loop()
    }
}

final class ShellSession {
    private let db: Database
    private let options: FileOptions
    private var format: OutputFormat = .table
    private var limit: Int?
    private lazy var editor = LineEditor(historyFile: ShellSession.historyPath()) { [unowned self] before, word in
        self.completions(before: before, word: word)
    }

    static let ownCommands = ["help", "format", "limit", "classes", "quit", "exit"]

    init(db: Database, options: FileOptions) {
        self.db = db
        self.options = options
    }

    static func historyPath() -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["COFFER_HISTORY"] { return path.isEmpty ? nil : path }
        return environment["HOME"].map { $0 + "/.coffer_history" }
    }

    func loop() {
        if Output.stdinIsTerminal {
            Output.line("coffer \(cofferLibraryVersion()) shell on \(db.path); .help for help, .quit to leave")
        }
        editor.session {
            while let line = editor.readLine(prompt: "coffer> ") {
                editor.remember(line)
                if !execute(line) { break }
            }
        }
    }

    /// Runs one line; false when the shell should end.
    func execute(_ line: String) -> Bool {
        let text = line.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, !text.hasPrefix("--") else { return true }
        do {
            if text.hasPrefix(".") { return try dotCommand(String(text.dropFirst())) }
            try query(text)
        } catch let error as CLIError {
            Output.error("error: \(error.message)")
        } catch {
            Output.error("error: \(error)")
        }
        Output.flush()
        return true
    }

    private func query(_ text: String) throws {
        let className = String(text.prefix { !$0.isWhitespace })
        var rest = text.dropFirst(className.count).trimmingCharacters(in: .whitespaces)
        // A bare class lists its objects; a bare SORT, DISTINCT or LIMIT
        // applies to all of them.
        let upper = rest.uppercased()
        if rest.isEmpty || ["SORT", "DISTINCT", "LIMIT"].contains(where: { upper.hasPrefix($0) }) {
            rest = "TRUEPREDICATE " + rest
        }
        Output.write(try QueryCommand.run(db, className: className, query: rest, format: format, limit: limit))
    }

    private func dotCommand(_ text: String) throws -> Bool {
        let words = try ShellWords.split(text)
        guard let name = words.first else { return true }
        let args = Array(words.dropFirst())
        switch name {
        case "quit", "exit": return false
        case "help": Output.write(help)
        case "classes": Output.line(db.schema.classes.map(\.name).joined(separator: "\n"))
        case "format":
            guard let f = args.first.flatMap(OutputFormat.init(rawValue:)) else {
                throw CLIError("usage: .format table|json|jsonl|csv (now \(format.rawValue))")
            }
            format = f
        case "limit":
            guard let value = args.first, value == "off" || Int(value).map({ $0 >= 0 }) == true else {
                throw CLIError("usage: .limit N|off (now \(limit.map(String.init) ?? "off"))")
            }
            limit = Int(value)
        case "shell": throw CLIError("already in the shell")
        case _ where CommandRegistry.names.contains(name):
            // Any command of the tool, on this shell's file.
            var line = [name, db.path] + args
            if let keyFile = options.keyFile { line += ["--key-file", keyFile] }
            _ = Entry.run(line)
        default:
            throw CLIError("unknown command .\(name); .help lists them")
        }
        return true
    }

    private var help: String {
        let commands = CommandRegistry.names.filter { $0 != "shell" }.map { "." + $0 }.joined(separator: " ")
        return """
            CLASS [QUERY]        run a query, e.g.  Dog age > 3 SORT(name ASC) LIMIT(5)
                                 (CLASS alone lists every object; CLASS SORT(...) sorts them)
            .format FMT          output format: table, json, jsonl or csv
            .limit N|off         print at most N objects of each query
            .classes             list the classes
            \(commands)
                                 the coffer commands on this file (e.g. .count Dog, .schema --json)
            .help                this text
            .quit                leave (also ^D)

            """
    }

    /// Candidates for tab completion: dot-commands, then class names, then
    /// the class's property names.
    func completions(before: String, word: String) -> [String] {
        let words = before.split(separator: " ").map(String.init)
        let classes = db.schema.classes.map(\.name)
        if words.isEmpty {
            return classes + (CommandRegistry.names + ShellSession.ownCommands).map { "." + $0 }
        }
        if words[0].hasPrefix(".") {
            return words[0] == ".format" ? OutputFormat.allCases.map(\.rawValue) : classes
        }
        guard var cls = db.schema.named(words[0]) else { return [] }
        // A key path through links: "owner.na" completes from owner's class.
        var path = word.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        path.removeLast()
        for step in path {
            guard let i = cls.property(named: step), let target = cls.properties[i].objectClass,
                  let next = db.schema.named(target) else { return [] }
            cls = next
        }
        let prefix = path.map { $0 + "." }.joined()
        let keywords = path.isEmpty ? ["AND", "OR", "NOT", "SORT(", "DISTINCT(", "LIMIT(", "ASC", "DESC", "TRUEPREDICATE"] : []
        return cls.properties.map { prefix + $0.name } + keywords
    }
}

/// Splits a dot-command into words: white space separates, single and
/// double quotes group, a backslash escapes the next character.
enum ShellWords {
    static func split(_ text: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for c in text {
            if escaped {
                current.append(c)
                escaped = false
            } else if c == "\\" && quote != "'" {
                escaped = true
                inWord = true
            } else if let q = quote {
                if c == q { quote = nil } else { current.append(c) }
            } else if c == "'" || c == "\"" {
                quote = c
                inWord = true
            } else if c.isWhitespace {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(c)
                inWord = true
            }
        }
        if quote != nil { throw CLIError("unterminated quote") }
        if inWord { words.append(current) }
        return words
    }
}
