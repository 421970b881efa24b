// `coffer-swift-bench live`: Coffer's Swift observers against GRDB's
// ValueObservation on the same data, in the same run. Two figures per
// engine, each over N single-row commits to a table of 1,000 rows:
//
// - commit → callback: from the end of a write transaction's body, on the
//   committing thread, to the observer's callback on its own queue (median,
//   90th and 99th percentile);
// - refresh: the work that brings a 1,000-row observed result up to date
//   after one change (Coffer: `refresh()` of an observing database with
//   autorefresh off, which moves to the new version, computes the change set
//   and calls the observer; GRDB: the observation's fetch of the region,
//   timed inside its tracking closure).
//
// Both engines commit at the same durability (`--durability`): `full`, a
// commit that returned survives a system crash (Coffer's default; SQLite's
// synchronous=FULL), or `normal` (Coffer's `.normal`; SQLite's NORMAL, which
// in WAL mode flushes at checkpoints only, where Coffer still flushes each
// commit's data pages). GRDB's DatabasePool sets NORMAL on its own, so the
// level is set on the pool's writer after opening and read back.
//
// Every commit must reach its observer, or the run fails.

import Foundation

/// How much a commit survives, the same for both engines.
enum LiveDurability: String {
    case full, normal
}

/// The command line of `coffer-swift-bench live`.
struct LiveOptions {
    var durability = LiveDurability.full
    var rows = 1_000
    var commits = 300
    var workdir = "."
    var json: String?
    var machine = ""

    static let usage = "usage: coffer-swift-bench live [--durability full|normal] [--rows N] [--commits N] [--workdir DIR] [--json PATH] [--machine TEXT]"

    static func parse(_ args: [String]) throws -> LiveOptions {
        var o = LiveOptions()
        var i = 0
        func value() throws -> String {
            guard i + 1 < args.count else { throw Options.Invalid(description: "\(args[i]) needs a value") }
            i += 1
            return args[i]
        }
        func count(_ name: String) throws -> Int {
            let text = try value()
            guard let v = Int(text), v >= 2 else { throw Options.Invalid(description: "\(name) must be an integer of at least 2, not '\(text)'") }
            return v
        }
        while i < args.count {
            switch args[i] {
            case "--durability":
                let text = try value()
                guard let level = LiveDurability(rawValue: text) else {
                    throw Options.Invalid(description: "--durability must be 'full' or 'normal', not '\(text)'")
                }
                o.durability = level
            case "--rows": o.rows = try count("--rows")
            case "--commits": o.commits = try count("--commits")
            case "--workdir": o.workdir = try value()
            case "--json": o.json = try value()
            case "--machine": o.machine = try value()
            default: throw Options.Invalid(description: "unknown option '\(args[i])'")
            }
            i += 1
        }
        return o
    }
}

/// One engine's side of the live benchmark, on a fresh directory.
protocol LiveEngine {
    static var key: String { get }
    init(directory: URL, rows: Int, durability: LiveDurability) throws
    /// Seconds from each commit's end to its callback, `commits` of them.
    func commitToCallback(commits: Int) throws -> [Double]
    /// Seconds each observed result took to catch up with one commit.
    func refreshAfterOneChange(commits: Int) throws -> [Double]
}

/// The value of row `id` after commit `n`, so that each commit changes one row.
func liveValue(_ n: Int) -> Int { n + 1 }

/// Waits for `semaphore`, or fails naming the commit that never reached its observer.
func awaitCallback(_ semaphore: DispatchSemaphore, _ engine: String, commit: Int) throws {
    guard semaphore.wait(timeout: .now() + 30) == .success else {
        throw BenchFailure("\(engine): commit \(commit) never reached its observer")
    }
}

/// Median, 90th and 99th percentile of `samples`, in microseconds.
struct LiveFigure {
    let median: Double
    let p90: Double
    let p99: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        func percentile(_ fraction: Double) -> Double {
            sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)] * 1e6
        }
        median = sorted[sorted.count / 2] * 1e6
        p90 = percentile(0.90)
        p99 = percentile(0.99)
    }
}

/// Runs both engines and prints the table; the JSON too with `--json`.
func runLive(_ arguments: [String]) -> Int32 {
    do {
        var options = try LiveOptions.parse(arguments)
        if options.machine.isEmpty { options.machine = describeMachine() }
        let engines: [any LiveEngine.Type] = [CofferLiveEngine.self, GRDBLiveEngine.self]
        let loadBefore = loadAverage()
        var figures: [String: (latency: LiveFigure, refresh: LiveFigure)] = [:]
        let root = URL(fileURLWithPath: options.workdir).appendingPathComponent("swift-live-bench-data")
        for type in engines {
            let dir = root.appendingPathComponent(type.key)
            try? FileManager.default.removeItem(at: dir)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            FileHandle.standardError.write(Data("live: \(type.key)\n".utf8))
            let engine = try type.init(directory: dir, rows: options.rows, durability: options.durability)
            let latency = LiveFigure(try engine.commitToCallback(commits: options.commits))
            let refresh = LiveFigure(try engine.refreshAfterOneChange(commits: options.commits))
            figures[type.key] = (latency, refresh)
        }
        try? FileManager.default.removeItem(at: root)
        let report = LiveReport(options: options, loadBefore: loadBefore, loadAfter: loadAverage(),
                                coffer: figures[CofferLiveEngine.key]!, grdb: figures[GRDBLiveEngine.key]!)
        print(report.table)
        if let path = options.json {
            try report.json.write(toFile: path, atomically: true, encoding: .utf8)
            print("wrote \(path)")
        }
        return 0
    } catch let error as Options.Invalid {
        FileHandle.standardError.write(Data("coffer-swift-bench: \(error.description)\n\(LiveOptions.usage)\n".utf8))
        return 2
    } catch {
        FileHandle.standardError.write(Data("coffer-swift-bench live: \(error)\n".utf8))
        return 1
    }
}

/// The figures of one run, as a table and as JSON.
struct LiveReport {
    let options: LiveOptions
    let loadBefore: Double
    let loadAfter: Double
    let coffer: (latency: LiveFigure, refresh: LiveFigure)
    let grdb: (latency: LiveFigure, refresh: LiveFigure)

    /// GRDB's time over Coffer's: above 1, Coffer is faster.
    private var rows: [(key: String, title: String, coffer: Double, grdb: Double)] {
        [("latency_median_us", "commit → callback, median", coffer.latency.median, grdb.latency.median),
         ("latency_p90_us", "commit → callback, p90", coffer.latency.p90, grdb.latency.p90),
         ("latency_p99_us", "commit → callback, p99", coffer.latency.p99, grdb.latency.p99),
         ("refresh_median_us", "refresh \(options.rows) rows after 1 change, median", coffer.refresh.median, grdb.refresh.median),
         ("refresh_p99_us", "refresh \(options.rows) rows after 1 change, p99", coffer.refresh.p99, grdb.refresh.p99)]
    }

    var table: String {
        var lines = ["Live data: \(options.commits) single-row commits to \(options.rows) observed rows, durability \(options.durability.rawValue) (µs; ratio = GRDB / Coffer)",
                     "machine: \(options.machine); load average \(loadBefore) before, \(loadAfter) after",
                     pad("", 46) + pad("Coffer", 12, right: true) + pad("GRDB", 12, right: true) + pad("ratio", 9, right: true)]
        for row in rows {
            lines.append(pad(row.title, 46) + pad(String(format: "%.1f", row.coffer), 12, right: true)
                         + pad(String(format: "%.1f", row.grdb), 12, right: true)
                         + pad(String(format: "%.2fx", row.grdb / row.coffer), 9, right: true))
        }
        return lines.joined(separator: "\n")
    }

    var json: String {
        func quoted(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        func figures(_ pick: (Double, Double) -> Double) -> String {
            "{ " + rows.map { "\(quoted($0.key)): \(String(format: "%.2f", pick($0.coffer, $0.grdb)))" }.joined(separator: ", ") + " }"
        }
        let lines = [
            "\"benchmark\": \"coffer-swift-bench live\"",
            "\"date\": \(quoted(ISO8601DateFormatter().string(from: Date())))",
            "\"machine\": \(quoted(options.machine))",
            "\"load_average\": { \"before\": \(loadBefore), \"after\": \(loadAfter) }",
            "\"durability\": \(quoted(options.durability.rawValue))",
            "\"rows\": \(options.rows)",
            "\"commits\": \(options.commits)",
            "\"coffer\": " + figures { coffer, _ in coffer },
            "\"grdb\": " + figures { _, grdb in grdb },
            "\"ratios_grdb_over_coffer\": " + figures { coffer, grdb in grdb / coffer },
        ]
        return "{\n  " + lines.joined(separator: ",\n  ") + "\n}\n"
    }
}

/// `text` padded with spaces to `width` characters, on the left when `right`.
private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - text.count))
    return right ? fill + text : text + fill
}
