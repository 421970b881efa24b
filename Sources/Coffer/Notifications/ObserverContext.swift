// The C core's side of an observer: the context its callbacks get, the
// callbacks that copy each change set out of the C core's borrowed data, and
// registering them.

import Foundation
internal import CCoffer

/// A change as the C callback saw it, copied so that it can be delivered
/// later, on another thread.
enum RawChange: Sendable {
    /// The first call of a collection or object observer, with the version
    /// its initial state was read at (0 if it could not be read).
    case initial(version: UInt64)
    case collection(CollectionIndices)
    case object(ObjectChangeRecord)
    case map(MapChangeKeys)
    /// A refresh moved the database to a newer version.
    case database
    case error(CofferError)
}

/// What the C core calls back with: it passes each change on to the
/// observer's delivery, unless the observer was invalidated.
///
/// `@unchecked Sendable` because the C callbacks run on the core's notifier
/// thread: the invalidated flag is behind a lock, and the rest is immutable.
final class ObserverContext: @unchecked Sendable {
    private let invalidated = LockedValue(false)
    /// Where changes go; called on the thread of the C callback.
    let deliver: @Sendable (RawChange, ObserverContext) -> Void
    /// Opens, inside a C callback, a frozen database at the newest version,
    /// for deliveries away from the database's own thread; nil for deliveries
    /// on it.
    let frozenSource: FrozenSource?

    init(frozenSource: FrozenSource?, deliver: @escaping @Sendable (RawChange, ObserverContext) -> Void) {
        self.frozenSource = frozenSource
        self.deliver = deliver
    }

    var isInvalidated: Bool {
        invalidated.withLock { $0 }
    }

    func invalidate() {
        invalidated.withLock { $0 = true }
    }

    func receive(_ change: RawChange) {
        if !isInvalidated {
            deliver(change, self)
        }
    }

    /// The context a C callback was given.
    static func from(_ pointer: UnsafeMutableRawPointer?) -> ObserverContext {
        Unmanaged<ObserverContext>.fromOpaque(pointer!).takeUnretainedValue()
    }
}

extension RawChange {
    /// The first call, read at `txn`'s version.
    static func initial(_ txn: OpaquePointer?) -> RawChange {
        var version: UInt64 = 0
        if let txn, coffer_txn_version(txn, &version) != COFFER_OK { version = 0 }
        return .initial(version: version)
    }
}

/// The C callbacks: each copies what it was given and hands it on.
enum ObserverCallbacks {
    static let collection: coffer_collection_callback = { context, txn, changes in
        ObserverContext.from(context).receive(changes.map { .collection(CollectionIndices(copying: $0, txn: txn)) } ?? .initial(txn))
    }

    static let object: coffer_object_callback = { context, txn, changes in
        ObserverContext.from(context).receive(changes.map { .object(ObjectChangeRecord(copying: $0)) } ?? .initial(txn))
    }

    static let map: coffer_map_callback = { context, txn, changes in
        ObserverContext.from(context).receive(changes.map { .map(MapChangeKeys(copying: $0)) } ?? .initial(txn))
    }

    static let database: coffer_db_callback = { context, _, _, _ in
        ObserverContext.from(context).receive(.database)
    }
}

extension Database {
    /// Registers a C observer with `context`: `register` is given the context
    /// pointer and where to put the token. When it fails, the error is
    /// delivered as the observer's one call and the token is inert.
    func registerObserver(
        _ context: ObserverContext,
        _ register: (UnsafeMutableRawPointer, UnsafeMutablePointer<OpaquePointer?>) throws(CofferError) -> coffer_status
    ) -> NotificationToken {
        let first = notifications.state.withLock { state in
            defer { state.observed = true }
            return !state.observed
        }
        if first {
            // A commit through this database tells its observers on the
            // committing thread at once, rather than after the notifier
            // thread woke: the calls there only copy the change and hand
            // it on (to a queue, an actor, or this database's thread).
            _ = coffer_db_set_refresh_on_commit(handle, 1)
        }
        let retained = Unmanaged.passRetained(context)
        var token: OpaquePointer?
        let failure: CofferError?
        do {
            let status = try register(retained.toOpaque(), &token)
            failure = status == COFFER_OK ? nil : CofferError.last(status)
        } catch {
            failure = error
        }
        if let failure {
            retained.release()
            context.receive(.error(failure))
            let inert = NotificationToken(cToken: nil, context: context)
            return inert
        }
        return NotificationToken(cToken: token, context: context)
    }

    /// `keyPaths` (Swift names, through links) as the C core's, from `schema`.
    static func storedKeyPaths(_ keyPaths: [String]?, from schema: ModelSchema) -> [String]? {
        keyPaths?.map { QueryText.storedKeyPath($0, root: schema) }
    }
}

/// Runs `body` with `keyPaths` as a C array of C strings (NULL for nil).
func withCKeyPaths<Result>(_ keyPaths: [String]?,
                           _ body: (UnsafePointer<UnsafePointer<CChar>?>?, Int) throws(CofferError) -> Result) throws(CofferError) -> Result {
    guard let keyPaths else { return try body(nil, 0) }
    let strings = keyPaths.map { strdup($0) }
    defer { strings.forEach { free($0) } }
    // One element at least, so that an empty list is a pointer, not NULL.
    var pointers: [UnsafePointer<CChar>?] = strings.map { UnsafePointer($0) } + [nil]
    return try pointers.withUnsafeMutableBufferPointer { buffer throws(CofferError) in
        try body(UnsafePointer(buffer.baseAddress), keyPaths.count)
    }
}
