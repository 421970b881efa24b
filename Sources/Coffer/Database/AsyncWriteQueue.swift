// AsyncWriteQueue: the asyncWrite calls of one Database, let through one at a
// time in the order they were made; a task cancelled while it waits leaves
// the queue at once.

/// Lets ``Database/asyncWrite(isolation:_:)`` calls through one at a time, first
/// come first served.
///
/// `Sendable` because its state is behind a lock: the cancellation handler of a
/// waiting task runs on whatever thread cancels it.
final class AsyncWriteQueue: Sendable {
    private struct State {
        var busy = false
        var nextID: UInt64 = 0
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    private let state = LockedValue(State())

    /// True while an asyncWrite runs or waits.
    var isBusy: Bool {
        state.withLock { $0.busy }
    }

    /// Waits until every earlier caller has called ``leave()``.
    /// - Throws: `CancellationError` if the task is cancelled while it waits.
    func enter() async throws {
        let id = state.withLock { state in
            state.nextID &+= 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Decided under the lock, so that a cancellation either sees the
                // waiter registered or is seen here.
                enum Decision { case go, cancelled, wait }
                let decision = state.withLock { state -> Decision in
                    if Task.isCancelled { return .cancelled }
                    if !state.busy {
                        state.busy = true
                        return .go
                    }
                    state.waiters.append((id, continuation))
                    return .wait
                }
                switch decision {
                case .go: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0) }
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Lets the next waiter through, or marks the queue idle.
    func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if state.waiters.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
