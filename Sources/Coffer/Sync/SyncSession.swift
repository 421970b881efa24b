// SyncSession: the sync session of an open database, its state, its last
// error, pausing and resuming it (coffer_sync_state, coffer_sync_error,
// coffer_sync_pause, coffer_sync_resume).

internal import CCoffer

/// The sync session of a ``Database`` opened with a ``SyncConfiguration``:
/// ``Database/syncSession``.
///
/// The session runs on a thread of its own for as long as the file is open in
/// this process: it uploads local commits, integrates what other clients
/// uploaded, and connects again with backoff when the connection drops. These
/// calls tell its state, wait for it (``wait(for:timeout:)``), pause and resume
/// it. A `SyncSession` is `Sendable`: it may be used from any thread or task,
/// and it keeps the file open while it is held.
///
/// Observe ``state`` and ``connectionState`` with
/// ``observe(_:options:_:)`` (a ``NotificationToken``, as Realm's key-value
/// observation) or as async sequences (``connectionStates``, ``states``).
public final class SyncSession: Sendable {
    /// Whether the session is running, as Realm's `SyncSession.State`.
    ///
    /// The C core's states map to it as: `COFFER_SYNC_CONNECTING`,
    /// `COFFER_SYNC_CONNECTED` and `COFFER_SYNC_DISCONNECTED` (waiting out the
    /// backoff before connecting again) are ``active``; `COFFER_SYNC_PAUSED` is
    /// ``paused``; `COFFER_SYNC_FAILED` (the service refused the session for
    /// good, see ``SyncSession/lastError``) and `COFFER_SYNC_OFF` (the
    /// database was closed) are ``inactive``.
    public enum State: Sendable, Equatable {
        /// Connecting, connected, or waiting to connect again.
        case active
        /// Stopped by ``SyncSession/pause()`` until ``SyncSession/resume()``.
        case paused
        /// The service refused the session for good (a refused token, a schema
        /// the service's does not accept, ...): nothing is uploaded or downloaded
        /// until ``SyncSession/resume()``. ``SyncSession/lastError`` says why.
        /// Also the state a session ends in when its database is closed.
        case inactive
    }

    /// The state of the session's connection, as Realm's
    /// `SyncSession.ConnectionState`.
    ///
    /// `COFFER_SYNC_CONNECTED` is ``connected``; `COFFER_SYNC_CONNECTING`
    /// (connecting, or waiting for the service's WELCOME) is ``connecting``;
    /// every other state is ``disconnected``.
    public enum ConnectionState: Sendable, Equatable {
        case disconnected
        case connecting
        case connected
    }

    /// The open file; the session lives as long as it is open.
    let sharedHandle: SharedHandle

    init(_ sharedHandle: SharedHandle) {
        self.sharedHandle = sharedHandle
    }

    var cState: Int32 {
        coffer_sync_state(sharedHandle.pointer)
    }

    /// Whether the session is running; see ``State`` for how the C core's
    /// states map to it.
    public var state: State {
        Self.state(of: cState)
    }

    /// Whether the session is connected to the service.
    public var connectionState: ConnectionState {
        Self.connectionState(of: cState)
    }

    static func state(of cState: Int32) -> State {
        switch UInt32(bitPattern: cState) {
        case COFFER_SYNC_PAUSED.rawValue: .paused
        case COFFER_SYNC_FAILED.rawValue, COFFER_SYNC_OFF.rawValue: .inactive
        default: .active
        }
    }

    static func connectionState(of cState: Int32) -> ConnectionState {
        switch UInt32(bitPattern: cState) {
        case COFFER_SYNC_CONNECTED.rawValue: .connected
        case COFFER_SYNC_CONNECTING.rawValue: .connecting
        default: .disconnected
        }
    }

    /// The session's last error: the service's refusal (its `ERROR` frame) or a
    /// failed connection, nil when there was none. It stays set while the
    /// session retries; ``State/inactive`` means it was final.
    public var lastError: SyncError? {
        var buffer = [CChar](repeating: 0, count: 512)
        guard coffer_sync_error(sharedHandle.pointer, &buffer, buffer.count) == COFFER_OK else { return nil }
        let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return message.isEmpty ? nil : SyncError(message: message, isFatal: state == .inactive)
    }

    /// Closes the connection and keeps it closed until ``resume()``. Local writes
    /// go on and are uploaded after. It returns at once; the session thread
    /// closes the connection after the frame it is handling, if any (so a
    /// download that had arrived may still be integrated). ``state`` is
    /// ``State/paused`` as soon as this returns, and observers have been told.
    public func pause() {
        _ = coffer_sync_pause(sharedHandle.pointer)
    }

    /// Connects again after ``pause()`` (at once, without backoff), or tries
    /// again after the service refused the session (``State/inactive``).
    public func resume() {
        _ = coffer_sync_resume(sharedHandle.pointer)
    }
}
