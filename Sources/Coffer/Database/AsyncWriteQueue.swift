// AsyncWriteQueue: the asyncWrite and writeAsync calls of one Database, let
// through one at a time in the order they were made; a task cancelled while it
// waits leaves the queue at once.

/// Lets ``Database/asyncWrite(isolation:_:)`` calls through one at a time, first
/// come first served: a caller takes a ticket when it calls (``reserve()``), waits
/// for its turn (``waitForTurn(_:)``) and gives the ticket back (``leave(_:)``).
///
/// `Sendable` because its state is behind a lock: the cancellation handler of a
/// waiting task runs on whatever thread cancels it.
final class AsyncWriteQueue: Sendable {
    private struct State {
        var nextTicket: UInt64 = 0
        /// Every ticket not yet given back, in call order; the first one has its turn.
        var tickets: [UInt64] = []
        var waiting: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    }

    private let state = LockedValue(State())

    /// True while a ticket is out: a call runs or waits.
    var isBusy: Bool {
        state.withLock { !$0.tickets.isEmpty }
    }

    /// Takes the next place in line; every ticket must be given back with ``leave(_:)``.
    func reserve() -> UInt64 {
        state.withLock { state in
            state.nextTicket &+= 1
            state.tickets.append(state.nextTicket)
            return state.nextTicket
        }
    }

    /// Waits until `ticket` is first in line.
    /// - Throws: `CancellationError` if the task is cancelled before its turn.
    func waitForTurn(_ ticket: UInt64) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Decided under the lock, so that a cancellation either finds the
                // waiter registered or is seen here.
                enum Decision { case go, cancelled, wait }
                let decision = state.withLock { state -> Decision in
                    if Task.isCancelled { return .cancelled }
                    if state.tickets.first == ticket { return .go }
                    state.waiting[ticket] = continuation
                    return .wait
                }
                switch decision {
                case .go: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiting.removeValue(forKey: ticket) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Gives `ticket` back; if it had the turn, the next one in line gets it.
    func leave(_ ticket: UInt64) {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard let index = state.tickets.firstIndex(of: ticket) else { return nil }
            state.tickets.remove(at: index)
            guard index == 0, let head = state.tickets.first else { return nil }
            return state.waiting.removeValue(forKey: head)
        }
        next?.resume()
    }
}
