// Connections isolated from the other tests. The tests share one concurrency
// pool and one event loop group (as many threads as cores, two on a small
// machine), and one test's long computation or blocking call (a multi-MiB
// frame masked or encrypted in a debug build, a child process waited for)
// delays every other test's tasks and socket I/O by seconds. A client whose
// timing is the subject of a test (the pongs it answers the service's pings
// with) runs its connection on a thread and an event loop of their own, so
// that what other tests do cannot make it answer late.
import Foundation
import NIOPosix

enum IsolatedConnections {
    /// Runs the tasks of isolated connections; lives as long as the process.
    static let executor = DedicatedExecutor(name: "coffer-test-connections")
    /// Their sockets' I/O; lives as long as the process.
    static let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
}

/// Long computations of a test (multi-MiB values made, encoded and integrated
/// in a debug build) run here, so that they hold no thread of the shared pool
/// that every other test's clients answer pings on.
enum HeavyWork {
    /// Lives as long as the process.
    static let executor = DedicatedExecutor(name: "coffer-test-heavy-work")
}

/// A task executor with a thread of its own.
final class DedicatedExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    init(name: String) {
        let thread = Thread { [unowned self] in self.run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll()
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
