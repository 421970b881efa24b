// Tests of databases isolated to actors: Database(actor:), the async
// initializer on the main actor, asyncWrite and writeAsync.

import Coffer
import Foundation
import Testing

/// A serial executor that runs its jobs on two threads of its own in turn, so
/// that an actor using it resumes on the other thread after each `await`.
/// (Threads that end could see their identity reused by new ones.)
final class AlternatingThreadsExecutor: SerialExecutor {
    private let threads = [WorkerThread(), WorkerThread()]
    private let queue = DispatchQueue(label: "alternating-threads")
    private let jobCount = JobCounter()

    var jobsRun: Int { jobCount.value }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        let (threads, jobCount) = (threads, jobCount)
        // One job at a time (the queue is serial), on each thread in turn.
        queue.async {
            threads[jobCount.value % 2].runAndWait { job.runSynchronously(on: executor) }
            jobCount.increment()
        }
    }
}

/// A thread that runs the jobs it is given in order, for the life of the
/// process: an actor's executor, or a program's own loop.
final class WorkerThread: @unchecked Sendable {  // `jobs` is guarded by `condition`
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []

    init() {
        Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job()
            }
        }.start()
    }

    /// Runs `job` after the jobs posted before it, without waiting for it.
    func post(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func runAndWait(_ job: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        post { job(); done.signal() }
        done.wait()
    }
}

/// A counter shared between threads.
final class JobCounter: @unchecked Sendable {  // `count` is guarded by `lock`
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}

/// An actor that owns a database and resumes on another thread after each `await`.
actor DogStore {
    let executor = AlternatingThreadsExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    let configuration: Database.Configuration
    var db: Database!
    var callOrder: [Int] = []
    var blockOrder: [Int] = []
    var events: [String] = []

    init(_ configuration: Database.Configuration) {
        self.configuration = configuration
    }

    func open() async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func openConfinedToThread() throws {
        db = try Database(configuration: configuration)
    }

    var names: [String] { db.objects(Dog.self).sorted(byKeyPath: "age").map(\.name) }

    /// Hops off the actor and back, to its other thread.
    func hop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread { continuation.resume() }.start()
        }
    }

    func add(_ name: String, age: Int) async throws -> Int {
        try await db.asyncWrite {
            db.add(Dog(value: ["name": name, "age": age]))
            return db.objects(Dog.self).count
        }
    }

    func addConcurrently(_ count: Int) async throws {
        var tasks: [_Concurrency.Task<Void, any Error>] = []
        for i in 0..<count {
            tasks.append(_Concurrency.Task {
                callOrder.append(i)
                try await db.asyncWrite {
                    blockOrder.append(i)
                    db.add(Dog(value: ["name": "dog \(i)", "age": i]))
                }
            })
        }
        for task in tasks {
            try await task.value
        }
    }

    private(set) var writerStarted = false

    /// Starts an asyncWrite of a dog named `name` in a task of this actor.
    func startWrite(_ name: String) -> _Concurrency.Task<Int, any Error> {
        _Concurrency.Task {
            writerStarted = true
            return try await db.asyncWrite {
                db.add(Dog(value: ["name": name]))
                return 42
            }
        }
    }

    var isWritingAsynchronously: Bool { db.isPerformingAsynchronousWriteOperations }

    func writeSynchronously() throws {
        try db.write { db.add(Dog(value: ["name": "sync"])) }
    }

    func writeWithCompletion(_ name: String) async -> (any Error)? {
        await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
            db.writeAsync({ self.db.add(Dog(value: ["name": name])) }, onComplete: { error in
                continuation.resume(returning: error)
            })
        }
    }
}

/// Holds the file's write lock on a thread of its own until released.
final class WriteLockHolder: @unchecked Sendable {  // semaphores only; `thread` set once in init
    private let locked = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(_ configuration: Database.Configuration) {
        Thread { [self] in
            let db = try! Database(configuration: configuration)
            db.beginWrite()
            db.add(Dog(value: ["name": "holder", "age": -1]))
            locked.signal()
            release.wait()
            try! db.commitWrite()
            done.signal()
        }.start()
        locked.wait()
    }

    func commit() {
        release.signal()
        done.wait()
    }
}

@Suite(.timeLimit(.minutes(2))) struct ActorDatabaseTests {
    @Test(arguments: [Storage.plain, .encrypted, .inMemory])
    func anActorDatabaseWorksAcrossAwaitsWhicheverThreadResumes(_ storage: Storage) async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(storage, [Dog.self], in: dir))
        try await store.open()
        for i in 0..<10 {
            await store.hop()
            #expect(try await store.add("dog \(i)", age: i) == i + 1)
        }
        #expect(await store.names == (0..<10).map { "dog \($0)" })
        #expect(store.executor.jobsRun >= 20, "calls and hops alternated between two threads")
    }

    @Test func aSynchronousDatabaseOnAnActorStaysConfinedToItsThread() async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(.plain, [Dog.self], in: dir))
        try await store.openConfinedToThread()
        await #expect(throws: Coffer.Error.self) { try await store.writeSynchronously() }
        do {
            _ = try await store.add("Rex", age: 1)
            Issue.record("asyncWrite on a thread-confined database did not throw")
        } catch let error as Coffer.Error {
            #expect(error.code == .misuse)
            #expect(error.message.contains("opened on another thread") || error.message.contains("isolated to an actor"), "\(error)")
        }
    }

    @Test func usingAnActorDatabaseOutsideItsActorStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let config = Database.Configuration(inMemoryIdentifier: "outside-actor", objectTypes: [Dog.self])
            let store = PlainDogStore()
            let box = try await store.open(config)
            _ = onAnotherThread { box.value.objects(Dog.self).count }
        }
        // Swift's runtime stops the program, naming the actor.
        #expect(errorOutput(result).contains("expected 'CofferTests.PlainDogStore' executor"), "\(errorOutput(result))")
    }

    @MainActor @Test func theAsyncInitializerIsolatesToTheMainActor() async throws {
        let dir = TemporaryDirectory()
        let db = try await Database(configuration: configuration(.plain, [Dog.self], in: dir))
        try await db.asyncWrite { db.add(Dog(value: ["name": "Rex"])) }
        await _Concurrency.Task.yield()
        #expect(db.objects(Dog.self).map(\.name) == ["Rex"])
        try db.write { db.add(Dog(value: ["name": "Fido"])) }
        #expect(db.objects(Dog.self).count == 2)
    }

    @Test func asyncWriteLetsTheActorRunWhileItWaitsForTheWriteLock() async throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, [Dog.self], in: dir)
        let store = DogStore(config)
        try await store.open()
        let holder = WriteLockHolder(config)
        let writer = await store.startWrite("Rex")
        while await !store.writerStarted {
            await _Concurrency.Task.yield()
        }
        // The writer waits for the lock the holder has; the actor still runs this.
        #expect(await store.names == [])
        #expect(await store.isWritingAsynchronously)
        await #expect(throws: Coffer.Error.self, "a synchronous write would wait for the waiting asyncWrite") {
            try await store.writeSynchronously()
        }
        holder.commit()
        #expect(try await writer.value == 42)
        #expect(await store.names == ["holder", "Rex"])
        #expect(await !store.isWritingAsynchronously)
    }

    @Test func fiftyConcurrentAsyncWritesAllLandInCallOrder() async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(.encrypted, [Dog.self], in: dir))
        try await store.open()
        try await store.addConcurrently(50)
        let callOrder = await store.callOrder
        #expect(callOrder.count == 50)
        #expect(await store.blockOrder == callOrder)
        #expect(await store.names == (0..<50).map { "dog \($0)" })
    }

    @Test func cancellingTasksWaitingForTheWriteLockWritesNothing() async throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, [Dog.self], in: dir)
        let store = DogStore(config)
        try await store.open()
        let holder = WriteLockHolder(config)
        let first = await store.startWrite("first")   // waits for the file's lock
        let second = await store.startWrite("second") // waits behind the first
        while await !store.writerStarted {
            await _Concurrency.Task.yield()
        }
        second.cancel()
        await #expect(throws: CancellationError.self, "leaves the queue while the lock is still held") {
            try await second.value
        }
        first.cancel()
        holder.commit()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(await store.names == ["holder"])
        #expect(try await store.add("after", age: 1) == 2, "the database still writes")
    }

    @Test func aThrowingBlockWritesNothing() async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(.plain, [Dog.self], in: dir))
        try await store.open()
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await store.failingWrite(Stop())
        }
        #expect(await store.names == [])
        #expect(try await store.add("Rex", age: 1) == 1)
    }

    @Test func aBlockMayCommitOrCancelItsOwnTransaction() async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(.encrypted, [Dog.self], in: dir))
        try await store.open()
        let (committed, cancelled) = try await store.writesEndingTheirOwnTransactions()
        #expect(committed && cancelled)
        #expect(await store.names == ["committed"])
        #expect(try await store.add("after", age: 1) == 2, "the write lock was let go")
    }

    @Test func writeAsyncTakesItsTurnWhenCalled() async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(.plain, [Dog.self], in: dir))
        try await store.open()
        #expect(try await store.writeAsyncThenAsyncWrite() == ["writeAsync", "asyncWrite"])
        #expect(await store.names == ["first", "second"])
    }

    @Test func writeAsyncReportsCompletionAndFailure() async throws {
        let dir = TemporaryDirectory()
        var config = configuration(.plain, [Dog.self], in: dir)
        let store = DogStore(config)
        try await store.open()
        #expect(await store.writeWithCompletion("Rex") == nil)
        #expect(await store.names == ["Rex"])

        config.readOnly = true
        let readOnly = DogStore(config)
        try await readOnly.open()
        let error = await readOnly.writeWithCompletion("Fido") as? Coffer.Error
        #expect(error?.code == .readOnly, "\(String(describing: error))")
        #expect(await store.names == ["Rex"])
    }
}

extension DogStore {
    /// asyncWrite blocks that end their transaction themselves: one commits
    /// and then writes no more, one cancels.
    func writesEndingTheirOwnTransactions() async throws -> (Bool, Bool) {
        let committed = try await db.asyncWrite {
            db.add(Dog(value: ["name": "committed"]))
            try db.commitWrite()
            return !db.isInWriteTransaction
        }
        let cancelled = try await db.asyncWrite {
            db.add(Dog(value: ["name": "cancelled"]))
            db.cancelWrite()
            return !db.isInWriteTransaction
        }
        return (committed, cancelled)
    }

    /// A writeAsync, then an asyncWrite: returns the order in which their blocks ran.
    func writeAsyncThenAsyncWrite() async throws -> [String] {
        events = []
        db.writeAsync({
            self.events.append("writeAsync")
            self.db.add(Dog(value: ["name": "first", "age": 1]))
        })
        try await db.asyncWrite {
            events.append("asyncWrite")
            db.add(Dog(value: ["name": "second", "age": 2]))
        }
        return events
    }

    func failingWrite(_ error: some Error) async throws {
        try await db.asyncWrite {
            db.add(Dog(value: ["name": "never"]))
            throw error
        }
    }
}

/// An actor on the default executor that hands its database out unchecked, as
/// only code getting around the compiler could.
actor PlainDogStore {
    func open(_ configuration: Database.Configuration) async throws -> UncheckedBox<Database> {
        UncheckedBox(try await Database(configuration: configuration, actor: self))
    }
}
