// The live benchmark's Coffer side: results of 1,000 rows observed on a
// queue while the main thread commits, and refresh() of a database that
// observes them while another thread commits.

import Coffer
import Foundation

/// The live benchmark's row.
final class LiveRow: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var name = ""
}

final class CofferLiveEngine: LiveEngine {
    static let key = "coffer"
    private let configuration: Database.Configuration
    private let rows: Int

    init(directory: URL, rows: Int, durability: LiveDurability) throws {
        var configuration = Database.Configuration(fileURL: directory.appendingPathComponent("live.coffer"), objectTypes: [LiveRow.self])
        configuration.durability = durability == .full ? .full : .normal
        self.configuration = configuration
        self.rows = rows
        let db = try Database(configuration: configuration)
        try db.write {
            for id in 0..<rows { db.create(LiveRow.self, value: ["id": id, "name": "row \(id)"]) }
        }
    }

    func commitToCallback(commits: Int) throws -> [Double] {
        let db = try Database(configuration: configuration)
        let rows = db.objects(LiveRow.self).sorted(byKeyPath: "id")
        let clock = CommitClock()
        let token = rows.observe(on: DispatchQueue(label: "coffer-live-observer")) { change in
            switch change {
            case .initial:
                clock.markReady()
            case .update(let rows, _, _, let modifications):
                // What a screen would redraw: the changed row.
                if let first = modifications.first { clock.saw(row: first, value: rows[first].value) }
            case .error(let error):
                FileHandle.standardError.write(Data("coffer: \(error)\n".utf8))
            }
        }
        defer { token.invalidate() }
        try clock.awaitReady(Self.key)
        var samples: [Double] = []
        var writes: [Double] = []
        for n in 0..<commits {
            let row = db.object(ofType: LiveRow.self, forPrimaryKey: n % self.rows)!
            try db.write {
                row.value = liveValue(n)
                clock.start(row: n % self.rows, value: liveValue(n))
            }
            let returned = monotonicSeconds()
            samples.append(try clock.awaitCommit(Self.key, n + 1))
            writes.append(returned - clock.startedAt)
        }
        reportWriteShare(Self.key, writes: writes, total: samples)
        // The same commits unobserved: what the commit costs by itself.
        token.invalidate()
        var unobserved: [Double] = []
        for n in 0..<commits {
            let row = db.object(ofType: LiveRow.self, forPrimaryKey: n % self.rows)!
            var start = 0.0
            try db.write {
                row.value = liveValue(commits + n)
                start = monotonicSeconds()
            }
            unobserved.append(monotonicSeconds() - start)
        }
        let alone = LiveFigure(unobserved)
        FileHandle.standardError.write(Data("live: \(Self.key) write's end → write returned, unobserved: median \(String(format: "%.1f µs, p90 %.1f µs", alone.median, alone.p90))\n".utf8))
        return samples
    }

    func refreshAfterOneChange(commits: Int) throws -> [Double] {
        let db = try Database(configuration: configuration)
        db.autorefresh = false
        let rows = db.objects(LiveRow.self).sorted(byKeyPath: "id")
        var seen = 0
        var changedValue = 0
        let token = rows.observe { change in
            if case .update(let rows, _, _, let modifications) = change, let first = modifications.first {
                changedValue = rows[first].value
                seen += 1
            }
        }
        defer { token.invalidate() }
        db.refresh()
        let writer = CommitThread(configuration)
        var samples: [Double] = []
        for n in 0..<commits {
            let value = liveValue(commits + n)
            try writer.commit(id: n % self.rows, value: value)
            let start = monotonicSeconds()
            db.refresh()
            samples.append(monotonicSeconds() - start)
            guard seen == n + 1, changedValue == value else {
                throw BenchFailure("\(Self.key): refresh \(n + 1) did not report the commit (\(seen) calls)")
            }
        }
        return samples
    }
}

/// The time from a commit's end to the callback that shows it, between two
/// threads: the committing thread starts it, the observer's queue stops it
/// when it sees the row's new value.
final class CommitClock: @unchecked Sendable {  // guarded by `condition`
    private let condition = NSCondition()
    private var started = 0.0
    private var stopped = 0.0
    private var row = -1
    private var value = -1
    private var reached = false
    private var ready = false

    /// The observer's first call came.
    func markReady() {
        condition.lock(); defer { condition.unlock() }
        ready = true
        condition.broadcast()
    }

    func awaitReady(_ engine: String) throws {
        condition.lock(); defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(30)
        while !ready && condition.wait(until: deadline) {}
        if !ready { throw BenchFailure("\(engine): the observer's first call never came") }
    }

    /// The commit that sets `row` to `value` ends now.
    func start(row: Int, value: Int) {
        condition.lock(); defer { condition.unlock() }
        (self.row, self.value, reached) = (row, value, false)
        started = monotonicSeconds()
    }

    /// When the last commit's clock started.
    var startedAt: Double {
        condition.lock(); defer { condition.unlock() }
        return started
    }

    /// The row the commit under way changes; -1 before the first.
    var expectedRow: Int {
        condition.lock(); defer { condition.unlock() }
        return row
    }

    /// A callback sees `value` in `row`.
    func saw(row: Int, value: Int) {
        let now = monotonicSeconds()
        condition.lock(); defer { condition.unlock() }
        if row == self.row, value == self.value, !reached {
            (reached, stopped) = (true, now)
            condition.broadcast()
        }
    }

    /// Seconds from the commit's end to the callback that showed it.
    func awaitCommit(_ engine: String, _ commit: Int) throws -> Double {
        condition.lock(); defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(30)
        while !reached && condition.wait(until: deadline) {}
        if !reached { throw BenchFailure("\(engine): commit \(commit) never reached its observer") }
        return stopped - started
    }
}

/// A thread with a database of its own that commits one change at a time
/// when asked, and returns once it is committed.
final class CommitThread: @unchecked Sendable {  // `job` is handed over under `condition`
    private let condition = NSCondition()
    private var job: (Int, Int)?
    private var failure: Error?
    private var done = false

    init(_ configuration: Database.Configuration) {
        Thread { [self] in
            let db = try! Database(configuration: configuration)
            while true {
                condition.lock()
                while job == nil { condition.wait() }
                let (id, value) = job!
                condition.unlock()
                do {
                    let row = db.object(ofType: LiveRow.self, forPrimaryKey: id)!
                    try db.write { row.value = value }
                } catch {
                    condition.lock(); failure = error; condition.unlock()
                }
                condition.lock()
                job = nil
                done = true
                condition.broadcast()
                condition.unlock()
            }
        }.start()
    }

    func commit(id: Int, value: Int) throws {
        condition.lock(); defer { condition.unlock() }
        done = false
        job = (id, value)
        condition.broadcast()
        while !done { condition.wait() }
        if let failure { throw failure }
    }
}

/// Prints, beside the latency, the median time from the end of the write's
/// body to the return of the write (the commit, and what the engine does in
/// it before returning): where the latency goes.
func reportWriteShare(_ engine: String, writes: [Double], total: [Double]) {
    let write = LiveFigure(writes)
    let all = LiveFigure(total)
    let figures = String(format: "%.1f µs, p90 %.1f µs (commit → callback median %.1f µs)", write.median, write.p90, all.median)
    FileHandle.standardError.write(Data("live: \(engine) write's end → write returned: median \(figures)\n".utf8))
}
