// Database: one open database, its C handle, its thread, its class bindings and
// opening and closing it.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
internal import CCoffer

/// An open Coffer database: the entry point for reading and writing objects.
///
/// ```swift
/// var config = Database.Configuration(fileURL: url, objectTypes: [Dog.self])
/// let db = try Database(configuration: config)
/// try db.write {
///     db.add(Dog(value: ["name": "Rex"]))
/// }
/// let dogs = db.objects(Dog.self)
/// ```
///
/// ## Threads
///
/// A `Database` belongs to the thread that opened it, as a Realm does: it and its
/// managed objects and results are not `Sendable`, so Swift 6 refuses to pass them
/// to another thread or task. Code that gets around the compiler still cannot
/// corrupt anything: a throwing method called from another thread throws a
/// ``CofferError`` with code `.misuse`, and a property of a managed object or a
/// ``Results`` read there stops the program with a message saying so. Open one
/// `Database` per thread instead; they share the file's storage.
///
/// ## Actors
///
/// In `async` code, open the database isolated to an actor instead:
/// `try await Database(actor: self)` inside an actor, `try await Database()` on
/// the main actor. Such a database is usable from that actor across `await`,
/// whichever thread its executor resumes on, and
/// ``asyncWrite(isolation:_:)`` writes without blocking the actor. Used outside
/// its actor it stops the program with a message saying so, also from its
/// throwing methods: only the actor's executor can tell where it runs.
///
/// ## Snapshots
///
/// Reads see a snapshot taken at the first read after opening, after a write
/// transaction ends or after ``refresh()``. Commits made meanwhile through other
/// `Database` instances or processes appear after ``refresh()`` or at the next
/// ``beginWrite()``, as in a Realm without a run loop.
public final class Database {
    /// The error type of Coffer, as `Realm.Error` in Realm.
    public typealias Error = CofferError

    /// The configuration the database was opened with.
    public let configuration: Configuration

    let handle: OpaquePointer
    /// Owns `handle`, shared with the frozen and thawed databases made from this one.
    let sharedHandle: SharedHandle
    let confinement: Confinement
    /// Serializes every read of a frozen database; nil for a live one.
    let frozenLock: FrozenLock?
    /// For a frozen database, the live one it was frozen from, which
    /// ``thaw(isolation:)`` returns where it may be used.
    weak var liveSource: Database?
    /// For a live database, its latest frozen view, reused while its snapshot
    /// stays the same (see ``freeze()``).
    weak var latestFrozen: Database?
    /// For a frozen database, the version of the file it shows.
    let frozenVersion: UInt64
    /// Serializes ``asyncWrite(isolation:_:)`` calls and tells synchronous
    /// writes that one is under way.
    let asyncWrites = AsyncWriteQueue()
    /// The thread holding the write lock of an ``asyncWrite(isolation:_:)``,
    /// which must also end the transaction.
    var writeLockThread: WriteLockThread?
    /// The thread that begins and ends every asyncWrite of this database,
    /// made by the first one and stopped with the database.
    var asyncWriteThread: WriteLockThread?
    /// The ``beginAsyncWrite(isolation:_:)`` and ``commitAsyncWrite(isolation:allowGrouping:_:)``
    /// calls under way.
    var asyncTransactions = AsyncTransactions()
    var readTransaction: OpaquePointer? {
        didSet { transactionSerial &+= 1 }
    }
    var writeTransaction: OpaquePointer? {
        didSet { transactionSerial &+= 1 }
    }
    /// Assignments to one managed object waiting to be written together.
    var pendingWrites = PendingWrites()
    /// Changes whenever a transaction begins or ends, so that object handles
    /// kept by managed objects are used only in the transaction that opened them.
    private(set) var transactionSerial: UInt64 = 0
    var bindings: [ObjectIdentifier: ClassBinding] = [:]
    /// Compiled queries by class and text, rebound for new arguments.
    var preparedQueries = PreparedQueries()
    /// Changes whenever the snapshot changes or objects are created or deleted,
    /// so that ``Results`` know when their cached keys are stale.
    var contentVersion: UInt64 = 0
    /// Shared by the objects added in the current write transaction, which are
    /// invalidated if it is cancelled.
    var currentWriteOutcome: WriteOutcome?
    /// Observers' calls waiting for this database's thread or actor, and how
    /// they get there (see ``refresh()``).
    let notifications = NotificationState()

    /// Opens the database `configuration` describes, creating its file if needed
    /// (unless read-only).
    ///
    /// `try Database()` opens ``Configuration/defaultConfiguration``.
    ///
    /// - Throws: ``CofferError``: `.invalidArgument` for a bad configuration (a key
    ///   that is not 64 bytes, an empty in-memory identifier, a URL that is not a
    ///   file URL); `.notFound` (read-only and no file); `.keyRequired`,
    ///   `.wrongKey`, `.notEncrypted`; `.migrationRequired` (the classes differ
    ///   from the file's at the same schema version) or `.schemaVersion` (a version
    ///   lower than the file's), unless ``Configuration/deleteDatabaseIfMigrationNeeded``
    ///   (then `.busy` if the file is open elsewhere in this process);
    ///   `.schema` for an invalid model class; `.notADatabase`, `.corrupted`, `.io`.
    ///   If ``Configuration/migrationBlock`` throws, that error; if a call it made
    ///   failed, the first such ``CofferError`` (see ``Migration``). A failed
    ///   migration leaves the file as it was.
    public convenience init(configuration: Configuration = .defaultConfiguration) throws {
        try self.init(configuration: configuration, confinement: .thread(pthread_self()))
    }

    init(configuration: Configuration, confinement: Confinement, progress: OpenProgressHandler? = nil,
         download: SyncDownload? = nil) throws {
        let path = try configuration.filePath()
        let syncStates = configuration.syncConfiguration == nil ? nil : SyncStateHub()
        if let report = download?.progress, let hub = syncStates?.progress {
            _ = hub.add { direction, p in if direction == .download { report(p) } }
        }
        sharedHandle = SharedHandle(try Self.open(configuration, path: path, progress: progress, syncStates: syncStates,
                                                  download: download),
                                    path: path, sync: configuration.syncConfiguration, syncStates: syncStates)
        handle = sharedHandle.pointer
        self.configuration = configuration
        self.confinement = confinement
        frozenLock = nil
        frozenVersion = 0
        try subscriptions.applyInitial(configuration.syncConfiguration)
    }

    /// Another database on `source`'s open file: frozen (`frozenTransaction`
    /// is its pinned read transaction, which it owns) or live and confined by
    /// `confinement`. It knows the classes `source` has bound.
    init(sharing source: Database, confinement: Confinement,
         frozenTransaction: OpaquePointer? = nil, frozenVersion: UInt64 = 0) {
        sharedHandle = source.sharedHandle
        handle = sharedHandle.pointer
        configuration = source.configuration
        self.confinement = confinement
        frozenLock = frozenTransaction == nil ? nil : FrozenLock()
        self.frozenVersion = frozenVersion
        bindings = source.bindings
        readTransaction = frozenTransaction
    }

    /// A frozen database on `sharedHandle` reading `frozenTransaction` (which it
    /// owns), made away from the live database's thread from what was copied
    /// there: notifications delivered on a queue or an actor read through it.
    init(frozenOn sharedHandle: SharedHandle, configuration: Configuration,
         bindings: [ObjectIdentifier: ClassBinding], frozenTransaction: OpaquePointer, frozenVersion: UInt64) {
        self.sharedHandle = sharedHandle
        handle = sharedHandle.pointer
        self.configuration = configuration
        confinement = .frozen
        frozenLock = FrozenLock()
        self.frozenVersion = frozenVersion
        self.bindings = bindings
        readTransaction = frozenTransaction
    }

    /// Opens the file at `fileURL` with the rest of ``Configuration/defaultConfiguration``.
    public convenience init(fileURL: URL) throws {
        var configuration = Configuration.defaultConfiguration
        configuration.fileURL = fileURL
        try self.init(configuration: configuration)
    }

    deinit {
        asyncWriteThread?.stop()
        coffer_txn_free(writeTransaction)
        coffer_txn_free(readTransaction)
    }

    private static func open(_ configuration: Configuration, path: String?, progress: OpenProgressHandler?,
                             syncStates: SyncStateHub? = nil, download: SyncDownload? = nil) throws -> OpaquePointer {
        if configuration.readOnly && configuration.deleteDatabaseIfMigrationNeeded {
            throw CofferError(.invalidArgument, "readOnly and deleteDatabaseIfMigrationNeeded cannot both be set")
        }
        if configuration.readOnly && configuration.shouldCompactOnLaunch != nil {
            throw CofferError(.invalidArgument, "readOnly and shouldCompactOnLaunch cannot both be set")
        }
        let config = try configuration.makeCConfig(path: path)
        defer { coffer_config_free(config) }
        let callbacks = OpenCallbacks(configuration, progress: progress)
        try callbacks.install(on: config)
        try syncStates?.install(on: config)
        if configuration.syncConfiguration != nil, let download { try download.install(on: config) }
        var db: OpaquePointer?
        let status = withExtendedLifetime(callbacks) { coffer_open(config, &db) }
        if status != COFFER_OK {
            // The migration block's own error, rather than the status standing for it.
            if let error = callbacks.migrationError {
                throw error
            }
            throw CofferError.last(status)
        }
        if configuration.objectTypes?.isEmpty ?? true, !configuration.readOnly {
            return addingProgramClasses(to: db!, config: config)
        }
        return db!
    }

    /// Without ``Configuration/objectTypes``, as Realm does, the program's own
    /// ``Object`` subclasses that the file lacks are added to it: `db` is
    /// reopened with the file's classes and those. If that fails (a class
    /// the C core refuses), `db` stays as it was opened, with the file's classes.
    private static func addingProgramClasses(to db: OpaquePointer, config: OpaquePointer) -> OpaquePointer {
        let added = ProgramSchema.classesToAdd(to: db)
        guard !added.isEmpty else { return db }
        var classes: [coffer_class_schema] = (0..<coffer_db_class_count(db)).compactMap {
            coffer_db_class_schema(db, coffer_class_id($0))?.pointee
        }
        let programSchema = CSchema(added)
        classes.append(contentsOf: programSchema.classes.prefix(programSchema.count))
        let status = withExtendedLifetime(programSchema) {
            coffer_config_set_schema(config, classes, classes.count, coffer_db_schema_version(db))
        }
        guard status == COFFER_OK else { return db }
        coffer_close(db)
        var reopened: OpaquePointer?
        if coffer_open(config, &reopened) == COFFER_OK, let reopened {
            return reopened
        }
        // Opened a moment ago without the added classes: open it so again.
        _ = coffer_config_set_schema(config, nil, 0, 0)
        var plain: OpaquePointer?
        _ = coffer_open(config, &plain)
        return plain!
    }

    /// True if the database's file exists; false for an in-memory configuration.
    public static func fileExists(for configuration: Configuration) -> Bool {
        guard let path = try? configuration.filePath() else { return false }
        return FileManager.default.fileExists(atPath: path)
    }

    /// Deletes the database's file and its lock file.
    ///
    /// - Returns: true if a file was deleted, false if there was none (always false
    ///   for an in-memory configuration).
    /// - Throws: ``CofferError`` `.busy` if a ``Database`` in this process has the
    ///   file open, `.io` naming the path if a file cannot be removed.
    @discardableResult
    public static func deleteFiles(for configuration: Configuration) throws -> Bool {
        guard let path = try configuration.filePath() else { return false }
        if OpenFiles.isOpen(path) {
            throw CofferError(.busy, "cannot delete '\(path)': it is open in this process")
        }
        return try deleteFiles(at: path)
    }

    @discardableResult
    private static func deleteFiles(at path: String) throws(CofferError) -> Bool {
        var deleted = false
        for file in [path, path + "-lock", path + "-note"] where FileManager.default.fileExists(atPath: file) {
            do {
                try FileManager.default.removeItem(atPath: file)
                deleted = true
            } catch {
                throw CofferError(.io, "cannot delete '\(file)': \(error.localizedDescription)")
            }
        }
        return deleted
    }

    // MARK: Threads

    /// True where the database may be used, as far as can be told without
    /// stopping the program: false on another thread and, for a database isolated
    /// to an actor, always (only the actor's executor can tell, see
    /// ``requireIsolation()``).
    var isOnOwnerThread: Bool {
        confinement.allowsCurrentThread ?? false
    }

    /// Throws `.misuse` when called from another thread than the database's own.
    /// For a database isolated to an actor, use outside the actor stops the
    /// program instead: only the actor's executor can tell.
    func checkThread() throws(CofferError) {
        switch confinement.allowsCurrentThread {
        case true?: return
        case false?: throw CofferError(.misuse, confinement.misuseMessage)
        case nil: requireIsolation()
        }
    }

    /// Stops the program when called from another thread, for calls that cannot throw.
    func requireThread() {
        if confinement.allowsCurrentThread != true {
            requireIsolation()
        }
    }

    /// Stops the program unless the caller may use the database.
    private func requireIsolation() {
        switch confinement {
        case .actor(let weak):
            guard let actor = weak.actor else { fatalError("Coffer: \(confinement.misuseMessage)") }
            actor.preconditionIsolated("Coffer: \(confinement.misuseMessage)")
        case .thread, .frozen:
            if confinement.allowsCurrentThread != true { fatalError("Coffer: \(confinement.misuseMessage)") }
        }
    }

    /// Stops the program with `error`, for calls that cannot throw.
    func fail(_ error: any Swift.Error) -> Never {
        fatalError("Coffer: \(error)")
    }
}

