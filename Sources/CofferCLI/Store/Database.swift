// Opening a file through the C API with whatever schema it stores, and the
// transactions the commands run in; turns the core's key errors into
// messages that say which of missing, wrong or unneeded the key was.

import CCoffer
import Foundation

/// An open database handle and the schema it sees. Closed on deinit.
final class Database {
    let handle: OpaquePointer
    let path: String
    let schema: SchemaInfo

    /// Opens `path` read-only (or read-write), with `key` if given. With
    /// `schema`, the file is created with it when missing (read-write only).
    init(path: String, key: EncryptionKey?, readOnly: Bool = true, schema: SchemaInfo? = nil,
         configure: (OpaquePointer) throws -> Void = { _ in }) throws
    {
        if readOnly, !FileManager.default.fileExists(atPath: path) {
            throw CLIError("no such file: \(path)")
        }
        var config: OpaquePointer?
        try check(coffer_config_new(&config))
        defer { coffer_config_free(config) }
        try check(coffer_config_set_path(config, path))
        try check(coffer_config_set_read_only(config, readOnly ? 1 : 0))
        if let key {
            try check(key.bytes.withUnsafeBytes { coffer_config_set_encryption_key(config, $0.baseAddress, $0.count) })
        }
        if let schema {
            try schema.withCSchema { try check(coffer_config_set_schema(config, $0, $1, schema.version), "schema") }
        }
        try configure(config!)
        var db: OpaquePointer?
        let status = coffer_open(config, &db)
        guard status == COFFER_OK, let db else {
            throw Database.openError(status, path: path, key: key)
        }
        handle = db
        self.path = path
        self.schema = SchemaInfo(db: db)
    }

    deinit {
        coffer_close(handle)
    }

    var isEncrypted: Bool { coffer_db_is_encrypted(handle) != 0 }

    /// The error of a failed open, saying what to do about a key problem.
    static func openError(_ status: coffer_status, path: String, key: EncryptionKey?) -> CLIError {
        switch status {
        case COFFER_ERR_KEY_REQUIRED:
            return CLIError("\(path) is encrypted and no key was given: pass --key-file FILE or set \(EncryptionKey.environmentVariable)")
        case COFFER_ERR_WRONG_KEY:
            return CLIError("wrong key: the key from \(key?.source ?? "the configuration") does not open \(path)")
        case COFFER_ERR_NOT_ENCRYPTED:
            return CLIError("\(path) is not encrypted, but a key was given (\(key?.source ?? "?")); give none")
        default:
            return CLIError("cannot open \(path): \(lastCofferError())")
        }
    }

    /// Runs `body` in a read transaction.
    func read<R>(_ body: (Transaction) throws -> R) throws -> R {
        let txn = try Transaction(db: self, write: false)
        defer { coffer_txn_free(txn.handle) }
        return try body(txn)
    }

    /// Runs `body` in a write transaction committed when it returns; if it
    /// throws (or the commit fails) nothing of it is written.
    func write<R>(_ body: (Transaction) throws -> R) throws -> R {
        let txn = try Transaction(db: self, write: true)
        defer { coffer_txn_free(txn.handle) }
        let result = try body(txn)
        try check(coffer_txn_commit(txn.handle), "commit")
        return result
    }
}

/// A transaction handle, freed by the ``Database`` call that made it.
struct Transaction {
    let db: Database
    let handle: OpaquePointer

    fileprivate init(db: Database, write: Bool) throws {
        var txn: OpaquePointer?
        try check(coffer_txn_begin(db.handle, write ? Int32(COFFER_TXN_WRITE) : Int32(COFFER_TXN_READ), &txn))
        self.db = db
        handle = txn!
    }

    func count(_ cls: ClassInfo) throws -> UInt64 {
        var n: UInt64 = 0
        try check(coffer_class_count(handle, cls.id, &n), cls.name)
        return n
    }

    /// Calls `body` with every object of `cls` in key order; the object handle
    /// is valid during the call only.
    func forEachObject(of cls: ClassInfo, _ body: (OpaquePointer) throws -> Void) throws {
        var iter: OpaquePointer?
        try check(coffer_class_iterate(handle, cls.id, &iter), cls.name)
        defer { coffer_iter_free(iter) }
        while true {
            var obj: OpaquePointer?
            let status = coffer_iter_next(iter, &obj)
            if status == COFFER_DONE { return }
            try check(status, cls.name)
            try body(obj!)
        }
    }
}
