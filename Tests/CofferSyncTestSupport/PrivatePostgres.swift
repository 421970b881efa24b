// The private PostgreSQL cluster of a test run: the one scripts/postgres
// started for the whole run (COFFER_PG_URL and COFFER_PG_DIR, as
// `scripts/postgres run` exports them), or else one this process starts
// itself and that stops when the process exits. Each test gets a database
// of its own, so tests run in parallel without seeing each other.
import Foundation

public actor PrivatePostgres {
    public static let shared = PrivatePostgres()

    public struct Cluster: Sendable {
        public var url: String
        public var dir: String
    }

    private var cluster: Cluster?
    private var counter = 0

    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    public func current() async throws -> Cluster {
        if let cluster { return cluster }
        let env = ProcessInfo.processInfo.environment
        if let url = env["COFFER_PG_URL"], let dir = env["COFFER_PG_DIR"] {
            cluster = Cluster(url: url, dir: dir)
            return cluster!
        }
        cluster = try await Self.startCluster()
        return cluster!
    }

    /// A cluster of its own (for a test that restarts PostgreSQL), stopped
    /// when this process exits or by `stop`.
    public static func startCluster() async throws -> Cluster {
        let script = repositoryRoot.appendingPathComponent("scripts/postgres").path
        let result = try await Command.run(script, ["start", "--watch", String(getpid())])
        guard result.status == 0 else {
            throw TestFailure("scripts/postgres start failed: \(result.stderr)")
        }
        var values: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        guard let url = values["COFFER_PG_URL"], let dir = values["COFFER_PG_DIR"] else {
            throw TestFailure("scripts/postgres start printed no URL: \(result.stdout)")
        }
        return Cluster(url: url, dir: dir)
    }

    /// A new, empty database on the cluster; its URL.
    public func freshDatabase() async throws -> String {
        let cluster = try await current()
        counter += 1
        let name = "t\(getpid())_\(counter)"
        let result = try await Command.run("/usr/bin/env", ["psql", cluster.url, "-q", "-c", "CREATE DATABASE \(name)"])
        guard result.status == 0 else { throw TestFailure("CREATE DATABASE \(name) failed: \(result.stderr)") }
        return cluster.url.replacingOccurrences(of: "/coffer_sync", with: "/\(name)")
    }

    /// Runs SQL on a database through psql; its output (unaligned, tuples only).
    public func sql(_ url: String, _ statement: String) async throws -> String {
        let result = try await Command.run("/usr/bin/env", ["psql", url, "-q", "-At", "-c", statement])
        guard result.status == 0 else { throw TestFailure("psql failed on '\(statement)': \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Restarts a cluster (same port, same data).
    public static func restart(_ cluster: Cluster) async throws {
        let script = Self.repositoryRoot.appendingPathComponent("scripts/postgres").path
        let result = try await Command.run(script, ["restart", cluster.dir])
        guard result.status == 0 else { throw TestFailure("scripts/postgres restart failed: \(result.stderr)") }
    }

    public static func stop(_ cluster: Cluster) async {
        let script = repositoryRoot.appendingPathComponent("scripts/postgres").path
        _ = try? await Command.run(script, ["stop", cluster.dir])
    }
}

public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs a program to its end and collects what it printed, on a thread of
/// its own: a blocking wait must not hold one of the few threads that run
/// the tests' tasks.
public enum Command {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    public static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> Result {
        try await offPool { try runBlocking(path, arguments, environment: environment) }
    }

    public static func runBlocking(_ path: String, _ arguments: [String], environment: [String: String]?) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        // stderr goes to a file, so only one pipe is read and neither can fill up.
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-test-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errURL) }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderrData = (try? Data(contentsOf: errURL)) ?? Data()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
                      stderr: String(decoding: stderrData, as: UTF8.self))
    }
}

/// Runs blocking work on a thread outside Swift concurrency's pool.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try work() })
        }
    }
}
