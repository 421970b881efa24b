// The swift-todo example run as its users run it: one process watches the
// file and redraws its list when other processes add and finish to-dos.

import Foundation
import Testing

@Suite("swift-todo example")
struct SwiftTodoTests {
    /// The swift-todo program SwiftPM built next to this test bundle.
    static let program: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("swift-todo").path),
              directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("swift-todo")
    }()

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swift-todo-\(UUID().uuidString)")
    var file: String { directory.appendingPathComponent("todo.coffer").path }

    init() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Runs swift-todo with `arguments` and waits for it; its exit status and error output.
    @discardableResult
    func run(_ arguments: String...) throws -> (status: Int32, errors: String) {
        let process = Process()
        process.executableURL = Self.program
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    /// Waits until `output` holds `text` or `process` ended, for at most a minute.
    func wait(for text: String, in output: URL, of process: Process) -> String {
        let deadline = Date().addingTimeInterval(60)
        var seen = ""
        while Date() < deadline {
            seen = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if seen.contains(text) || !process.isRunning { break }
            usleep(20_000)
        }
        return seen
    }

    @Test func theWatcherRedrawsWhenAnotherProcessChangesTheFile() throws {
        try run("add", file, "Milk")
        let output = directory.appendingPathComponent("watch.txt")
        #expect(FileManager.default.createFile(atPath: output.path, contents: nil))
        let watcher = Process()
        watcher.executableURL = Self.program
        watcher.arguments = ["watch", file, "--renders", "3"]
        watcher.standardOutput = try FileHandle(forWritingTo: output)
        try watcher.run()
        defer { if watcher.isRunning { watcher.terminate() } }

        #expect(wait(for: "--- render 1", in: output, of: watcher).contains("1. Milk"))
        try run("add", file, "Bread")
        #expect(wait(for: "--- render 2", in: output, of: watcher).contains("--- render 2: 2 to do\n1. Milk\n2. Bread\n"))
        try run("done", file, "Milk")
        let screen = wait(for: "--- render 3", in: output, of: watcher)
        #expect(screen.hasSuffix("--- render 3: 1 to do\n1. Bread\n"))
        watcher.waitUntilExit()
        #expect(watcher.terminationStatus == 0)
    }

    @Test func aMissingToDoOrAWrongCommandFails() throws {
        try run("add", file, "Milk")
        let missing = try run("done", file, "Tea")
        #expect(missing.status == 1)
        #expect(missing.errors.contains("no open to-do \"Tea\""))
        #expect(try run("juggle", file).status == 2)
    }
}
