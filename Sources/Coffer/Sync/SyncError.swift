// SyncError: the last error of a sync session, with the service's error code
// when the service refused the session; and what a sync configuration's
// error handler is told of the service's ERROR frames, a compensating write
// with the refused object's class and primary key.

import Foundation

/// Why a sync session stopped or is retrying (``SyncSession/lastError``), or
/// an error the service reported (``SyncConfiguration/errorHandler``).
///
/// When the service refused the session, ``serviceCode`` is the code of its
/// `ERROR` frame (docs/SYNC.md, "Errors"); for a failed connection it is nil.
/// A ``ServiceCode/compensatingWrite`` names the object whose write the
/// service's permission rules refused in ``className`` and ``primaryKey``.
public struct SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The primary key of the object a compensating write is about.
    public enum PrimaryKey: Sendable, Hashable {
        case int(Int64)
        case string(String)
        case objectId(ObjectId)
        case uuid(UUID)
    }

    /// The service's error codes (docs/SYNC.md, "Errors").
    public enum ServiceCode: String, Sendable, CaseIterable {
        /// A frame that does not decode, or out of order.
        case `protocol` = "PROTOCOL"
        /// An unsupported protocol version.
        case version = "VERSION"
        /// The access token was refused (missing, forged, for another service).
        case auth = "AUTH"
        /// A breaking schema difference; the message names class and property.
        case schemaMismatch = "SCHEMA_MISMATCH"
        /// A changeset that does not apply to the service's schema.
        case badChangeset = "BAD_CHANGESET"
        /// The service sheds the session; the session retries later.
        case overloaded = "OVERLOADED"
        /// The service failed; the session retries.
        case `internal` = "INTERNAL"
        /// The file is behind what it synced; it syncs again as a new client.
        case clientReset = "CLIENT_RESET"
        /// The access token expired and could not be refreshed.
        case tokenExpired = "TOKEN_EXPIRED"
        /// A write the service's permission rules refused: it was not
        /// integrated, and the session reverts it to the service's state of
        /// the object (``className``, ``primaryKey``). Not fatal.
        case compensatingWrite = "COMPENSATING_WRITE"
        /// Flexible sync: a subscription set the service refused; the
        /// message names the query and the part it cannot evaluate. Not
        /// fatal: ``Database/subscriptions`` is in the error state.
        case subscription = "SUBSCRIPTION"
    }

    /// The session's message, as the C core's `coffer_sync_error()` gives it.
    public let message: String
    /// True when the session stopped for good (``SyncSession/State/inactive``)
    /// until ``SyncSession/resume()``; false while it retries.
    public let isFatal: Bool
    /// For a compensating write, the class of the refused object.
    public let className: String?
    /// For a compensating write, the primary key of the refused object.
    public let primaryKey: PrimaryKey?
    /// The code the service sent, when the error is one of its ERROR frames.
    private let reportedCode: ServiceCode?

    init(message: String, isFatal: Bool, code: ServiceCode? = nil, className: String? = nil,
         primaryKey: PrimaryKey? = nil) {
        self.message = message
        self.isFatal = isFatal
        self.reportedCode = code
        self.className = className
        self.primaryKey = primaryKey
    }

    /// The code of the service's refusal, nil for a failed connection.
    public var serviceCode: ServiceCode? {
        if let reportedCode { return reportedCode }
        let refusal = "the sync service refused the session: "
        guard let start = message.range(of: refusal)?.upperBound else { return nil }
        let rest = message[start...]
        guard let colon = rest.firstIndex(of: ":") else { return nil }
        return ServiceCode(rawValue: String(rest[..<colon]))
    }

    public var description: String { message }
}
