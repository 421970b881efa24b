// Progress of long work (export, import, copies) on stderr: a count and a
// rate, redrawn at most ten times a second, and only when stderr is a
// terminal, so that pipelines and logs never see it.

import Foundation

final class Progress {
    private let label: String
    private let total: UInt64?
    private let enabled: Bool
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false

    init(_ label: String, total: UInt64? = nil, enabled: Bool = Output.stderrIsTerminal) {
        self.label = label
        self.total = total
        self.enabled = enabled
    }

    /// Reports that `done` items are finished.
    func update(_ done: UInt64) {
        guard enabled else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = now
        let elapsed = max(now.timeIntervalSince(start), 0.001)
        let rate = Int(Double(done) / elapsed)
        let of = total.map { " of \($0)" } ?? ""
        FileHandle.standardError.write(Data("\r\(label): \(done)\(of) objects (\(rate)/s)\u{1B}[K".utf8))
        drawn = true
    }

    /// Clears the progress line.
    func finish() {
        guard enabled, drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}

/// Text written to a file or stdout in large chunks.
final class TextSink {
    private let handle: FileHandle
    private var buffer = ""

    init(path: String?) throws {
        guard let path else {
            handle = FileHandle.standardOutput
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
            throw CLIError("cannot write \(path)")
        }
        handle = h
    }

    func line(_ text: String) {
        buffer += text
        buffer += "\n"
        if buffer.utf8.count >= 1 << 16 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        handle.write(Data(buffer.utf8))
        buffer = ""
    }
}
