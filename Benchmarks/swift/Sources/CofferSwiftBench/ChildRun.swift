// One engine's run in a child process: what it measured, its peak memory and the
// size of its files.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What one engine measured in one run, in its own process so that its peak
/// RSS is its own.
struct ChildReport {
    var seconds: [Operation: Double] = [:]
    var peakRSS: UInt64 = 0
    var harnessRSS: UInt64 = 0
    var fileSize: UInt64 = 0

    /// One line of JSON, read back by ChildReport(json:).
    var json: String {
        let times = Operation.allCases.compactMap { op in seconds[op].map { "\"\(op.rawValue)\": \($0)" } }
        return "{\"seconds\": {\(times.joined(separator: ", "))}, \"peak_rss_bytes\": \(peakRSS), "
            + "\"harness_rss_bytes\": \(harnessRSS), \"file_size_bytes\": \(fileSize)}"
    }

    init() {}

    init(json: String) throws {
        guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let times = object["seconds"] as? [String: Double] else {
            throw BenchFailure("unreadable report from an engine run: \(json)")
        }
        for (key, value) in times {
            guard let op = Operation(rawValue: key) else { throw BenchFailure("unknown operation \(key) in \(json)") }
            seconds[op] = value
        }
        peakRSS = (object["peak_rss_bytes"] as? NSNumber)?.uint64Value ?? 0
        harnessRSS = (object["harness_rss_bytes"] as? NSNumber)?.uint64Value ?? 0
        fileSize = (object["file_size_bytes"] as? NSNumber)?.uint64Value ?? 0
    }
}

func peakRSSBytes() -> UInt64 {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return UInt64(usage.ru_maxrss) * 1024
}

func directorySize(_ directory: URL) -> UInt64 {
    let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.fileSizeKey])) ?? []
    return files.reduce(0) { $0 + UInt64((try? $1.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Runs every operation on one engine in an empty `directory`, checking each
/// answer against the workload's oracle; throws on the first wrong answer.
func runEngine(_ type: any Engine.Type, _ w: Workload, in directory: URL) throws -> ChildReport {
    var report = ChildReport()
    let expected = w.expectedChecks()
    report.harnessRSS = peakRSSBytes()
    let engine = try type.init(directory: directory)
    for op in Operation.allCases {
        let start = monotonicSeconds()
        let check = try engine.run(op, w)
        report.seconds[op] = monotonicSeconds() - start
        guard check == expected[op] else {
            throw BenchFailure("\(op.rawValue) gave \(check), expected \(expected[op] ?? 0)")
        }
        if op == .readAllInOrder {
            report.fileSize = directorySize(directory)
        }
    }
    report.peakRSS = peakRSSBytes()
    return report
}
