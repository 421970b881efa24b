// Flexible sync's query subscriptions with Realm's names (docs/SYNC.md,
// "Flexible sync"): `db.subscriptions`, a SyncSubscriptionSet over the C
// coffer_subscriptions_* calls; `update` with a MutableSubscriptionSet;
// QuerySubscription<T>, whose typed query becomes query text the service
// evaluates (arguments written as literals).

import Foundation
internal import CCoffer

/// One subscription of a ``SyncSubscriptionSet``, as Realm's `SyncSubscription`.
public struct SyncSubscription: Sendable, Equatable {
    /// The name given when it was appended; nil for an unnamed one.
    public let name: String?
    /// The class whose objects it selects.
    public let objectClassName: String
    /// Its query in the query language.
    public let queryString: String
}

/// The state of the latest subscription set, as Realm's `SyncSubscriptionState`.
public enum SyncSubscriptionState: Sendable, Equatable {
    /// Committed, not yet acknowledged by the service.
    case pending
    /// Sent to the service; the objects it brings are arriving.
    case bootstrapping
    /// The file holds exactly the objects the set (and the service's read rules) give.
    case complete
    /// The service refused the set: the message names the subscription, its
    /// query and the part it cannot evaluate. The service goes on with the set before it.
    case error(String)
    /// A later set was committed.
    case superseded
}

/// A subscription to the objects of `T` that match a query, as Realm's:
///
/// ```swift
/// try await db.subscriptions.update {
///     $0.append(QuerySubscription<Dog>(name: "dogs") { $0.age > 2 })
/// }
/// ```
public struct QuerySubscription<T: Object>: Sendable {
    /// The subscription's name, nil for an unnamed one.
    public let name: String?
    let query: Result<String, CofferError>

    /// The objects of `T` matching `query` (every one when nil). The query
    /// must stay within what the service evaluates (docs/SYNC.md, "Predicates
    /// over stored objects"): comparisons of top-level properties with
    /// values, `&&`, `||`, `!`.
    public init(name: String? = nil, query: ((Query<T>) -> Query<Bool>)? = nil) {
        self.name = name
        guard let query else {
            self.query = .success("TRUEPREDICATE")
            return
        }
        let (text, arguments) = QueryWriter.write(query(Query<T>.root).node)
        do {
            self.query = .success(try Self.inline(text, arguments))
        } catch {
            self.query = .failure(error)
        }
    }

    /// The objects of `T` matching `where`, a query string (no arguments).
    public init(name: String? = nil, where text: String) {
        self.name = name
        query = .success(text)
    }

    /// `text` with each `$n` replaced by its argument as a literal.
    private static func inline(_ text: String, _ arguments: [StoredValue]) throws(CofferError) -> String {
        var out = ""
        var chars = Array(text)[...]
        while let c = chars.popFirst() {
            guard c == "$", let first = chars.first, first.isNumber else {
                out.append(c)
                continue
            }
            var digits = ""
            while let d = chars.first, d.isNumber { digits.append(d); chars.removeFirst() }
            guard let index = Int(digits), index < arguments.count else {
                throw CofferError(.query, "subscription query '\(text)' refers to a missing argument $\(digits)")
            }
            out += try literal(arguments[index], in: text)
        }
        return out
    }

    private static func literal(_ value: StoredValue, in text: String) throws(CofferError) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let v): return v ? "true" : "false"
        case .int(let v): return "\(v)"
        case .float(let v): return "\(v)"
        case .double(let v): return "\(v)"
        case .string(let v):
            return "'" + v.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        case .objectId(let v): return "oid(\(v.stringValue))"
        case .uuid(let v): return "uuid(\(v.uuidString))"
        default:
            throw CofferError(.query, "subscription query '\(text)' compares with \(value.summary), which a subscription cannot hold (ints, numbers, strings, bools, nil, ObjectId and UUID)")
        }
    }
}

/// An update of the subscriptions, which ``SyncSubscriptionSet/update(_:)``
/// hands to its block; committed as the next version when the block returns.
public final class MutableSubscriptionSet {
    let set: OpaquePointer
    /// The first failure of a call, thrown by the update (nothing is committed).
    var failure: CofferError?

    init(_ set: OpaquePointer) { self.set = set }

    /// Adds `subscription`; one with the same name, class and query changes
    /// nothing. A name taken by another query, a class the database does not
    /// have or a query a subscription cannot hold make the update throw.
    public func append<T: Object>(_ subscription: QuerySubscription<T>) {
        guard failure == nil else { return }
        switch subscription.query {
        case .failure(let error): failure = error
        case .success(let text):
            let status = coffer_subscription_set_append(set, subscription.name, T.className(), text)
            if status != COFFER_OK { failure = CofferError.last(status) }
        }
    }

    /// Removes the subscription named `name`; whether there was one.
    @discardableResult
    public func remove(named name: String) -> Bool {
        var removed: Int32 = 0
        let status = coffer_subscription_set_remove_named(set, name, &removed)
        if status != COFFER_OK, failure == nil { failure = CofferError.last(status) }
        return removed != 0
    }

    /// Removes every subscription of `type`.
    public func removeAll<T: Object>(ofType type: T.Type) {
        let status = coffer_subscription_set_remove_class(set, T.className(), nil)
        if status != COFFER_OK, failure == nil { failure = CofferError.last(status) }
    }

    /// Removes every subscription.
    public func removeAll() {
        let status = coffer_subscription_set_remove_all(set, nil)
        if status != COFFER_OK, failure == nil { failure = CofferError.last(status) }
    }

    /// The subscription named `name` in the update, if any.
    public func first(named name: String) -> SyncSubscription? {
        SyncSubscriptionSet.subscriptions(of: set).first { $0.name == name }
    }

    /// The number of subscriptions in the update.
    public var count: Int { coffer_subscription_set_count(set) }
}

/// A database's subscriptions (flexible sync, docs/SYNC.md): ``Database/subscriptions``.
/// They are stored in the file, versioned, and survive reopening; a database
/// opened with a flexible-sync configuration
/// (``User/flexibleSyncConfiguration(initialSubscriptions:)``) syncs them.
public struct SyncSubscriptionSet: Sendable {
    let handle: SharedHandle

    /// The latest set's version (0 before any update).
    public var version: Int { Int(snapshot { coffer_subscription_set_version($0) }) }

    /// The number of subscriptions.
    public var count: Int { snapshot { coffer_subscription_set_count($0) } }

    /// Every subscription, in the order appended.
    public var all: [SyncSubscription] { snapshot { Self.subscriptions(of: $0) } }

    /// The latest set's state.
    public var state: SyncSubscriptionState {
        snapshot { set in
            switch Int32(coffer_subscription_set_state(set)) {
            case Int32(COFFER_SUBSCRIPTION_BOOTSTRAPPING.rawValue): .bootstrapping
            case Int32(COFFER_SUBSCRIPTION_COMPLETE.rawValue): .complete
            case Int32(COFFER_SUBSCRIPTION_ERROR.rawValue): .error(String(cString: coffer_subscription_set_error(set)))
            case Int32(COFFER_SUBSCRIPTION_SUPERSEDED.rawValue): .superseded
            default: .pending
            }
        }
    }

    /// The subscription named `name`, if any.
    public func first(named name: String) -> SyncSubscription? { all.first { $0.name == name } }

    /// The first subscription of `type`, if any.
    public func first<T: Object>(ofType type: T.Type) -> SyncSubscription? {
        all.first { $0.objectClassName == T.className() }
    }

    /// Changes the subscriptions in `block` and commits them as a new
    /// version, then waits until the service has given the file what they
    /// select (the set is complete), as Realm's async `update`.
    ///
    /// - Throws: the first failure of the block's calls (nothing committed);
    ///   ``CofferError`` `.query` with the service's message when it refuses
    ///   the set; `.timeout` after `timeout`; `CancellationError`.
    public func update(timeout: Duration? = nil, isolation: isolated (any Actor)? = #isolation,
                       _ block: (MutableSubscriptionSet) throws -> Void) async throws {
        let version = try commit(block)
        try await waitForCompletion(version: version, timeout: timeout)
    }

    /// Changes the subscriptions in `block` and commits them at once;
    /// `onComplete` is called (on a thread of its own) with nil once the set
    /// is complete, or with the error.
    public func update(_ block: (MutableSubscriptionSet) throws -> Void,
                       onComplete: (@Sendable (Error?) -> Void)? = nil) {
        let version: UInt64
        do {
            version = try commit(block)
        } catch {
            onComplete?(error)
            return
        }
        guard let onComplete else { return }
        let subscriptions = self
        Task.detached {
            do {
                try await subscriptions.waitForCompletion(version: version)
                onComplete(nil)
            } catch {
                onComplete(error)
            }
        }
    }

    /// Waits until set `version` (the latest when nil) is complete.
    ///
    /// - Throws: ``CofferError`` `.query` when the service refused it,
    ///   `.timeout`, `.misuse` for a database that does not sync flexibly;
    ///   `CancellationError`.
    public func waitForCompletion(version: UInt64? = nil, timeout: Duration? = nil) async throws {
        let target = version ?? UInt64(self.version)
        let deadline = timeout.map { ContinuousClock.now.advanced(by: $0) }
        let handle = self.handle
        while true {
            try Task.checkCancellation()
            var millis: UInt64 = 250
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero {
                    throw CofferError(.timeout, "subscription set \(target) is not complete after \(timeout!)")
                }
                let (seconds, attoseconds) = left.components
                millis = min(millis, UInt64(seconds) * 1000 + UInt64(attoseconds / 1_000_000_000_000_000) + 1)
            }
            let slice = millis
            // The C error is the waiting thread's: read it there.
            let done = try await onThreadOfItsOwn(named: "coffer subscriptions wait") { () throws -> Bool in
                let status = coffer_subscriptions_wait(handle.pointer, target, slice)
                if status == COFFER_OK { return true }
                if status != COFFER_ERR_TIMEOUT { throw CofferError.last(status) }
                return false
            }
            if done { return }
        }
    }

    /// Runs `block` on an update of the latest set and commits it; its version.
    func commit(_ block: (MutableSubscriptionSet) throws -> Void) throws -> UInt64 {
        var set: OpaquePointer?
        try CofferError.check(coffer_subscriptions_update(handle.pointer, &set))
        defer { coffer_subscription_set_free(set) }
        let update = MutableSubscriptionSet(set!)
        try block(update)
        if let failure = update.failure { throw failure }
        var version: UInt64 = 0
        try CofferError.check(coffer_subscription_set_commit(set, &version))
        return version
    }

    /// At open: a flexible-sync configuration's initial subscriptions, for a
    /// file that has none yet (or at every open when asked).
    func applyInitial(_ sync: SyncConfiguration?) throws {
        guard let sync, sync.isFlexibleSync, let initial = sync.initialSubscriptions,
              sync.rerunInitialSubscriptionsOnOpen || version == 0 else { return }
        _ = try commit { initial($0) }
    }

    private func snapshot<R>(_ read: (OpaquePointer) -> R) -> R {
        var set: OpaquePointer?
        guard coffer_subscriptions_latest(handle.pointer, &set) == COFFER_OK, let set else {
            fatalError("Coffer: the subscriptions cannot be read: \(String(cString: coffer_last_error()))")
        }
        defer { coffer_subscription_set_free(set) }
        return read(set)
    }

    static func subscriptions(of set: OpaquePointer) -> [SyncSubscription] {
        (0..<coffer_subscription_set_count(set)).map { index in
            var name: UnsafePointer<CChar>?, cls: UnsafePointer<CChar>?, query: UnsafePointer<CChar>?
            _ = coffer_subscription_set_at(set, index, &name, &cls, &query)
            let text = String(cString: name!)
            return SyncSubscription(name: text.isEmpty ? nil : text, objectClassName: String(cString: cls!),
                                    queryString: String(cString: query!))
        }
    }
}

extension Database {
    /// The query subscriptions of flexible sync (docs/SYNC.md, "Flexible
    /// sync"), stored in the file: see ``SyncSubscriptionSet``.
    public var subscriptions: SyncSubscriptionSet { SyncSubscriptionSet(handle: sharedHandle) }
}
