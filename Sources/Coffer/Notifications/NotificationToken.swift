// NotificationToken: what registering an observer returns; invalidating it,
// or letting it go, stops the observer's calls.

internal import CCoffer

/// Keeps an observer registered, as Realm's `NotificationToken`: its calls
/// stop when ``invalidate()`` is called or the token goes away, so keep a
/// strong reference to it for as long as the calls are wanted.
///
/// ```swift
/// let token = dogs.observe { change in print(change) }
/// // ...
/// token.invalidate()
/// ```
///
/// `@unchecked Sendable` because its state is behind a lock: a token may be
/// invalidated from any thread or task, also from inside its own callback.
public final class NotificationToken: @unchecked Sendable {
    private struct State {
        var cToken: OpaquePointer?
        var context: ObserverContext?
        /// Ends what the observer set up besides the C observer (a task
        /// delivering to an actor, an async sequence).
        var onInvalidate: [@Sendable () -> Void] = []
    }

    private let state: LockedValue<State>

    /// A token for the C observer `cToken`, whose callbacks get `context`
    /// (retained once for the C core, released when the observer stops).
    init(cToken: OpaquePointer?, context: ObserverContext?) {
        state = LockedValue(State(cToken: cToken, context: context))
    }

    /// The C token, for `commitWrite(withoutNotifying:)`; nil once invalidated.
    var cToken: OpaquePointer? {
        state.withLock { $0.cToken }
    }

    /// Runs `end` when the token is invalidated (at once if it already is).
    func onInvalidate(_ end: @escaping @Sendable () -> Void) {
        let done = state.withLock { state -> Bool in
            guard state.context != nil else { return true }
            state.onInvalidate.append(end)
            return false
        }
        if done { end() }
    }

    /// Stops the observer: once this returns, its callback is not called
    /// again, also for changes already on their way to a queue or actor.
    /// Invalidating twice does nothing more.
    public func invalidate() {
        let ended = state.withLock { state -> State in
            let ended = state
            state = State()
            return ended
        }
        guard let context = ended.context else { return }
        context.invalidate()
        // Waits for a C callback running on the notifier thread.
        coffer_token_stop(ended.cToken)
        if ended.cToken != nil {
            Unmanaged.passUnretained(context).release()
        }
        for end in ended.onInvalidate { end() }
    }

    deinit {
        invalidate()
    }
}
