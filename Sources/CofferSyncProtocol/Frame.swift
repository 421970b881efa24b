// The frames of protocol version 3 (docs/SYNC.md, "Frames"): one binary
// WebSocket message each, a type byte then the body. Version 2 added the
// ERROR code COMPENSATING_WRITE, which names the refused object; version 3
// (flexible sync) SUBSCRIBE, SUBSCRIPTION_COMPLETE and the ERROR code
// SUBSCRIPTION; version 4 (partition-based) PROGRESS.

/// An error code of an ERROR frame.
public enum ErrorCode: UInt64, Sendable, CaseIterable {
    case `protocol` = 1, version, auth, schemaMismatch, badChangeset, overloaded, `internal`, clientReset, tokenExpired,
         compensatingWrite, subscription

    public var name: String {
        switch self {
        case .protocol: "PROTOCOL"
        case .version: "VERSION"
        case .auth: "AUTH"
        case .schemaMismatch: "SCHEMA_MISMATCH"
        case .badChangeset: "BAD_CHANGESET"
        case .overloaded: "OVERLOADED"
        case .internal: "INTERNAL"
        case .clientReset: "CLIENT_RESET"
        case .tokenExpired: "TOKEN_EXPIRED"
        case .compensatingWrite: "COMPENSATING_WRITE"
        case .subscription: "SUBSCRIPTION"
        }
    }
}

/// One query of a flexible-sync subscription set (SUBSCRIBE): its name
/// (empty for an unnamed one), class and query text.
public struct SubscriptionQuery: Hashable, Sendable {
    public var name: String
    public var className: String
    public var query: String

    public init(name: String, className: String, query: String) {
        self.name = name
        self.className = className
        self.query = query
    }
}

/// A changeset as the service hands it out: its server version and origin.
public struct ServerChangeset: Hashable, Sendable {
    public var serverVersion: UInt64
    public var origin: ClientID
    public var changeset: Changeset

    public init(serverVersion: UInt64, origin: ClientID, changeset: Changeset) {
        self.serverVersion = serverVersion
        self.origin = origin
        self.changeset = changeset
    }
}

/// One frame of the sync protocol.
public enum Frame: Hashable, Sendable {
    case hello(protocolVersion: UInt64, client: ClientID, partition: String, token: String,
               lastServerVersion: UInt64, schema: SyncSchema)
    case welcome(protocolVersion: UInt64, lastClientVersion: UInt64, latestServerVersion: UInt64)
    case upload([Changeset])
    case uploadAck(lastClientVersion: UInt64, serverVersion: UInt64)
    /// `latestServerVersion` is the partition's latest when the batch was made.
    case download(latestServerVersion: UInt64, changesets: [ServerChangeset])
    case downloadAck(lastServerVersion: UInt64)
    case error(code: UInt64, message: String, fatal: Bool)
    /// ERROR COMPENSATING_WRITE (protocol 2; not fatal): a write to the
    /// object `className`/`pk` was refused by the permission rules.
    case compensatingWrite(message: String, className: String, pk: SyncValue)
    /// SUBSCRIBE (protocol 3, flexible sync): the client's subscription set
    /// `setVersion` and its queries, which replace the set before it.
    case subscribe(setVersion: UInt64, queries: [SubscriptionQuery])
    /// SUBSCRIPTION_COMPLETE (protocol 3): the client has every object of
    /// subscription set `setVersion` once it integrated `serverVersion`.
    case subscriptionComplete(setVersion: UInt64, serverVersion: UInt64)
    /// ERROR SUBSCRIPTION (protocol 3; not fatal): subscription set
    /// `setVersion` was refused, the message naming the query and its part.
    case subscriptionError(message: String, setVersion: UInt64)
    /// PROGRESS (protocol 4): the changeset bytes of the DOWNLOAD frames that
    /// follow, up to the partition's latest version (this client's own left
    /// out); sent before each DOWNLOAD frame.
    case progress(downloadableBytes: UInt64)

    public var typeByte: UInt8 {
        switch self {
        case .hello: 1
        case .welcome: 2
        case .upload: 3
        case .uploadAck: 4
        case .download: 5
        case .downloadAck: 6
        case .error, .compensatingWrite, .subscriptionError: 7
        case .subscribe: 8
        case .subscriptionComplete: 9
        case .progress: 10
        }
    }

    public var name: String {
        ["HELLO", "WELCOME", "UPLOAD", "UPLOAD_ACK", "DOWNLOAD", "DOWNLOAD_ACK", "ERROR", "SUBSCRIBE",
         "SUBSCRIPTION_COMPLETE", "PROGRESS"][Int(typeByte) - 1]
    }

    public static func error(_ code: ErrorCode, _ message: String, fatal: Bool) -> Frame {
        .error(code: code.rawValue, message: message, fatal: fatal)
    }

    public var encoded: [UInt8] {
        var w = WireWriter()
        w.byte(typeByte)
        switch self {
        case .hello(let version, let client, let partition, let token, let last, let schema):
            w.varint(version)
            w.raw(client.bytes)
            w.string(partition)
            w.string(token)
            w.varint(last)
            schema.encode(to: &w)
        case .welcome(let version, let lastClient, let latest):
            w.varint(version)
            w.varint(lastClient)
            w.varint(latest)
        case .upload(let changesets):
            w.varint(changesets.count)
            for c in changesets { c.encode(to: &w) }
        case .uploadAck(let lastClient, let serverVersion):
            w.varint(lastClient)
            w.varint(serverVersion)
        case .download(let latest, let changesets):
            w.varint(latest)
            w.varint(changesets.count)
            for c in changesets {
                w.varint(c.serverVersion)
                w.raw(c.origin.bytes)
                c.changeset.encode(to: &w)
            }
        case .downloadAck(let last):
            w.varint(last)
        case .error(let code, let message, let fatal):
            w.varint(code)
            w.string(message)
            w.byte(fatal ? 1 : 0)
        case .compensatingWrite(let message, let className, let pk):
            w.varint(ErrorCode.compensatingWrite.rawValue)
            w.string(message)
            w.byte(0)
            w.string(className)
            pk.encode(to: &w)
        case .subscribe(let setVersion, let queries):
            w.varint(setVersion)
            w.varint(queries.count)
            for query in queries {
                w.string(query.name)
                w.string(query.className)
                w.string(query.query)
            }
        case .subscriptionComplete(let setVersion, let serverVersion):
            w.varint(setVersion)
            w.varint(serverVersion)
        case .subscriptionError(let message, let setVersion):
            w.varint(ErrorCode.subscription.rawValue)
            w.string(message)
            w.byte(0)
            w.varint(setVersion)
        case .progress(let bytes):
            w.varint(bytes)
        }
        return w.bytes
    }

    /// Decodes one whole frame; trailing bytes, unknown types and anything
    /// truncated throw `WireError`.
    public init(decoding bytes: [UInt8]) throws {
        guard bytes.count <= WireLimits.maxFrameBytes else {
            throw WireError("frame of \(bytes.count) bytes is larger than the \(WireLimits.maxFrameBytes)-byte limit")
        }
        var r = WireReader(bytes)
        let type = try r.byte("frame type")
        switch type {
        case 1:
            let version = try r.varint("protocol version")
            let client = try r.id16("client id")
            let partition = try r.string("partition")
            let token = try r.string("token")
            let last = try r.varint("last integrated server version")
            self = .hello(protocolVersion: version, client: client, partition: partition, token: token,
                          lastServerVersion: last, schema: try SyncSchema.decode(from: &r))
        case 2:
            self = .welcome(protocolVersion: try r.varint("protocol version"),
                            lastClientVersion: try r.varint("last client version"),
                            latestServerVersion: try r.varint("latest server version"))
        case 3:
            let n = try r.count("changeset count", minimumItemBytes: 10)
            var changesets: [Changeset] = []
            for _ in 0..<n { changesets.append(try Changeset.decode(from: &r)) }
            self = .upload(changesets)
        case 4:
            self = .uploadAck(lastClientVersion: try r.varint("last client version"),
                              serverVersion: try r.varint("server version"))
        case 5:
            let latest = try r.varint("latest server version")
            let n = try r.count("changeset count", minimumItemBytes: 27)
            var changesets: [ServerChangeset] = []
            for _ in 0..<n {
                let version = try r.varint("server version")
                let origin = try r.id16("origin client id")
                changesets.append(ServerChangeset(serverVersion: version, origin: origin,
                                                  changeset: try Changeset.decode(from: &r)))
            }
            self = .download(latestServerVersion: latest, changesets: changesets)
        case 6:
            self = .downloadAck(lastServerVersion: try r.varint("last server version"))
        case 7:
            let code = try r.varint("error code")
            let message = try r.string("error message")
            let at = r.offset
            let fatal = try r.byte("fatal flag")
            guard fatal <= 1 else { throw WireError("fatal flag \(fatal) at byte \(at) is neither 0 nor 1") }
            if code == ErrorCode.compensatingWrite.rawValue {
                guard fatal == 0 else { throw WireError("a COMPENSATING_WRITE error is never fatal") }
                let className = try r.string("refused object's class")
                self = .compensatingWrite(message: message, className: className,
                                          pk: try SyncValue.decode(from: &r))
            } else if code == ErrorCode.subscription.rawValue {
                guard fatal == 0 else { throw WireError("a SUBSCRIPTION error is never fatal") }
                self = .subscriptionError(message: message, setVersion: try r.varint("subscription set version"))
            } else {
                self = .error(code: code, message: message, fatal: fatal == 1)
            }
        case 8:
            let setVersion = try r.varint("subscription set version")
            let n = try r.count("subscription count", minimumItemBytes: 3)
            var queries: [SubscriptionQuery] = []
            for _ in 0..<n {
                let name = try r.string("subscription name")
                let className = try r.string("subscription class")
                queries.append(SubscriptionQuery(name: name, className: className,
                                                 query: try r.string("subscription query")))
            }
            self = .subscribe(setVersion: setVersion, queries: queries)
        case 9:
            self = .subscriptionComplete(setVersion: try r.varint("subscription set version"),
                                         serverVersion: try r.varint("server version"))
        case 10:
            self = .progress(downloadableBytes: try r.varint("downloadable bytes"))
        default:
            throw WireError("unknown frame type \(type)")
        }
        try r.expectEnd("\(name) frame")
    }
}
