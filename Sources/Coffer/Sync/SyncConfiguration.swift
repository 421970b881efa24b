// SyncConfiguration: where and what a database syncs, and setting it on a C
// configuration (coffer_config_set_sync and the token callback).

import Foundation
internal import CCoffer

/// Where and what a database syncs with a `coffer-sync` service (docs/SYNC.md).
///
/// Set it as ``Database/Configuration/syncConfiguration`` (or pass it as the
/// `sync:` argument of the configuration's initializer). Every ``Database``
/// opened with the configuration runs a sync session in the background: local
/// commits are uploaded in order, the partition's changes from other clients are
/// downloaded and integrated, and the connection is made again with backoff
/// when it drops. Writes never wait for the network; see ``SyncSession``.
///
/// ```swift
/// let sync = SyncConfiguration(url: URL(string: "ws://127.0.0.1:7800/sync/v1")!,
///                              partitionValue: "team-1")
/// let config = Database.Configuration(fileURL: url, objectTypes: [Note.self], sync: sync)
/// let db = try Database(configuration: config)
/// ```
///
/// With a service that authenticates its clients, log in through an ``App``
/// and use ``User/configuration(partitionValue:)`` instead, which sets ``user``.
///
/// Every top-level class of a synced database needs a primary key (opening
/// throws `.schema` naming the class otherwise), and a file syncs one partition
/// for good: opening it with another throws `.invalidArgument` naming both.
public struct SyncConfiguration: Sendable {
    /// The service's sync endpoint, `ws://HOST:PORT/sync/v1` or
    /// `wss://HOST/sync/v1`. Without a ``transport`` the connection is the C
    /// core's built-in WebSocket client, which has no TLS: opening a database
    /// with a `wss://` URL and no transport, or with any URL that is not
    /// `ws://` or `wss://` with a host, throws ``CofferError``
    /// `.invalidArgument` naming it.
    public var url: URL

    /// The partition whose objects the file holds; not empty.
    public var partitionValue: String

    /// The logged-in user whose access token every connection sends, refreshed
    /// by the session when the service reports it expired; nil for a service in
    /// development mode, which needs no token.
    public var user: User?

    /// How the session reaches the service; nil for the C core's built-in
    /// `ws://` client. `wss://` URLs need one that speaks TLS, such as
    /// `NIOWebSocketTransport` of the `CofferSyncNIO` library:
    ///
    /// ```swift
    /// import CofferSyncNIO
    ///
    /// let sync = SyncConfiguration(url: URL(string: "wss://sync.example.com/sync/v1")!,
    ///                              partitionValue: "team-1",
    ///                              transport: NIOWebSocketTransport())
    /// ```
    public var transport: (any SyncTransport)? {
        get { transportBridge?.transport }
        set { transportBridge = newValue.map(SyncTransportBridge.init) }
    }

    /// The C transport over ``transport``, kept by the configuration so that
    /// every handle opened with it keeps it.
    private(set) var transportBridge: SyncTransportBridge?
    /// Told of every error the service reports (its `ERROR` frames), as
    /// Realm's sync error handler: a ``SyncError/ServiceCode/compensatingWrite``
    /// when the service's permission rules refused a write (the session
    /// reverts it to the service's state of the object, and goes on), or an
    /// error that stops or restarts the session. It runs on the database's
    /// sync thread, which waits for it: return soon, and do not close the
    /// database or wait for sync from it; hop to your own actor for UI work.
    public var errorHandler: (@Sendable (SyncError) -> Void)? {
        get { callbacks?.errorHandler }
        set { callbacks = SyncCallbacks(errorHandler: newValue, clientResetMode: clientResetMode) }
    }

    /// What the database does when the service answers with a client reset
    /// (docs/SYNC.md, "Client reset"); Realm's default,
    /// ``ClientResetMode/recoverUnsyncedChanges(beforeReset:afterReset:)``.
    public var clientResetMode: ClientResetMode {
        get { callbacks?.clientResetMode ?? .recoverUnsyncedChanges() }
        set { callbacks = SyncCallbacks(errorHandler: errorHandler, clientResetMode: newValue) }
    }

    /// The error handler and the reset mode in one box (nil: neither set),
    /// which the handle keeps while the session runs.
    private(set) var callbacks: SyncCallbacks?

    /// Flexible sync (docs/SYNC.md, "Flexible sync"): the file holds the
    /// objects of ``partitionValue``'s data set that match its
    /// ``Database/subscriptions``, not all of them. Set by
    /// ``User/flexibleSyncConfiguration(initialSubscriptions:rerunOnOpen:)``.
    public var isFlexibleSync = false

    /// The subscriptions a flexible-sync database gets when it is first
    /// opened (or at every open with ``rerunInitialSubscriptionsOnOpen``), as Realm's.
    public var initialSubscriptions: (@Sendable (MutableSubscriptionSet) -> Void)?

    /// Runs ``initialSubscriptions`` at every open, not only the first.
    public var rerunInitialSubscriptionsOnOpen = false

    /// The data set of flexible-sync configurations made by ``User``.
    public static let flexibleSyncDataSet = "flexible"

    /// A configuration syncing `partitionValue` with the service at `url`, as
    /// `user` when the service authenticates its clients, through `transport`
    /// (nil: the built-in `ws://` client).
    public init(url: URL, partitionValue: String, user: User? = nil, transport: (any SyncTransport)? = nil) {
        self.url = url
        self.partitionValue = partitionValue
        self.user = user
        self.transport = transport
    }

    /// Sets sync on the C configuration `config`. The user and the error
    /// box, the callbacks' contexts, must outlive every handle opened with
    /// `config`: ``SharedHandle`` keeps them.
    func install(on config: OpaquePointer) throws(CofferError) {
        let text = url.absoluteString
        if url.scheme?.lowercased() == "wss" && transportBridge == nil {
            throw CofferError(.invalidArgument, "sync url '\(text)': the built-in transport has no TLS; "
                + "give a transport that speaks TLS (NIOWebSocketTransport of CofferSyncNIO) or use a ws:// URL")
        }
        guard ["ws", "wss"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw CofferError(.invalidArgument, "sync url '\(text)' is not a ws:// or wss:// URL with a host")
        }
        guard !partitionValue.isEmpty else {
            throw CofferError(.invalidArgument, "sync partitionValue is empty")
        }
        try CofferError.check(coffer_config_set_sync(config, text, partitionValue))
        if isFlexibleSync { try CofferError.check(coffer_config_set_sync_flexible(config, 1)) }
        if let transportBridge {
            var cTransport = transportBridge.cTransport
            try CofferError.check(coffer_config_set_sync_transport(config, &cTransport))
        }
        if let user {
            let context = Unmanaged.passUnretained(user).toOpaque()
            try CofferError.check(coffer_config_set_sync_token_callback(config, { ctx, refresh, buf, size in
                let user = Unmanaged<User>.fromOpaque(ctx!).takeUnretainedValue()
                return user.supplySessionToken(refresh: refresh != 0, into: buf!, size: size)
            }, context))
        }
        try callbacks?.install(on: config)
    }
}
