// The one error type of the command-line tool: a message for stderr and the
// exit status it ends the process with (1 for data and query errors, 2 for
// usage errors), and the bridge from the C core's status and last error.

import CCoffer

/// An error the tool reports on stderr before exiting with `exitCode`.
struct CLIError: Error, CustomStringConvertible {
    /// Exit statuses, as README.md documents them.
    static let dataFailure: Int32 = 1
    static let usageFailure: Int32 = 2

    let message: String
    let exitCode: Int32

    init(_ message: String, exitCode: Int32 = CLIError.dataFailure) {
        self.message = message
        self.exitCode = exitCode
    }

    static func usage(_ message: String) -> CLIError {
        CLIError(message, exitCode: usageFailure)
    }

    var description: String { message }
}

/// The C core's message for its last error on this thread.
func lastCofferError() -> String {
    String(cString: coffer_last_error())
}

/// Throws a ``CLIError`` carrying the core's message when `status` is not OK;
/// `context` (e.g. "line 3") is put in front of it.
func check(_ status: coffer_status, _ context: @autoclosure () -> String = "") throws {
    guard status != COFFER_OK else { return }
    let message = lastCofferError()
    let text = message.isEmpty ? String(cString: coffer_strerror(status)) : message
    let prefix = context()
    throw CLIError(prefix.isEmpty ? text : "\(prefix): \(text)")
}
