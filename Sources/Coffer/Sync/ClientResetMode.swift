// Client reset modes (docs/SYNC.md, "Client reset"): what a synced database
// does when the service answers CLIENT_RESET, as Realm's ClientResetMode
// (SyncCallbacks, in SyncErrorHandler.swift, carries it to the core).

import Foundation
internal import CCoffer

/// What a synced database does when the service cannot bring it up to date
/// (a client reset): it missed more history than the service's maximum
/// offline time, or its file is behind what its client id acknowledged (a
/// restored backup). As Realm's `ClientResetMode`, whose default is also
/// ``recoverUnsyncedChanges(beforeReset:afterReset:)``.
///
/// ```swift
/// var sync = SyncConfiguration(url: url, partitionValue: "team-1")
/// sync.clientResetMode = .discardUnsyncedChanges(afterReset: { print("reset done") })
/// ```
///
/// The callbacks run on the database's sync thread: `beforeReset` before the
/// file is changed, `afterReset` once the first download after the reset is
/// integrated. They are told, not given databases (Realm passes the before
/// and after realms): read the database from your own thread or actor.
public enum ClientResetMode: Sendable {
    /// Deletes the file's synced objects and its commits not yet uploaded,
    /// and downloads the service's state afresh as a new client.
    case discardUnsyncedChanges(beforeReset: (@Sendable () -> Void)? = nil, afterReset: (@Sendable () -> Void)? = nil)
    /// Keeps the file's objects and its commits not yet uploaded, uploads
    /// them again as a new client and downloads the partition's history
    /// again; the merge rules combine both (docs/SYNC.md, "Merge rules").
    case recoverUnsyncedChanges(beforeReset: (@Sendable () -> Void)? = nil, afterReset: (@Sendable () -> Void)? = nil)
    /// Changes nothing: the session stops (``SyncSession/state`` `.inactive`)
    /// and ``SyncConfiguration/errorHandler`` is told, with
    /// ``SyncError/ServiceCode/clientReset``.
    case manual

    var cMode: coffer_client_reset_mode {
        switch self {
        case .discardUnsyncedChanges: COFFER_CLIENT_RESET_DISCARD_UNSYNCED
        case .recoverUnsyncedChanges: COFFER_CLIENT_RESET_RECOVER_UNSYNCED
        case .manual: COFFER_CLIENT_RESET_MANUAL
        }
    }

    var callbacks: (before: (@Sendable () -> Void)?, after: (@Sendable () -> Void)?) {
        switch self {
        case .discardUnsyncedChanges(let before, let after), .recoverUnsyncedChanges(let before, let after):
            (before, after)
        case .manual: (nil, nil)
        }
    }
}
