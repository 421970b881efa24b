// Writing to stdout (data) and stderr (messages), and whether each is a
// terminal, which decides if progress is shown.

import Foundation

enum Output {
    static func line(_ text: String) {
        print(text)
    }

    static func write(_ text: String) {
        print(text, terminator: "")
    }

    /// Writes what print buffered, so that stdout and stderr keep their order.
    static func flush() {
        fflush(nil)
    }

    static func error(_ text: String) {
        flush()
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) != 0 }
}
