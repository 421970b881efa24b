// Observation: what observing one live value takes (its database, the C
// registration, the value read through another database), and observing it
// with delivery on its own thread or actor, on a queue, or on an actor.

import Foundation
internal import CCoffer

/// Turns a raw change, with the observed value and the database it was read
/// through (nil when there is none to read: an error), into what the
/// observer is told; nil when it is told nothing.
typealias ChangeMaker<Value, Change> = (RawChange, Value?, Database?) -> Change?

/// What observing one live value takes.
struct Observation<Value> {
    /// The live database the value belongs to.
    let database: Database
    /// The value itself, for calls on the database's thread or actor.
    let live: Value
    /// The value as read through another database of the same file (a
    /// frozen one); nil when it is not there.
    let rebuild: (Database) -> Value?
    /// Registers the C observer, given the context pointer and where to put
    /// the token.
    let register: (UnsafeMutableRawPointer, UnsafeMutablePointer<OpaquePointer?>) throws(CofferError) -> coffer_status
    /// Turns what the C observer reports into the value's own change, given
    /// the database the value is read through (nil when there is none);
    /// nil when the value did not change. Called in the order of the
    /// changes, one at a time, before the change is made; nil passes every
    /// change on as it is.
    var translate: ((RawChange, Database?) -> RawChange?)? = nil
    /// Gives the value read through a frozen database what the change
    /// already knows of it (the keys of results), so that reading it does
    /// not compute that again; nil for none.
    var adopt: ((Value, RawChange, Database) -> Void)? = nil

    /// The value read through `frozen`, given what `raw` knows of it.
    private func frozenValue(_ raw: RawChange, _ frozen: Database?) -> Value? {
        guard let frozen, let value = rebuild(frozen) else { return nil }
        adopt?(value, raw, frozen)
        return value
    }

    /// `make` after ``translate``.
    private func translated<Change>(_ make: @escaping ChangeMaker<Value, Change>) -> ChangeMaker<Value, Change> {
        guard let translate else { return make }
        return { raw, value, database in translate(raw, database).flatMap { make($0, value, database) } }
    }

    /// Observes with `block` called on `queue` (values frozen at the change's
    /// version), or with `queue` nil, on the database's thread or actor (the
    /// live value).
    func observe<Change>(on queue: DispatchQueue?, _ make: @escaping ChangeMaker<Value, Change>,
                         _ block: @escaping (Change) -> Void) -> NotificationToken {
        requireObservable()
        let make = translated(make)
        let context: ObserverContext
        if let queue {
            context = ObserverContext(frozenSource: FrozenSource(database), deliver: database.queueDelivery(queue) { raw, frozen in
                if let change = make(raw, frozenValue(raw, frozen), frozen) { block(change) }
            })
        } else {
            let (live, database) = (self.live, self.database)
            context = ObserverContext(frozenSource: nil, deliver: database.confinedDelivery { raw in
                if let change = make(raw, live, database) { block(change) }
            })
        }
        return database.registerObserver(context, register)
    }

    /// Observes with `block` called isolated to `actor`, values frozen at the
    /// change's version; the calls come in order.
    func observe<A: Actor, Change>(on actor: A, _ make: @escaping ChangeMaker<Value, Change>,
                                   _ block: @escaping @Sendable (isolated A, Change) -> Void) -> NotificationToken {
        requireObservable()
        let make = translated(make)
        typealias Item = (raw: RawChange, opened: Result<Handoff<Database>, CofferError>)
        let (stream, continuation) = AsyncStream<Handoff<Item>>.makeStream()
        let context = ObserverContext(frozenSource: FrozenSource(database)) { raw, context in
            continuation.yield(Handoff(value: (raw, context.frozenSource!.open())))
        }
        let token = database.registerObserver(context, register)
        let call = Handoff(value: { (raw: RawChange, frozen: Database?) -> Change? in
            make(raw, frozenValue(raw, frozen), frozen)
        })
        let task = Task {
            for await item in stream {
                guard !context.isInvalidated else { break }
                await deliverIsolated(actor, item.value.raw, item.value.opened, call, block)
            }
        }
        token.onInvalidate {
            continuation.finish()
            task.cancel()
        }
        return token
    }

    /// An async sequence of what `make` returns for each change, values
    /// frozen at the change's version; it ends after a change `isLast` says
    /// is the last, and observing ends when the task iterating it is
    /// cancelled or lets it go.
    func sequence<Element>(_ make: @escaping ChangeMaker<Value, Element>,
                           isLast: @escaping @Sendable (RawChange) -> Bool = { _ in false }) -> ChangeSequence<Element> {
        requireObservable()
        let make = translated(make)
        let (stream, continuation) = AsyncStream<Handoff<Element>>.makeStream()
        let call = Handoff(value: { (raw: RawChange, frozen: Database?) -> Element? in
            make(raw, frozenValue(raw, frozen), frozen)
        })
        let context = ObserverContext(frozenSource: FrozenSource(database)) { raw, context in
            Database.run({ raw, frozen in
                if let element = call.value(raw, frozen) { continuation.yield(Handoff(value: element)) }
            }, raw, context.frozenSource!.open())
            if isLast(raw) { continuation.finish() }
        }
        let token = database.registerObserver(context, register)
        continuation.onTermination = { _ in token.invalidate() }
        return ChangeSequence(stream: stream)
    }
}

extension Observation {
    /// Stops the program where Realm does: a call from another thread, or a
    /// frozen value, which never changes.
    func requireObservable() {
        database.requireThread()
        if database.isFrozen {
            database.fail(CofferError(.misuse, "a frozen value never changes and cannot be observed; observe the live one (thaw())"))
        }
    }
}

/// Builds a change isolated to `actor` and calls `block` with it there.
private func deliverIsolated<A: Actor, Change>(
    _ actor: isolated A, _ raw: RawChange, _ opened: Result<Handoff<Database>, CofferError>,
    _ make: Handoff<(RawChange, Database?) -> Change?>, _ block: @Sendable (isolated A, Change) -> Void
) {
    Database.run({ raw, frozen in
        if let change = make.value(raw, frozen) { block(actor, change) }
    }, raw, opened)
}
