// Upload and download progress of a sync session, as Realm's
// SyncSession.Progress and addProgressNotification: the C core's counts
// (coffer_sync_progress_get) and its progress callback
// (coffer_config_set_sync_progress_callback) fanned out to Swift observers.

internal import CCoffer

/// The progress observers of one handle's session: the context of its C
/// progress callback, kept by the handle (through its ``SyncStateHub``).
final class SyncProgressHub: @unchecked Sendable {
    private struct Observers {
        var next: UInt64 = 0
        var calls: [UInt64: @Sendable (SyncSession.ProgressDirection, SyncSession.Progress) -> Void] = [:]
    }

    private let observers = LockedValue(Observers())

    func install(on config: OpaquePointer) throws(CofferError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        try CofferError.check(coffer_config_set_sync_progress_callback(config, { ctx, direction, done, total in
            let hub = Unmanaged<SyncProgressHub>.fromOpaque(ctx!).takeUnretainedValue()
            hub.tell(direction == Int32(COFFER_SYNC_UPLOAD.rawValue) ? .upload : .download,
                     SyncSession.Progress(transferredBytes: Int(clamping: done), transferrableBytes: Int(clamping: total)))
        }, context))
    }

    /// Adds `call`, told of every change from now on; returns its key.
    func add(_ call: @escaping @Sendable (SyncSession.ProgressDirection, SyncSession.Progress) -> Void) -> UInt64 {
        observers.withLock { o in
            o.next += 1
            o.calls[o.next] = call
            return o.next
        }
    }

    func remove(_ key: UInt64) {
        _ = observers.withLock { $0.calls.removeValue(forKey: key) }
    }

    private func tell(_ direction: SyncSession.ProgressDirection, _ progress: SyncSession.Progress) {
        let calls = observers.withLock { $0.calls.sorted { $0.key < $1.key }.map(\.value) }
        for call in calls {
            call(direction, progress)
        }
    }
}

extension SyncSession {
    /// How far one direction of the session has come, as Realm's
    /// `SyncSession.Progress`: changeset bytes since the database was opened.
    ///
    /// Uploads know what is left from the local commits not yet acknowledged;
    /// downloads from the service, which says before each batch how many
    /// bytes are left (a flexible-sync session learns it only as batches
    /// arrive). A download that caught up with the service is complete.
    public struct Progress: Sendable, Equatable, CustomStringConvertible {
        /// The bytes the service acknowledged (upload) or this file integrated (download).
        public let transferredBytes: Int
        /// ``transferredBytes`` and those known to be left.
        public let transferrableBytes: Int

        public init(transferredBytes: Int, transferrableBytes: Int) {
            self.transferredBytes = transferredBytes
            self.transferrableBytes = transferrableBytes
        }

        /// ``transferredBytes`` over ``transferrableBytes``, from 0 to 1 (1 when
        /// nothing is transferable).
        public var progressEstimate: Double {
            transferrableBytes <= 0 ? 1 : min(1, Double(transferredBytes) / Double(transferrableBytes))
        }

        /// The same as ``progressEstimate`` (Realm's newer name).
        public var fractionTransferred: Double { progressEstimate }

        /// Whether everything known is transferred.
        public var isTransferComplete: Bool { transferredBytes >= transferrableBytes }

        /// `1024/2048 bytes`.
        public var description: String { "\(transferredBytes)/\(transferrableBytes) bytes" }
    }

    /// How long a progress notification lasts, as Realm's `ProgressMode`.
    public enum ProgressMode: Sendable {
        /// Every change, for as long as the token lives: the transferable bytes
        /// grow as new work comes.
        case reportIndefinitely
        /// The work outstanding when the notification was added: the
        /// transferable bytes stay what they were then, and the block is called
        /// for the last time once they are transferred.
        case forCurrentlyOutstandingWork
    }

    /// The current progress of `direction`.
    public func progress(for direction: ProgressDirection) -> Progress {
        var done: UInt64 = 0
        var total: UInt64 = 0
        let cDirection = direction == .upload ? COFFER_SYNC_UPLOAD : COFFER_SYNC_DOWNLOAD
        _ = coffer_sync_progress_get(sharedHandle.pointer, Int32(cDirection.rawValue), &done, &total)
        return Progress(transferredBytes: Int(clamping: done), transferrableBytes: Int(clamping: total))
    }

    /// Calls `block` with the progress of `direction`, as Realm's
    /// `addProgressNotification(for:mode:block:)`: once at once with the
    /// current progress, then on every change, until the returned token is
    /// invalidated or released (or, with ``ProgressMode/forCurrentlyOutstandingWork``,
    /// until the work outstanding now is done: the last call is complete).
    ///
    /// ```swift
    /// let token = session.addProgressNotification(for: .download, mode: .forCurrentlyOutstandingWork) { progress in
    ///     print(progress.progressEstimate)
    /// }
    /// ```
    ///
    /// The block runs on the session's own thread (the first call on the
    /// calling thread); calls never overlap. It must not wait for sync or
    /// block for long. Observing does not keep the database open.
    public func addProgressNotification(for direction: ProgressDirection, mode: ProgressMode = .reportIndefinitely,
                                        block: @escaping @Sendable (Progress) -> Void) -> NotificationToken {
        let token = NotificationToken(cToken: nil, context: ObserverContext(frozenSource: nil) { _, _ in })
        let now = progress(for: direction)
        let target = mode == .forCurrentlyOutstandingWork ? now.transferrableBytes : nil
        let clamp: @Sendable (Progress) -> Progress = { p in
            guard let target else { return p }
            return Progress(transferredBytes: min(p.transferredBytes, target), transferrableBytes: target)
        }
        block(clamp(now))
        if let target, now.transferredBytes >= target { return token }
        guard let hub = sharedHandle.syncStates?.progress else { return token }
        let done = LockedValue(false)
        let key = LockedValue<UInt64?>(nil)
        let registered = hub.add { changed, p in
            guard changed == direction else { return }
            let report = clamp(p)
            let last = done.withLock { done -> Bool? in
                if done { return nil }
                done = target != nil && report.isTransferComplete
                return done
            }
            guard let last else { return }
            block(report)
            if last, let k = key.withLock({ $0 }) { hub.remove(k) }
        }
        key.withLock { $0 = registered }
        token.onInvalidate { hub.remove(registered) }
        return token
    }
}
