// Delivery: getting an observer's calls from the C core's notifier thread to
// where they run — the database's own thread or actor (calls kept until it
// refreshes), a DispatchQueue, or an actor — and the frozen databases the
// calls away from the database's thread read through.

import Foundation
internal import CCoffer

/// The calls of `on: nil` observers waiting for their database's thread or
/// actor, and what brings them there.
///
/// `@unchecked Sendable` because the notifier thread adds calls while the
/// database's thread takes them: everything is behind the lock.
final class NotificationState: @unchecked Sendable {
    struct State {
        var pending: [PendingCall] = []
        /// A delivery task is on its way to the database's actor or
        /// scheduler; no other is sent until it ran.
        var deliveryScheduled = false
        var autorefresh = true
        /// An observer was registered through this database: refresh() then
        /// refreshes the handle's observers too.
        var observed = false
        var scheduler: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
    }

    let state = LockedValue(State())

    func append(_ call: PendingCall) {
        state.withLock { $0.pending.append(call) }
    }

    /// The calls waiting, in order, removed from the queue.
    func takePending() -> [PendingCall] {
        state.withLock { state in
            defer { state.pending.removeAll() }
            return state.pending
        }
    }
}

/// One call of an observer, made on the notifier thread and run on the
/// database's thread or actor.
///
/// `@unchecked Sendable` because it holds the observer's block and the live
/// value it was registered for, which are not `Sendable`: the notifier thread
/// only stores the call, and it runs where the database may be used.
struct PendingCall: @unchecked Sendable {
    let run: () -> Void
}

/// A value handed from one thread to another whose use is safe although its
/// type is not `Sendable`.
///
/// `@unchecked Sendable`: used only for frozen databases and what is read
/// through them (immutable, each read under the frozen database's lock), and
/// for observers' blocks that run on one queue or actor at a time.
struct Handoff<Value>: @unchecked Sendable {
    let value: Value
}

/// What a frozen database is made of, copied on the live database's thread so
/// that a notifier thread can open one at the newest version.
///
/// `@unchecked Sendable` because its parts are immutable: the shared handle
/// (used from any thread), the configuration, and a copy of the class bindings.
struct FrozenSource: @unchecked Sendable {
    let sharedHandle: SharedHandle
    let configuration: Database.Configuration
    let bindings: [ObjectIdentifier: ClassBinding]

    init(_ database: Database) {
        sharedHandle = database.sharedHandle
        configuration = database.configuration
        bindings = database.bindings
    }

    /// A frozen database at the newest version of the file.
    func open() -> Result<Handoff<Database>, CofferError> {
        var txn: OpaquePointer?
        let status = coffer_txn_begin(sharedHandle.pointer, Int32(COFFER_TXN_READ), &txn)
        guard status == COFFER_OK, let txn else { return .failure(CofferError.last(status)) }
        var version: UInt64 = 0
        let versionStatus = coffer_txn_version(txn, &version)
        guard versionStatus == COFFER_OK else {
            coffer_txn_free(txn)
            return .failure(CofferError.last(versionStatus))
        }
        return .success(Handoff(value: Database(frozenOn: sharedHandle, configuration: configuration, bindings: bindings,
                                                frozenTransaction: txn, frozenVersion: version)))
    }
}

/// Runs `body` isolated to `actor`.
func runIsolated(_ actor: isolated any Actor, _ body: @Sendable () -> Void) {
    body()
}

extension Database {
    /// Whether a commit seen by an observer moves this database to the
    /// newest version by itself, as Realm's `autorefresh`.
    ///
    /// On by default. A database isolated to an actor refreshes on its actor
    /// when an observer of it is told of a commit, and then runs the
    /// observers' calls there (after the write, if one is under way). A
    /// database confined to a thread has no loop to refresh on: it refreshes
    /// and calls its `on: nil` observers when that thread calls
    /// ``refresh()``, or, with a scheduler (``setScheduler(_:)``), on the
    /// thread's own loop. Turned off, observers registered with `on: nil`
    /// are called only from ``refresh()``. Observers delivered on a queue or
    /// an actor are called whatever this says.
    public var autorefresh: Bool {
        get { notifications.state.withLock { $0.autorefresh } }
        set {
            requireThread()
            notifications.state.withLock { $0.autorefresh = newValue }
        }
    }

    /// Brings the refreshes and observer calls of a database confined to a
    /// thread to that thread's loop: when a commit is seen, `scheduler` is
    /// given a function to run on the database's thread (the one that opened
    /// it), which refreshes the database and calls its `on: nil` observers.
    /// At most one such function is pending at a time. nil goes back to
    /// calling them only from ``refresh()``.
    ///
    /// ```swift
    /// db.setScheduler { work in myLoop.post(work) }   // myLoop runs on db's thread
    /// ```
    ///
    /// A function run on another thread stops the program, as any use of the
    /// database there does.
    public func setScheduler(_ scheduler: (@Sendable (@escaping @Sendable () -> Void) -> Void)?) {
        requireThread()
        notifications.state.withLock { $0.scheduler = scheduler }
    }

    /// The delivery of an `on: nil` observer: `call` runs on this database's
    /// thread or actor, after the database refreshed.
    func confinedDelivery(_ call: @escaping (RawChange) -> Void) -> @Sendable (RawChange, ObserverContext) -> Void {
        let block = Handoff(value: call)
        let weakDatabase = Handoff(value: WeakDatabase(self))
        let confinement = confinement
        return { [notifications] raw, context in
            notifications.append(PendingCall {
                if !context.isInvalidated { block.value(raw) }
            })
            Database.scheduleDelivery(notifications, confinement, weakDatabase)
        }
    }

    /// Sends one delivery of the pending calls to the database's actor or
    /// scheduler, unless one is on its way or auto-refresh is off.
    private static func scheduleDelivery(_ notifications: NotificationState, _ confinement: Confinement,
                                         _ database: Handoff<WeakDatabase>) {
        let scheduler = notifications.state.withLock { state -> (@Sendable (@escaping @Sendable () -> Void) -> Void)?? in
            guard state.autorefresh, !state.deliveryScheduled else { return nil }
            switch confinement {
            case .actor:
                state.deliveryScheduled = true
                return .some(nil)
            case .thread where state.scheduler != nil:
                state.deliveryScheduled = true
                return .some(state.scheduler)
            case .thread, .frozen:
                return nil
            }
        }
        guard let scheduler else { return }
        let deliver: @Sendable () -> Void = {
            notifications.state.withLock { $0.deliveryScheduled = false }
            database.value.database?.autorefreshNow()
        }
        if let scheduler {
            scheduler(deliver)
        } else if case .actor(let weak) = confinement, let actor = weak.actor {
            let actorBox = Handoff(value: actor)
            Task { await runIsolated(actorBox.value, deliver) }
        }
    }

    /// Refreshes the database and runs the pending calls, as
    /// ``refresh()``, unless a write transaction is under way (its commit
    /// brings another delivery).
    private func autorefreshNow() {
        guard writeTransaction == nil else { return }
        _ = refresh()
    }

    /// Runs the calls waiting for this database; true if there were any.
    @discardableResult
    func deliverPendingCalls() -> Bool {
        let calls = notifications.takePending()
        for call in calls { call.run() }
        return !calls.isEmpty
    }

    /// The delivery of an observer on `queue`: `call` runs there with a frozen
    /// database at the newest version, opened when the change was seen.
    func queueDelivery(_ queue: DispatchQueue,
                       _ call: @escaping (RawChange, Database?) -> Void) -> @Sendable (RawChange, ObserverContext) -> Void {
        let block = Handoff(value: call)
        return { raw, context in
            let opened = context.frozenSource!.open()
            queue.async {
                guard !context.isInvalidated else { return }
                Database.run(block.value, raw, opened)
            }
        }
    }

    /// Calls `call` with the frozen database, or tells it the error opening it.
    static func run(_ call: (RawChange, Database?) -> Void, _ raw: RawChange,
                    _ opened: Result<Handoff<Database>, CofferError>) {
        switch opened {
        case .success(let frozen):
            call(raw, frozen.value)
        case .failure(let error):
            // Without a database to read from, the observer can only be told.
            if case .error = raw {
                call(raw, nil)
                return
            }
            call(.error(error), nil)
        }
    }
}

/// A database held weakly, so that pending calls do not keep it open.
final class WeakDatabase {
    weak var database: Database?
    init(_ database: Database) { self.database = database }
}
