// CofferError: the error every throwing API throws, its codes, and turning C
// status codes and the core's last error into it.

internal import CCoffer

/// An error reported by Coffer: the status code of the C core and its message.
///
/// Every throwing Coffer API throws `CofferError`. The message names the class,
/// property, value or file at fault, as the C core's `coffer_last_error()` does.
///
/// ```swift
/// do {
///     try db.write { try db.tryAdd(Dog(value: ["id": 1])) }
/// } catch let error as CofferError where error.code == .primaryKeyExists {
///     print("already there")
/// } catch let error as CofferError {
///     print(error.code, error.message)
/// }
/// ```
///
/// `CofferError` is `Sendable`: it holds only a code and a string.
///
/// The type is also reachable as ``Database/Error``, as `Realm.Error` is in Realm.
public struct CofferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status code, one case for every error status of the C API (`coffer_status`).
    ///
    /// The raw value is the C status number.
    public enum Code: Int32, Sendable, CaseIterable {
        /// A NULL handle, an out-of-range id, a bad size or flag (`COFFER_ERR_INVALID_ARGUMENT`).
        case invalidArgument = 2
        /// An allocation failed (`COFFER_ERR_NO_MEMORY`).
        case noMemory = 3
        /// A file system call failed; the message carries the path (`COFFER_ERR_IO`).
        case io = 4
        /// No object, class, property or file by that name, key or value (`COFFER_ERR_NOT_FOUND`).
        case notFound = 5
        /// The call does not fit the state of the database or transaction, or it came
        /// from a thread other than the database's own (`COFFER_ERR_MISUSE`).
        case misuse = 6
        /// A write was attempted outside a write transaction (`COFFER_ERR_NOT_IN_WRITE`).
        case notInWriteTransaction = 7
        /// The database was opened read-only, or the file cannot be written (`COFFER_ERR_READ_ONLY`).
        case readOnly = 8
        /// The schema is invalid (`COFFER_ERR_SCHEMA`).
        case schema = 9
        /// The schema differs from the file's at the same schema version (`COFFER_ERR_MIGRATION_REQUIRED`).
        case migrationRequired = 10
        /// The schema version is lower than the file's (`COFFER_ERR_SCHEMA_VERSION`).
        case schemaVersion = 11
        /// A value of the wrong type for the property, or nil for a required one (`COFFER_ERR_TYPE`).
        case type = 12
        /// An object with that primary key already exists (`COFFER_ERR_PRIMARY_KEY_EXISTS`).
        case primaryKeyExists = 13
        /// The property cannot be changed once set: primary keys (`COFFER_ERR_IMMUTABLE`).
        case immutable = 14
        /// One write transaction needed more than the room left in the file's map (half of it, 32 GiB or
        /// more by default) while other transactions of the process stayed open; nothing of it was
        /// committed, and retrying once they have ended succeeds. Ordinary writes never meet it: the map
        /// grows before it fills (`COFFER_ERR_MAP_FULL`).
        case mapFull = 15
        /// The file reached its maximum size (`COFFER_ERR_FILE_TOO_LARGE`).
        case fileTooLarge = 16
        /// The file is not a Coffer database (`COFFER_ERR_NOT_A_DATABASE`).
        case notADatabase = 17
        /// The file was written by a newer, incompatible file format (`COFFER_ERR_FORMAT_VERSION`).
        case formatVersion = 18
        /// The file is truncated or damaged (`COFFER_ERR_CORRUPTED`).
        case corrupted = 19
        /// A stored value failed authentication (`COFFER_ERR_INTEGRITY`).
        case integrity = 20
        /// The file is encrypted and no key was given (`COFFER_ERR_KEY_REQUIRED`).
        case keyRequired = 21
        /// The key given does not open the file (`COFFER_ERR_WRONG_KEY`).
        case wrongKey = 22
        /// A key was given for a file that is not encrypted (`COFFER_ERR_NOT_ENCRYPTED`).
        case notEncrypted = 23
        /// A limit was reached: too many classes or readers, a value too large (`COFFER_ERR_LIMIT`).
        case limit = 24
        /// The file is held in a way this call cannot share: open in this process
        /// while its files are deleted, or mapped read-only when wanted for writing
        /// (`COFFER_ERR_BUSY`).
        case busy = 25
        /// An unexpected failure of the storage engine (`COFFER_ERR_INTERNAL`).
        case `internal` = 26
        /// A query could not be compiled: a syntax error (with its offset), an unknown
        /// property, types that cannot be compared, a missing argument (`COFFER_ERR_QUERY`).
        case query = 27
        /// A running query was stopped before it ended by ``Database/interrupt()``
        /// from another thread (`COFFER_ERR_INTERRUPTED`).
        case interrupted = 28
        /// A sync wait ran past its timeout (`COFFER_ERR_TIMEOUT`); the work goes on.
        case timeout = 29
        /// A buffer given to a batch read was too small; the size needed was given
        /// back (`COFFER_ERR_BUFFER_TOO_SMALL`).
        case bufferTooSmall = 30
        /// The open was cancelled while it copied a seed file, compacted or
        /// migrated (the task opening it was cancelled, or a progress handler
        /// asked to stop); the file was left as it was (`COFFER_ERR_CANCELLED`).
        case cancelled = 31

        /// The C library's English description of the code (`coffer_strerror()`).
        public var summary: String {
            String(cString: coffer_strerror(coffer_status(UInt32(rawValue))))
        }
    }

    /// What went wrong.
    public let code: Code
    /// A message naming the class, property, value or file at fault.
    public let message: String

    /// Creates an error with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The C status number (`coffer_status`) of ``code``.
    public var status: Int32 { code.rawValue }

    /// `"<summary>: <message>"`, saying the subject once: the C core starts some
    /// messages with their subject (`"query: at offset 7: ..."`, `"migration
    /// required: ..."`), which the summary (`"invalid query"`, `"migration
    /// required"`) already says, so that prefix is left out here.
    public var description: String { "\(code.summary): \(messageWithoutSubject)" }

    /// ``message`` without a leading `"<subject>: "` that ends the summary.
    private var messageWithoutSubject: String {
        let summary = code.summary
        guard let colon = message.range(of: ": ") else { return message }
        let subject = message[..<colon.lowerBound]
        guard !subject.isEmpty, summary == subject || summary.hasSuffix(" " + subject) else { return message }
        return String(message[colon.upperBound...])
    }
}

extension CofferError {
    /// The calling thread's last C error, for a status that is not `COFFER_OK`.
    static func last(_ status: coffer_status) -> CofferError {
        let message = String(cString: coffer_last_error())
        guard let code = Code(rawValue: Int32(status.rawValue)) else {
            return CofferError(.internal, "unexpected status \(status.rawValue): \(message)")
        }
        return CofferError(code, message)
    }

    /// Throws the calling thread's last C error unless `status` is `COFFER_OK`.
    static func check(_ status: coffer_status) throws(CofferError) {
        if status != COFFER_OK {
            throw last(status)
        }
    }
}
