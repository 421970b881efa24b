// Observing a sync session's state: the C core's state callback
// (coffer_config_set_sync_state_callback) fanned out to Swift observers,
// as key-path observation with a NotificationToken and as async sequences.

internal import CCoffer

/// The observers of one handle's sync state: the context of its C state
/// callback, kept by the handle.
final class SyncStateHub: @unchecked Sendable {
    private struct Observers {
        var next: UInt64 = 0
        var calls: [UInt64: @Sendable (Int32, Int32) -> Void] = [:]
    }

    private let observers = LockedValue(Observers())
    /// The observers of the session's progress (SyncSession+Progress.swift).
    let progress = SyncProgressHub()

    func install(on config: OpaquePointer) throws(CofferError) {
        try progress.install(on: config)
        let context = Unmanaged.passUnretained(self).toOpaque()
        try CofferError.check(coffer_config_set_sync_state_callback(config, { ctx, old, new in
            Unmanaged<SyncStateHub>.fromOpaque(ctx!).takeUnretainedValue().tell(old: old, new: new)
        }, context))
    }

    /// Adds `call`, told of every change from now on; returns its key.
    func add(_ call: @escaping @Sendable (Int32, Int32) -> Void) -> UInt64 {
        observers.withLock { o in
            o.next += 1
            o.calls[o.next] = call
            return o.next
        }
    }

    func remove(_ key: UInt64) {
        _ = observers.withLock { $0.calls.removeValue(forKey: key) }
    }

    private func tell(old: Int32, new: Int32) {
        let calls = observers.withLock { $0.calls.sorted { $0.key < $1.key }.map(\.value) }
        for call in calls {
            call(old, new)
        }
    }
}

extension SyncSession {
    /// What ``observe(_:options:_:)`` reports, as Realm's
    /// `NSKeyValueObservingOptions` (Linux has no key-value observing).
    public struct ObservingOptions: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The new value in the change (always given).
        public static let new = ObservingOptions(rawValue: 1)
        /// The old value in the change (always given, nil for `initial`).
        public static let old = ObservingOptions(rawValue: 2)
        /// A first call at once, with the current value, before
        /// ``SyncSession/observe(_:options:_:)`` returns.
        public static let initial = ObservingOptions(rawValue: 4)
    }

    /// One change of an observed property, as Realm's
    /// `NSKeyValueObservedChange`.
    public struct ObservedChange<Value: Sendable>: Sendable {
        /// The value before the change; nil for the `initial` call.
        public let oldValue: Value?
        /// The value after the change.
        public let newValue: Value?
    }

    /// Calls `handler` whenever the property at `keyPath` (``state`` or
    /// ``connectionState``) changes, as Realm's
    /// `session.observe(\.connectionState, options: [.initial]) { session, change in }`,
    /// until the returned token is invalidated or released.
    ///
    /// The handler runs on the session's own thread, or on the thread calling
    /// ``pause()`` or ``resume()`` (the change such a call makes has been told
    /// when it returns); calls never overlap and come in the order of the
    /// changes, each with the values just before and just after it. With
    /// `.initial` the first call comes at once, on the calling thread. The
    /// handler may read the session and call ``pause()`` and ``resume()``; it
    /// must not wait for sync (``wait(for:timeout:)``) or block for long: hop
    /// to your own actor or queue for more. Observing does not keep the
    /// database open; once it is closed the calls stop. Other key paths than
    /// these two are read from the session at each change of its state.
    /// ``connectionStates`` and ``states`` are the same as async sequences.
    public func observe<Value: Equatable & Sendable>(
        _ keyPath: KeyPath<SyncSession, Value>, options: ObservingOptions = [.new],
        _ handler: @escaping @Sendable (SyncSession, ObservedChange<Value>) -> Void
    ) -> NotificationToken {
        nonisolated(unsafe) let path = keyPath
        let token = NotificationToken(cToken: nil, context: ObserverContext(frozenSource: nil) { _, _ in })
        let initial = self[keyPath: path]
        if let hub = sharedHandle.syncStates {
            // Weak: an observer does not keep the file open.
            weak let handle = sharedHandle
            let last = LockedValue(initial)
            let key = hub.add { old, new in
                guard let handle else { return }
                let session = SyncSession(handle)
                let after = Self.value(of: path, at: new) ?? session[keyPath: path]
                let before = last.withLock { last in
                    defer { last = after }
                    return Self.value(of: path, at: old) ?? last
                }
                if before != after {
                    handler(session, ObservedChange(oldValue: before, newValue: after))
                }
            }
            token.onInvalidate { hub.remove(key) }
        }
        if options.contains(.initial) {
            handler(self, ObservedChange(oldValue: nil, newValue: initial))
        }
        return token
    }

    /// The value at `keyPath` in the C state `raw`, for the two properties
    /// that follow from it alone; nil for any other key path.
    static func value<Value>(of keyPath: KeyPath<SyncSession, Value>, at raw: Int32) -> Value? {
        if keyPath == \SyncSession.state { return state(of: raw) as? Value }
        if keyPath == \SyncSession.connectionState { return connectionState(of: raw) as? Value }
        return nil
    }

    /// The session's connection states as an async sequence: the current one
    /// first, then each change, ending when the database is closed or the
    /// iterating task is cancelled. It does not keep the database open.
    ///
    /// ```swift
    /// for await state in session.connectionStates where state == .connected {
    ///     break
    /// }
    /// ```
    public var connectionStates: AsyncStream<ConnectionState> {
        values { Self.connectionState(of: $0) }
    }

    /// The session's states (``State``) as an async sequence, as
    /// ``connectionStates``; the last is ``State/inactive`` when the database
    /// is closed.
    public var states: AsyncStream<State> {
        values { Self.state(of: $0) }
    }

    private func values<Value: Equatable & Sendable>(_ map: @escaping @Sendable (Int32) -> Value) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .unbounded)
        guard let hub = sharedHandle.syncStates else {
            continuation.yield(map(cState))
            continuation.finish()
            return stream
        }
        // Under the hub's registration, so that no change falls between the
        // first value and the changes.
        let last = LockedValue<Value?>(nil)
        let key = hub.add { _, new in
            let after = map(new)
            // The first value told is yielded whatever it is; then changes.
            let changed = last.withLock { last in
                defer { last = after }
                return last.map { $0 != after } ?? true
            }
            if changed {
                continuation.yield(after)
            }
            if new == Int32(bitPattern: COFFER_SYNC_OFF.rawValue) {
                continuation.finish()
            }
        }
        let first = map(cState)
        let yieldFirst = last.withLock { last -> Bool in
            guard last == nil else { return false }
            last = first
            return true
        }
        if yieldFirst {
            continuation.yield(first)
        }
        continuation.onTermination = { _ in hub.remove(key) }
        return stream
    }
}
