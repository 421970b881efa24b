// WriteLockThread: a database's thread that begins the write transaction of
// each asyncWrite, holds the write lock while the actor runs the block, and
// ends the transaction: the core requires one thread to begin and end a write,
// and an actor's executor may resume on any thread. One thread serves every
// asyncWrite of its database, one after the other, until the database goes.

import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import CCoffer

/// A C handle handed between an actor and a ``WriteLockThread``.
///
/// `@unchecked Sendable` because a raw pointer is not: the actor and the thread
/// use the handle one after the other, each hand-over passing through a lock or
/// a continuation, never at the same time.
struct SendableHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// Runs jobs in order on one thread until ``stop()``: the transactions of one
/// database's asyncWrites, each begun and ended there. Jobs run in call order,
/// so a transaction begun after another's commit was handed over begins once
/// that commit is done.
///
/// `@unchecked Sendable` because its state (`jobs`, `finished`) is read and
/// changed only under `condition`.
final class WriteLockThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var finished = false

    init() {
        let thread = Thread { [self] in runJobs() }
        thread.name = "Coffer write lock"
        thread.start()
    }

    /// Begins a write transaction of `db` on the thread, waiting there for the
    /// write lock.
    func begin(_ db: SendableHandle) async throws(CofferError) -> SendableHandle {
        let result: Result<SendableHandle, CofferError> = await run {
            var txn: OpaquePointer?
            let status = coffer_txn_begin(db.pointer, Int32(COFFER_TXN_WRITE), &txn)
            guard status == COFFER_OK, let txn else { return .failure(CofferError.last(status)) }
            return .success(SendableHandle(pointer: txn))
        }
        return try result.get()
    }

    /// Commits `txn` on the thread without blocking the caller.
    func commit(_ txn: SendableHandle) async -> CofferError? {
        await run { Self.commitNow(txn) }
    }

    /// Commits `txn` on the thread, blocking the caller: for `commitWrite()`
    /// called inside an asyncWrite block.
    func commitAndWait(_ txn: SendableHandle) -> CofferError? {
        runAndWait { Self.commitNow(txn) }
    }

    /// Aborts `txn` on the thread, blocking the caller (aborting does not wait
    /// for anything).
    func abortAndWait(_ txn: SendableHandle) {
        runAndWait { _ = coffer_txn_abort(txn.pointer) }
    }

    private static func commitNow(_ txn: SendableHandle) -> CofferError? {
        let status = coffer_txn_commit(txn.pointer)
        // The message is the committing thread's own: read it here.
        return status == COFFER_OK ? nil : CofferError.last(status)
    }

    private func run<T: Sendable>(_ job: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            enqueue { continuation.resume(returning: job()) }
        }
    }

    private func runAndWait<T: Sendable>(_ job: @escaping @Sendable () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = LockedValue<T?>(nil)
        enqueue {
            let value = job()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    private func enqueue(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread end once the jobs given so far have run.
    func stop() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    /// Gives the thread the name tools show (ps, top, gdb): Foundation's
    /// `Thread.name` stays inside Swift on Linux. `pthread_setname_np` is a GNU
    /// extension the Glibc module does not import, so it is looked up by name.
    private static func nameCurrentThread() {
        #if canImport(Glibc)
        typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
        if let symbol = dlsym(nil, "pthread_setname_np") {
            _ = unsafeBitCast(symbol, to: SetName.self)(pthread_self(), "coffer-write")
        }
        #endif
    }

    private func runJobs() {
        Self.nameCurrentThread()
        while true {
            condition.lock()
            while jobs.isEmpty && !finished {
                condition.wait()
            }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
