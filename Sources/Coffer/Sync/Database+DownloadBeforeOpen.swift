// Opening a synced database after downloading the service's state, as
// Realm's `Realm(configuration:downloadBeforeOpen:)`: the C core's
// coffer_config_set_sync_download_before_open, waited for on a thread of its
// own before the database is opened isolated to the caller.

import Foundation
internal import CCoffer

extension Database {
    /// When opening a synced database waits for the service's state, as
    /// Realm's `OpenBehavior`.
    public enum OpenBehavior: Sendable, Equatable {
        /// Open at once with what the file has (the default of
        /// ``init(configuration:isolation:)``).
        case never
        /// Download first when the file never synced before (a new file).
        case once
        /// Download first at every open.
        case always
    }
}

/// What an open downloads first: the behavior, how long it may wait, and who
/// is told the download's progress.
struct SyncDownload: Sendable {
    var behavior: Database.OpenBehavior
    var timeout: Duration?
    var progress: (@Sendable (SyncSession.Progress) -> Void)?

    func install(on config: OpaquePointer) throws(CofferError) {
        let mode = switch behavior {
        case .never: COFFER_SYNC_DOWNLOAD_NEVER
        case .once: COFFER_SYNC_DOWNLOAD_ONCE
        case .always: COFFER_SYNC_DOWNLOAD_ALWAYS
        }
        var millis: UInt64 = 0
        if let timeout {
            let (seconds, attoseconds) = timeout.components
            millis = max(1, UInt64(max(0, seconds)) * 1000 + UInt64(max(0, attoseconds) / 1_000_000_000_000_000))
        }
        try CofferError.check(coffer_config_set_sync_download_before_open(config, Int32(mode.rawValue), millis))
    }
}

extension Database {
    /// Opens a synced database once it has what the service has, as Realm's
    /// `try await Realm(configuration:downloadBeforeOpen:)`: with
    /// ``OpenBehavior/always`` (or ``OpenBehavior/once`` and a file that never
    /// synced) the session connects and integrates everything the service had
    /// on a thread of its own, then the database is opened isolated to the
    /// calling actor, as ``init(configuration:isolation:)`` does. A
    /// configuration without sync opens at once.
    ///
    /// ```swift
    /// let db = try await Database(configuration: config, downloadBeforeOpen: .always)
    /// ```
    ///
    /// - Parameters:
    ///   - timeout: how long the download may take; nil waits as long as it takes.
    ///   - isolation: the calling actor; leave it to its default.
    /// - Throws: as ``init(configuration:)`` does; ``CofferError`` `.timeout`
    ///   when the service was not reached or did not finish in time (what was
    ///   integrated stays in the file), `.misuse` when the service refused the
    ///   session for good (the message says why).
    public convenience init(configuration: Configuration = .defaultConfiguration, downloadBeforeOpen: OpenBehavior,
                            timeout: Duration? = nil, isolation: isolated (any Actor)? = #isolation) async throws {
        try await Self.download(configuration, SyncDownload(behavior: downloadBeforeOpen, timeout: timeout))
        let confinement: Confinement = isolation.map { .actor(WeakActor(actor: $0)) } ?? .thread(pthread_self())
        try self.init(configuration: configuration, confinement: confinement)
    }

    /// Opens `configuration` on a thread of its own, downloading as `download`
    /// says, and closes it again; nothing without sync or with `.never`.
    static func download(_ configuration: Configuration, _ download: SyncDownload) async throws {
        guard configuration.syncConfiguration != nil, download.behavior != .never,
              configuration.inMemoryIdentifier == nil else { return }
        try await onThreadOfItsOwn(named: "Coffer download") {
            try prepare(configuration, download: download) { _ in true }
        }
    }
}
