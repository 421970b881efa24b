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
    /// - Throws: ``CofferError``: `.invalidArgument` for an in-memory
    ///   `configuration` or a key that is not 64 bytes; `.io` naming the path if a
    ///   file exists there already (nothing is overwritten) or cannot be written
    ///   (no file is left); `.misuse` from another thread.
    public func writeCopy(configuration: Configuration) throws {
        try checkThread()
        guard let path = try configuration.filePath() else {
            throw CofferError(.invalidArgument, "writeCopy needs a configuration with a fileURL, not the in-memory identifier '\(configuration.inMemoryIdentifier ?? "")'")
        }
        let status: coffer_status
        if let key = configuration.encryptionKey {
            guard !key.isEmpty else {
                throw CofferError(.invalidArgument, "encryptionKey must be \(coffer_encryption_key_size()) bytes, got 0")
            }
            status = key.withUnsafeBytes { coffer_db_write_copy(handle, path, $0.baseAddress, $0.count) }
        } else {
            status = coffer_db_write_copy(handle, path, nil, 0)
        }
        try CofferError.check(status)
    }

    /// Writes a compacted copy to `fileURL`, as ``writeCopy(configuration:)``.
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
        try writeCopy(configuration: Configuration(fileURL: fileURL, encryptionKey: encryptionKey))
    }
}
