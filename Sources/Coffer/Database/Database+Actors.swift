// Opening a Database isolated to an actor: Database(actor:) for any actor, and
// the async initializer, isolated to the calling actor such as the main actor.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Database {
    /// Opens the database `configuration` describes, isolated to `actor`.
    ///
    /// ```swift
    /// actor DogStore {
    ///     var db: Database!
    ///     func open() async throws {
    ///         db = try await Database(configuration: config, actor: self)
    ///     }
    /// }
    /// ```
    ///
    /// The database, its objects and results can then be used by code isolated
    /// to `actor`, across `await`, whichever thread its executor resumes on; see
    /// ``asyncWrite(isolation:_:)`` for writes that do not block the actor. Used
    /// outside `actor`, the database stops the program with a message saying so.
    /// A global actor is passed as its shared instance: `actor: MainActor.shared`.
    ///
    /// - Throws: as ``init(configuration:)`` does.
    public convenience init<A: Actor>(configuration: Configuration = .defaultConfiguration, actor: isolated A) async throws {
        try self.init(configuration: configuration, confinement: .actor(WeakActor(actor: actor)))
    }

    /// Opens the database `configuration` describes, isolated to the calling
    /// actor: `try await Database()` in main-actor code opens it on the main
    /// actor, as Realm's async initializer does; inside an actor it is
    /// ``init(configuration:actor:)`` with that actor.
    ///
    /// Called from code isolated to no actor, it opens the database confined to
    /// the current thread, as ``init(configuration:)`` does: use it there
    /// only within one synchronous stretch.
    ///
    /// - Parameter isolation: the calling actor; leave it to its default.
    /// - Throws: as ``init(configuration:)`` does.
    public convenience init(configuration: Configuration = .defaultConfiguration,
                            isolation: isolated (any Actor)? = #isolation) async throws {
        let confinement: Confinement = isolation.map { .actor(WeakActor(actor: $0)) } ?? .thread(pthread_self())
        try self.init(configuration: configuration, confinement: confinement)
    }
}

extension Database {
    /// Opens the database `configuration` describes without blocking the
    /// caller, as Realm's `Realm.asyncOpen(configuration:)`: the work opening
    /// may take (copying the seed file, running the migration, compacting)
    /// happens on a thread of its own, then the database is opened isolated to
    /// the calling actor, as ``init(configuration:isolation:)`` does.
    ///
    /// ```swift
    /// @MainActor func load() async throws {
    ///     let db = try await Database.asyncOpen(configuration: config)  // migrated off the main actor
    ///     show(db.objects(Dog.self))
    /// }
    /// ```
    ///
    /// An in-memory configuration is opened directly: closing it in between
    /// would drop its data.
    ///
    /// `progress`, if given, is told how far each long step is (see
    /// ``OpenProgress``), on the thread doing them. Cancelling the calling
    /// task cancels those steps at their next report: the file is left as it
    /// was and ``CofferError`` `.cancelled` is thrown.
    ///
    /// ```swift
    /// let db = try await Database.asyncOpen(configuration: config) { progress in
    ///     print(progress.step, progress.fractionCompleted)
    /// }
    /// ```
    ///
    /// - Parameters:
    /// A synced configuration first downloads what the service has, as
    /// Realm's `asyncOpen` does (`downloadBeforeOpen`, see
    /// ``init(configuration:downloadBeforeOpen:timeout:isolation:)``); its
    /// progress is reported as the step ``OpenProgress/Step/download``.
    ///
    /// - Parameters:
    ///   - downloadBeforeOpen: when a synced configuration downloads first.
    ///   - timeout: how long that download may take; nil waits as long as it takes.
    ///   - isolation: the calling actor; leave it to its default.
    ///   - progress: told the progress of a seed copy, the compact-on-launch
    ///     check, a compaction, a migration and the download.
    /// - Throws: as ``init(configuration:)`` does, from whichever open failed;
    ///   `.cancelled` if the task was cancelled during a long step; `.timeout`
    ///   when the download did not finish in time.
    public static func asyncOpen(configuration: Configuration = .defaultConfiguration,
                                 downloadBeforeOpen: OpenBehavior = .always, timeout: Duration? = nil,
                                 isolation: isolated (any Actor)? = #isolation,
                                 progress: (@Sendable (OpenProgress) -> Void)? = nil) async throws -> Database {
        if configuration.inMemoryIdentifier == nil {
            let cancelled = LockedValue(false)
            let download = configuration.syncConfiguration == nil ? nil : SyncDownload(
                behavior: downloadBeforeOpen, timeout: timeout,
                progress: { p in progress?(OpenProgress(step: .download, fractionCompleted: p.progressEstimate)) })
            try await withTaskCancellationHandler {
                try await onThreadOfItsOwn(named: "Coffer open") {
                    try prepare(configuration, download: download) { report in
                        guard !cancelled.withLock({ $0 }) else { return false }
                        progress?(report)
                        return true
                    }
                }
            } onCancel: {
                cancelled.withLock { $0 = true }
            }
        }
        return try await Database(configuration: configuration, isolation: isolation)
    }
}
