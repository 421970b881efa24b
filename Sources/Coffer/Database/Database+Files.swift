// Database-wide calls on files and snapshots that Realm has: the schema version
// of a file, running a migration without keeping the database, and letting go
// of the snapshot (invalidate).

import Foundation
internal import CCoffer

extension Database {
    /// Opens the database `configuration` describes, applying its migration
    /// if the file needs one, and closes it again, as Realm's
    /// `performMigration(for:)`.
    ///
    /// - Throws: what ``init(configuration:)`` throws.
    public static func performMigration(for configuration: Configuration = .defaultConfiguration) throws {
        _ = try Database(configuration: configuration)
    }

    /// As ``performMigration(for:)``, telling `progress` how far a seed copy,
    /// the compact-on-launch check, a compaction and a migration are, on this
    /// thread; when it returns false the open is cancelled and this throws
    /// ``CofferError`` `.cancelled`, the file left as it was.
    static func prepare(_ configuration: Configuration, download: SyncDownload? = nil,
                        progress: @escaping OpenProgressHandler) throws {
        _ = try Database(configuration: configuration, confinement: .thread(pthread_self()), progress: progress,
                         download: download)
    }

    /// Lets go of the snapshot and cancels a write transaction in progress, as
    /// Realm's `invalidate()`. Objects and results read the latest data the
    /// next time they are used (they are not invalidated: Coffer's re-read).
    public func invalidate() {
        requireThread()
        if isInWriteTransaction {
            cancelWrite()
        }
        refresh()
    }
}

/// The schema version of the database file at `fileURL`, as Realm's
/// `schemaVersionAtURL(_:encryptionKey:)`; the file is opened read-only and
/// nothing is changed.
///
/// - Throws: ``CofferError`` `.notFound` if there is no file, `.keyRequired`,
///   `.wrongKey` or `.notEncrypted` for a key that does not fit it,
///   `.notADatabase` for another kind of file.
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
    var configuration = Database.Configuration(fileURL: fileURL, encryptionKey: encryptionKey, readOnly: true)
    configuration.objectTypes = []
    let path = try configuration.filePath()
    let config = try configuration.makeCConfig(path: path)
    defer { coffer_config_free(config) }
    var db: OpaquePointer?
    try CofferError.check(coffer_open(config, &db))
    defer { coffer_close(db) }
    return coffer_db_schema_version(db)
}
