// The callbacks the C core makes while a database opens: the migration block,
// the compact-on-launch decision and the progress of the long steps.

internal import CCoffer

/// What the C core calls back while `coffer_open()` runs: the migration block
/// and the compact-on-launch decision of a configuration. It lives for one open
/// and keeps the Swift error a migration block threw, to rethrow it as it was.
final class OpenCallbacks {
    let migrationBlock: MigrationBlock?
    let shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)?
    /// Told the progress of a seed copy, a compaction and a migration; false
    /// cancels the open (see ``OpenProgressHandler``).
    let progress: OpenProgressHandler?
    /// The step the last report was about.
    private var phaseUnderWay: coffer_progress_phase?
    /// The error that aborted the migration, thrown by the block or kept by the ``Migration``.
    private(set) var migrationError: (any Error)?

    init(_ configuration: Database.Configuration, progress: OpenProgressHandler? = nil) {
        migrationBlock = configuration.migrationBlock
        shouldCompactOnLaunch = configuration.shouldCompactOnLaunch
        self.progress = progress
    }

    /// Registers the callbacks on `config`; `self` must outlive `coffer_open()`.
    func install(on config: OpaquePointer) throws(CofferError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        if migrationBlock != nil {
            try CofferError.check(coffer_config_set_migration(config, { migration, oldVersion, _, ctx in
                let callbacks = Unmanaged<OpenCallbacks>.fromOpaque(ctx!).takeUnretainedValue()
                return callbacks.migrate(migration!, oldVersion)
            }, context))
        }
        if shouldCompactOnLaunch != nil {
            try CofferError.check(coffer_config_set_should_compact_on_launch(config, { total, used, ctx in
                let callbacks = Unmanaged<OpenCallbacks>.fromOpaque(ctx!).takeUnretainedValue()
                return callbacks.shouldCompactOnLaunch!(Int(clamping: total), Int(clamping: used)) ? 1 : 0
            }, context))
        }
        if progress != nil {
            try CofferError.check(coffer_config_set_progress(config, { phase, done, total, ctx in
                let callbacks = Unmanaged<OpenCallbacks>.fromOpaque(ctx!).takeUnretainedValue()
                return callbacks.report(phase, done, total) ? 0 : 1
            }, context))
        }
    }

    /// Hands one report of the C core to ``progress``; false cancels. A step
    /// with nothing to do is reported as 0 of 0 twice: 0 first, then 1.
    private func report(_ phase: coffer_progress_phase, _ done: UInt64, _ total: UInt64) -> Bool {
        let starting = phaseUnderWay != phase
        phaseUnderWay = phase
        let fraction = starting ? 0 : total == 0 ? 1 : Double(done) / Double(total)
        let step: OpenProgress.Step
        switch phase {
        case COFFER_PROGRESS_SEED_COPY: step = .seedCopy
        case COFFER_PROGRESS_SHOULD_COMPACT: step = .compactionCheck
        case COFFER_PROGRESS_COMPACTION: step = .compaction
        case COFFER_PROGRESS_MIGRATION: step = .migration
        default: return true
        }
        return progress!(OpenProgress(step: step, fractionCompleted: fraction))
    }

    private func migrate(_ handle: OpaquePointer, _ oldVersion: UInt64) -> coffer_status {
        let migration = Migration(handle: handle)
        defer { migration.finish() }
        do {
            try migrationBlock!(migration, oldVersion)
        } catch {
            migrationError = error
            return COFFER_ERR_MIGRATION_REQUIRED
        }
        if let error = migration.error {
            migrationError = error
            return coffer_status(UInt32(error.status))
        }
        return COFFER_OK
    }
}
