// Running each engine in turn in fresh processes, keeping the fastest times, and
// presenting them.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The fastest run of each engine, and how to present it.
struct RunResults {
    let options: Options
    let date: String
    let loadBefore: Double
    let loadAfter: Double
    let best: [String: ChildReport]

    func rate(_ engine: String, _ op: Operation) -> Double? {
        guard let s = best[engine]?.seconds[op], s > 0 else { return nil }
        return Double(units(op)) / s
    }

    func units(_ op: Operation) -> Int { op.units(options) }

    static let ratioPairs = [("coffer", "grdb"), ("coffer_encrypted", "coffer")]

    private func ratio(_ a: String, _ b: String, _ op: Operation) -> Double? {
        guard let x = rate(a, op), let y = rate(b, op) else { return nil }
        return x / y
    }

    var table: String {
        var lines = ["\(options.machine)", "n = \(options.n), fastest of \(options.repeatCount) runs, load average \(loadBefore) before, \(loadAfter) after", ""]
        let header = ["operation"] + options.engines + RunResults.ratioPairs.map { "\($0.0)/\($0.1)" }
        lines.append(header.joined(separator: " | "))
        for op in Operation.allCases {
            let rates = options.engines.map { e in rate(e, op).map { String(format: "%.0f", $0) } ?? "-" }
            let ratios = RunResults.ratioPairs.map { p in ratio(p.0, p.1, op).map { String(format: "%.2fx", $0) } ?? "-" }
            lines.append(([op.rawValue] + rates + ratios).joined(separator: " | "))
        }
        for e in options.engines {
            let r = best[e]!
            lines.append(String(format: "%@: peak RSS %.1f MiB (harness %.1f MiB), file %.1f MiB", e,
                                Double(r.peakRSS) / 1_048_576, Double(r.harnessRSS) / 1_048_576, Double(r.fileSize) / 1_048_576))
        }
        return lines.joined(separator: "\n")
    }

    private func quoted(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    private func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\(quoted($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }

    private func perEngine(_ value: (ChildReport) -> UInt64) -> String {
        object(options.engines.map { ($0, String(value(best[$0]!))) })
    }

    /// The results file, shaped as the C harness's bench-results.json.
    var json: String {
        let ops = Operation.allCases
        let operations = ops.map { op in
            (op.rawValue, object(options.engines.compactMap { e in rate(e, op).map { (e, String(format: "%.1f", $0)) } }))
        }
        let ratios = ops.map { op in
            (op.rawValue, object(RunResults.ratioPairs.compactMap { p in
                ratio(p.0, p.1, op).map { ("\(p.0)/\(p.1)", String(format: "%.4g", $0)) } }))
        }
        var targets: [String] = []
        for op in ops {
            if let r = ratio("coffer", "grdb", op) {
                targets.append(object([("target", quoted("coffer >= 2x grdb")), ("operation", quoted(op.rawValue)),
                                       ("ratio", String(format: "%.4g", r)), ("met", r >= 2 ? "true" : "false")]))
            }
            if let r = ratio("coffer_encrypted", "coffer", op) {
                targets.append(object([("target", quoted("encrypted within 2x of plain")), ("operation", quoted(op.rawValue)),
                                       ("ratio", String(format: "%.4g", r)), ("met", r >= 0.5 ? "true" : "false")]))
            }
        }
        var lines: [String] = []
        lines.append("\"machine\": \(quoted(options.machine))")
        lines.append("\"n\": \(options.n)")
        lines.append("\"operations\": {\n    " + operations.map { "\(quoted($0.0)): \($0.1)" }.joined(separator: ",\n    ") + "\n  }")
        lines.append("\"language\": \"swift\"")
        lines.append("\"date\": \(quoted(date))")
        lines.append("\"repeat\": \(options.repeatCount)")
        lines.append("\"seed\": \(options.seed)")
        lines.append("\"verified\": true")
        lines.append("\"load_average\": " + object([("before", String(loadBefore)), ("after", String(loadAfter))]))
        lines.append("\"operation_counts\": " + object(ops.map { ($0.rawValue, String(units($0))) }))
        lines.append("\"operation_titles\": " + object(ops.map { ($0.rawValue, quoted($0.title)) }))
        lines.append("\"ratios\": {\n    " + ratios.map { "\(quoted($0.0)): \($0.1)" }.joined(separator: ",\n    ") + "\n  }")
        lines.append("\"peak_rss_bytes\": " + perEngine(\.peakRSS))
        lines.append("\"harness_rss_bytes\": " + perEngine(\.harnessRSS))
        lines.append("\"file_size_bytes\": " + perEngine(\.fileSize))
        lines.append("\"targets\": [\n    " + targets.joined(separator: ",\n    ") + "\n  ]")
        return "{\n  " + lines.joined(separator: ",\n  ") + "\n}\n"
    }
}

func loadAverage() -> Double {
    var load = [0.0]
    return getloadavg(&load, 1) == 1 ? (load[0] * 100).rounded() / 100 : -1
}

/// Runs each engine `repeat` times, in turn, each run in a fresh process and
/// an empty directory, and keeps the fastest time of each operation.
func runAll(_ options: Options) throws -> RunResults {
    let loadBefore = loadAverage()
    let formatter = ISO8601DateFormatter()
    let date = formatter.string(from: Date())
    var best: [String: ChildReport] = [:]
    let root = URL(fileURLWithPath: options.workdir).appendingPathComponent("swift-bench-data")
    for run in 1...options.repeatCount {
        for engine in options.engines {
            let dir = root.appendingPathComponent(engine)
            try? FileManager.default.removeItem(at: dir)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            FileHandle.standardError.write(Data("run \(run)/\(options.repeatCount): \(engine)\n".utf8))
            let report = try runChild(options.childArguments(engine: engine, directory: dir.path), engine: engine)
            try? FileManager.default.removeItem(at: dir)
            var kept = best[engine] ?? report
            for (op, s) in report.seconds where s < kept.seconds[op] ?? .infinity {
                kept.seconds[op] = s
            }
            kept.peakRSS = max(kept.peakRSS, report.peakRSS)
            best[engine] = kept
        }
    }
    try? FileManager.default.removeItem(at: root)
    return RunResults(options: options, date: date, loadBefore: loadBefore, loadAfter: loadAverage(), best: best)
}

private func runChild(_ arguments: [String], engine: String) throws -> ChildReport {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchFailure("\(engine) failed (exit \(process.terminationStatus)); its error is above")
    }
    return try ChildReport(json: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
}

/// CPU, CPU count, memory, kernel and OS, as the C harness describes them.
func describeMachine() -> String {
    func field(_ path: String, _ key: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            if let sep = line.firstIndex(where: { $0 == ":" || $0 == "=" }) {
                return line[line.index(after: sep)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t\""))
            }
        }
        return nil
    }
    let info = ProcessInfo.processInfo
    var u = utsname()
    uname(&u)
    let release = withUnsafeBytes(of: &u.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return String(format: "%@, %d CPUs, %.1f GiB RAM, Linux %@, %@", field("/proc/cpuinfo", "model name") ?? "unknown CPU",
                  info.activeProcessorCount, Double(info.physicalMemory) / 1_073_741_824, release,
                  field("/etc/os-release", "PRETTY_NAME") ?? "unknown OS")
}
