// Runs the built coffer-sync binary: `migrate`, `dump`, and `serve` as a
// child process on a free port (read from the line it prints once
// listening), which a test can stop or kill with -9.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

public final class ServiceProcess: @unchecked Sendable {
    public let process: Process
    public let port: Int

    /// The coffer-sync binary `swift build` made beside the test bundle.
    public static var binary: String {
        if let path = ProcessInfo.processInfo.environment["COFFER_SYNC_BINARY"] { return path }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // The runner may be inside an .xctest bundle folder.
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("coffer-sync").path),
              dir.pathComponents.count > 1 {
            dir.deleteLastPathComponent()
        }
        return dir.appendingPathComponent("coffer-sync").path
    }

    /// Runs `coffer-sync ARGS` to its end.
    public static func command(_ arguments: [String], environment: [String: String]? = nil) async throws -> Command.Result {
        try await Command.run(binary, arguments, environment: environment)
    }

    /// Migrates `postgres` (once) and starts `serve` on a free port, with
    /// `config` as its configuration file, `arguments` after its own and
    /// `environment` added to its own.
    public static func start(postgres: String, migrate: Bool = true, config: String? = nil,
                      arguments: [String] = [], environment: [String: String] = [:]) async throws -> ServiceProcess {
        if migrate {
            let result = try await command(["migrate", "--postgres", postgres])
            guard result.status == 0 else { throw TestFailure("migrate failed: \(result.stderr)") }
        }
        return try await offPool {
            try launch(postgres: postgres, config: config, arguments: arguments, environment: environment)
        }
    }

    private static func launch(postgres: String, config: String?, arguments: [String],
                               environment: [String: String]) throws -> ServiceProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--postgres", postgres, "--listen", "127.0.0.1:0"]
            + (config.map { ["--config", $0] } ?? []) + arguments
        var env = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        env["LOG_LEVEL"] = env["LOG_LEVEL"] ?? "error"
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.standardError
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The first line says where it listens; nothing else goes to stdout.
        var line = Data()
        while true {
            let byte = out.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty {
                process.waitUntilExit()
                throw TestFailure("coffer-sync serve exited (\(process.terminationStatus)) before listening")
            }
            if byte.first == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let port = text.split(separator: ":").last.flatMap({ Int($0) }) else {
            process.terminate()
            throw TestFailure("coffer-sync serve printed '\(text)', not its address")
        }
        return ServiceProcess(process: process, port: port)
    }

    private init(process: Process, port: Int) {
        self.process = process
        self.port = port
    }

    public var url: String { "ws://127.0.0.1:\(port)/sync/v1" }
    public var httpURL: String { "http://127.0.0.1:\(port)" }

    /// Stops it as an operator would (SIGTERM), without blocking the caller;
    /// if it has not exited after ten seconds it is killed.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let process = self.process
        Thread.detachNewThread {
            for _ in 0..<100 where process.isRunning { usleep(100_000) }
            if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// Kills it with -9, mid-whatever it was doing.
    public func kill() {
        if process.isRunning {
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit {
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}
