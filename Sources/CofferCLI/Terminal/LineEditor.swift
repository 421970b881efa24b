// Reading lines from a terminal in raw mode: editing (left/right, home/end,
// backspace, delete, ^U, ^K, ^W), history (up/down) and tab completion.
// When stdin is not a terminal, lines are read plainly and no prompt is
// drawn, so the shell also runs scripts fed to it.

import Foundation

final class LineEditor {
    /// Candidates for the word that ends at the cursor: (line before the
    /// word, the word so far) → full words.
    typealias Completer = (_ before: String, _ word: String) -> [String]

    private let completer: Completer
    private(set) var history: [String] = []
    private let historyFile: String?
    private let interactive: Bool

    init(historyFile: String?, completer: @escaping Completer) {
        self.completer = completer
        self.historyFile = historyFile
        interactive = Output.stdinIsTerminal
        if let historyFile, let text = try? String(contentsOfFile: historyFile, encoding: .utf8) {
            history = text.split(separator: "\n").map(String.init).suffix(1000)
        }
    }

    /// Runs `body` with the terminal in raw mode (no echo, no line
    /// buffering, keys such as ^C delivered as bytes) and restores it after.
    /// The whole session stays raw, so that lines typed ahead while a command
    /// runs are neither lost nor echoed twice.
    func session(_ body: () -> Void) {
        var original = termios()
        guard interactive, tcgetattr(STDIN_FILENO, &original) == 0 else {
            body()
            return
        }
        var raw = original
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        defer { tcsetattr(STDIN_FILENO, TCSANOW, &original) }
        body()
    }

    /// The next line without its newline, or nil at end of input (^D on an
    /// empty line). Call inside ``session(_:)``.
    func readLine(prompt: String) -> String? {
        guard interactive else { return Swift.readLine(strippingNewline: true) }
        return edit(prompt: prompt)
    }

    /// Adds a line to the history (and its file).
    func remember(_ line: String) {
        guard !line.allSatisfy(\.isWhitespace), history.last != line else { return }
        history.append(line)
        guard let historyFile else { return }
        if !FileManager.default.fileExists(atPath: historyFile) {
            _ = FileManager.default.createFile(atPath: historyFile, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        if let handle = FileHandle(forWritingAtPath: historyFile) {
            handle.seekToEndOfFile()
            handle.write(Data((line + "\n").utf8))
            try? handle.close()
        }
    }

    // MARK: - Editing

    private var buffer: [Character] = []
    private var cursor = 0
    private var prompt = ""

    private func edit(prompt: String) -> String? {
        self.prompt = prompt
        buffer = []
        cursor = 0
        var historyIndex = history.count
        var lastWasTab = false
        redraw()
        while let byte = readByte() {
            let wasTab = lastWasTab
            lastWasTab = false
            switch byte {
            case 0x0D, 0x0A:  // Enter
                emit("\r\n")
                return String(buffer)
            case 0x04:  // ^D: end of input on an empty line, else delete
                if buffer.isEmpty {
                    emit("\r\n")
                    return nil
                }
                deleteForward()
            case 0x03:  // ^C: drop the line
                emit("^C\r\n")
                buffer = []
                cursor = 0
                historyIndex = history.count
            case 0x7F, 0x08:  // backspace
                if cursor > 0 {
                    cursor -= 1
                    buffer.remove(at: cursor)
                }
            case 0x01: cursor = 0  // ^A
            case 0x05: cursor = buffer.count  // ^E
            case 0x15: buffer.removeFirst(cursor); cursor = 0  // ^U
            case 0x0B: buffer.removeLast(buffer.count - cursor)  // ^K
            case 0x17:  // ^W: delete the word before the cursor
                var start = cursor
                while start > 0, buffer[start - 1] == " " { start -= 1 }
                while start > 0, buffer[start - 1] != " " { start -= 1 }
                buffer.removeSubrange(start..<cursor)
                cursor = start
            case 0x0C: emit("\u{1B}[H\u{1B}[2J")  // ^L
            case 0x09:
                complete(listing: wasTab)
                lastWasTab = true
            case 0x1B:
                switch readEscape() {
                case "A": historyIndex = recall(historyIndex - 1, from: historyIndex)
                case "B": historyIndex = recall(historyIndex + 1, from: historyIndex)
                case "C": cursor = min(cursor + 1, buffer.count)
                case "D": cursor = max(cursor - 1, 0)
                case "H": cursor = 0
                case "F": cursor = buffer.count
                case "3~": deleteForward()
                default: break
                }
            default:
                if byte >= 0x20, let c = readCharacter(startingWith: byte) {
                    buffer.insert(c, at: cursor)
                    cursor += 1
                }
            }
            redraw()
        }
        return buffer.isEmpty ? nil : String(buffer)
    }

    private func deleteForward() {
        if cursor < buffer.count { buffer.remove(at: cursor) }
    }

    /// Shows history entry `index` (history.count is the empty new line).
    private func recall(_ index: Int, from current: Int) -> Int {
        guard index >= 0, index <= history.count else { return current }
        buffer = index == history.count ? [] : Array(history[index])
        cursor = buffer.count
        return index
    }

    /// Completes the word before the cursor: the only candidate, or the
    /// longest common prefix; a second tab lists the candidates.
    private func complete(listing: Bool) {
        var start = cursor
        while start > 0, !" (,".contains(buffer[start - 1]) { start -= 1 }
        let word = String(buffer[start..<cursor])
        let candidates = completer(String(buffer[..<start]), word).filter { $0.hasPrefix(word) }
        guard !candidates.isEmpty else { return }
        if candidates.count == 1 {
            insert(String(candidates[0].dropFirst(word.count)) + " ")
            return
        }
        let common = candidates.dropFirst().reduce(candidates[0]) { String($0.commonPrefix(with: $1)) }
        if common.count > word.count {
            insert(String(common.dropFirst(word.count)))
        } else if listing {
            emit("\r\n" + candidates.sorted().joined(separator: "  ") + "\r\n")
        }
    }

    private func insert(_ text: String) {
        buffer.insert(contentsOf: Array(text), at: cursor)
        cursor += text.count
    }

    private func redraw() {
        let after = buffer.count - cursor
        emit("\r" + prompt + String(buffer) + "\u{1B}[K" + (after > 0 ? "\u{1B}[\(after)D" : ""))
    }

    private func emit(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    // MARK: - Input

    private func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let n = read(STDIN_FILENO, &byte, 1)
            if n == 1 { return byte }
            if n < 0 && errno == EINTR { continue }
            return nil
        }
    }

    /// The rest of an escape sequence after ESC: "A" for ESC [ A, "3~" for
    /// ESC [ 3 ~, "" for anything else.
    private func readEscape() -> String {
        guard let first = readByte(), first == UInt8(ascii: "[") || first == UInt8(ascii: "O") else { return "" }
        var text = ""
        while let b = readByte() {
            text.unicodeScalars.append(Unicode.Scalar(b))
            if (0x40...0x7E).contains(b) { break }
        }
        return text
    }

    /// One UTF-8 character whose first byte is `lead`.
    private func readCharacter(startingWith lead: UInt8) -> Character? {
        var bytes = [lead]
        let extra = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : 0
        for _ in 0..<extra {
            guard let b = readByte() else { break }
            bytes.append(b)
        }
        return String(validating: bytes, as: UTF8.self)?.first
    }
}
