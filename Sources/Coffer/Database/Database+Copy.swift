// Database copying: writing a compacted, optionally re-encrypted copy of the
// committed state.

import Foundation
internal import CCoffer

extension Database {
    /// Writes a compacted copy of the database's committed state to
    /// `configuration.fileURL`, encrypted with `configuration.encryptionKey` (nil
    /// writes a plain copy). The key need not be the database's own, so this also
    /// encrypts, decrypts and re-keys. Other settings of `configuration` are
    /// ignored.
    ///
    /// ```swift
    /// var backup = Database.Configuration(fileURL: backupURL)
    /// backup.encryptionKey = newKey
    /// try db.writeCopy(configuration: backup)
    /// ```
    ///
    /// Uncommitted writes of a write transaction in progress are not in the copy.
    /// Works on in-memory databases too (the copy is a file).
    ///
    /// A copy of a synced database is a bundle, as Realm's: it keeps the sync
    /// progress (the server version downloaded, the subscriptions) but not the
    /// client's identity, so an app that opens it through
    /// ``Database/Configuration/seedFilePath`` with a sync configuration is a
    /// new client of its own and downloads only the changes made since the
    /// copy. Every local change must be uploaded first: wait with
    /// `try await db.syncSession?.wait(for: .upload)`, else this throws
    /// `.misuse` naming how many commits wait.
    ///
    /// `progress`, if given, is told on this thread how much of the copy is
    /// written, from 0 to 1, about once a percent at most; returning false
    /// cancels the copy, which then throws `.cancelled` and leaves no file.
    ///
    /// - Throws: ``CofferError``: `.invalidArgument` for an in-memory
    ///   `configuration` or a key that is not 64 bytes; `.io` naming the path if a
    ///   file exists there already (nothing is overwritten) or cannot be written
    ///   (no file is left); `.misuse` from another thread or for a synced
    ///   database with changes not uploaded yet; `.cancelled` when
    ///   `progress` returned false.
    public func writeCopy(configuration: Configuration, progress: ((_ fractionCompleted: Double) -> Bool)? = nil) throws {
        try checkThread()
        guard let path = try configuration.filePath() else {
            throw CofferError(.invalidArgument, "writeCopy needs a configuration with a fileURL, not the in-memory identifier '\(configuration.inMemoryIdentifier ?? "")'")
        }
        let reporter = progress.map(CopyProgress.init)
        let context = reporter.map { Unmanaged.passUnretained($0).toOpaque() }
        let callback: coffer_progress_fn? = reporter == nil ? nil : { _, done, total, ctx in
            Unmanaged<CopyProgress>.fromOpaque(ctx!).takeUnretainedValue().report(done, total) ? 0 : 1
        }
        let status: coffer_status = withExtendedLifetime(reporter) {
            if let key = configuration.encryptionKey {
                guard !key.isEmpty else { return COFFER_ERR_INVALID_ARGUMENT }
                return key.withUnsafeBytes { coffer_db_write_copy_v2(handle, path, $0.baseAddress, $0.count, callback, context) }
            }
            return coffer_db_write_copy_v2(handle, path, nil, 0, callback, context)
        }
        if let key = configuration.encryptionKey, key.isEmpty {
            throw CofferError(.invalidArgument, "encryptionKey must be \(coffer_encryption_key_size()) bytes, got 0")
        }
        try CofferError.check(status)
    }

    /// Writes a compacted copy to `fileURL`, as ``writeCopy(configuration:)``.
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
        try writeCopy(configuration: Configuration(fileURL: fileURL, encryptionKey: encryptionKey))
    }
}

/// A copy's progress handler, given to the C core as its context.
private final class CopyProgress {
    let handler: (Double) -> Bool
    private var started = false

    init(_ handler: @escaping (Double) -> Bool) {
        self.handler = handler
    }

    func report(_ done: UInt64, _ total: UInt64) -> Bool {
        let fraction = !started ? 0 : total == 0 ? 1 : Double(done) / Double(total)
        started = true
        return handler(fraction)
    }
}
