// Waiting for a sync session's uploads or downloads without holding a thread
// of Swift's concurrency pool, with a timeout and cancellation.

import Foundation
internal import CCoffer

extension SyncSession {
    /// Which way ``SyncSession/wait(for:timeout:)`` waits, as Realm's `ProgressDirection`.
    public enum ProgressDirection: Sendable {
        /// Until the service has acknowledged every local commit made before the call.
        case upload
        /// Until the session is connected, has caught up with the service and has
        /// integrated everything that had arrived.
        case download
    }

    /// The longest single C wait: cancellation is noticed between two.
    private static let slice: UInt64 = 250

    /// Waits until the session has uploaded every local commit (``ProgressDirection/upload``)
    /// or caught up with the service (``ProgressDirection/download``).
    ///
    /// The wait runs on a thread of its own, never on one of the concurrency
    /// pool. Cancelling the task stops the wait (within a quarter of a second)
    /// and throws `CancellationError`; nothing of the session is affected.
    /// A wait that lasts longer than a quarter of a second may also cover
    /// commits made while it waits: it never returns before what was asked.
    ///
    /// - Parameter timeout: how long to wait at most; nil waits as long as it
    ///   takes (while paused or disconnected, until the connection is back).
    /// - Throws: ``CofferError`` `.timeout` after `timeout` (the local commits
    ///   are kept, and uploaded later); `.misuse` when the service refused the
    ///   session for good (``lastError`` says why); `CancellationError`.
    public func wait(for direction: ProgressDirection, timeout: Duration? = nil) async throws {
        let deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }
        let cancelled = LockedValue(false)
        let handle = sharedHandle
        try await withTaskCancellationHandler {
            try await onThreadOfItsOwn(named: "coffer sync wait") {
                try Self.waitBlocking(handle, direction, until: deadline, timeout: timeout, cancelled: cancelled)
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    private static func waitBlocking(_ handle: SharedHandle, _ direction: ProgressDirection,
                                     until deadline: ContinuousClock.Instant?, timeout: Duration?,
                                     cancelled: LockedValue<Bool>) throws {
        while true {
            if cancelled.withLock({ $0 }) { throw CancellationError() }
            var millis = slice
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero {
                    throw CofferError(.timeout, "waiting for the \(direction) ran past its timeout of \(timeout!)")
                }
                let (seconds, attoseconds) = left.components
                millis = min(slice, UInt64(seconds) * 1000 + UInt64(attoseconds / 1_000_000_000_000_000) + 1)
            }
            let status = direction == .upload
                ? coffer_sync_wait_for_upload(handle.pointer, millis)
                : coffer_sync_wait_for_download(handle.pointer, millis)
            if status == COFFER_OK { return }
            if status != COFFER_ERR_TIMEOUT { throw CofferError.last(status) }
        }
    }
}
