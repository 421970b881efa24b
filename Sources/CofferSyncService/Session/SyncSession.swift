// One client's WebSocket connection: HELLO and WELCOME, then UPLOAD batches
// integrated and acknowledged in order while a download task sends the
// partition's changesets of other clients within the unacknowledged window,
// woken by the notification hub and by acknowledgements. Every failure ends
// in an ERROR frame with its code; fatal ones close the connection. With
// permission rules, uploads are checked against them and each refused write
// is reported with a non-fatal ERROR COMPENSATING_WRITE, and downloads are
// filtered by the read rules (Permissions/ReadFilter). Messages are read
// ahead (MessageReader), so the client's pongs are seen during a long upload.
import CofferSyncProtocol
import HummingbirdWebSocket
import Logging
import NIOCore
import PostgresNIO

/// A failure the session reports to the client with a code.
struct SessionFailure: Error, CustomStringConvertible {
    let code: ErrorCode
    let description: String

    init(_ code: ErrorCode, _ description: String) {
        self.code = code
        self.description = description
    }

    /// Maps any error to the code the client sees.
    static func from(_ error: any Error) -> SessionFailure {
        switch unwrapTransactionError(error) {
        case let failure as SessionFailure: failure
        case let wire as WireError: SessionFailure(.protocol, "frame does not decode: \(wire.message)")
        case let mismatch as SchemaMismatch: SessionFailure(.schemaMismatch, "schema mismatch: \(mismatch.description)")
        case let bad as BadChangeset: SessionFailure(.badChangeset, bad.description)
        case let psql as PSQLError: SessionFailure(.internal, "PostgreSQL failed: \(psql.code)\(psql.serverInfo?[.message].map { ": \($0)" } ?? "")")
        case let store as StoreError: SessionFailure(.internal, store.description)
        default: SessionFailure(.internal, "the service failed: \(error)")
        }
    }
}

/// Serializes the frames two tasks send on one connection.
actor FrameSender {
    private let outbound: WebSocketOutboundWriter

    init(_ outbound: WebSocketOutboundWriter) {
        self.outbound = outbound
    }

    func send(_ bytes: [UInt8]) async throws {
        try await outbound.write(.binary(ByteBuffer(bytes: bytes)))
    }

    func fail(_ failure: SessionFailure) async {
        try? await send(Frame.error(failure.code, failure.description, fatal: true).encoded)
        try? await outbound.close(failure.code == .protocol ? .protocolError : .normalClosure,
                                  reason: failure.code.name)
    }
}

struct SyncSession: Sendable {
    let store: SyncStore
    let hub: NotificationHub
    let limiter: SessionLimiter
    /// Checks HELLO tokens; nil in development mode (tokens not checked).
    let accessTokens: AccessTokens?
    /// The permission rules; nil: every client may write everything.
    var rules: PermissionRules? = nil
    var logger: Logger
    /// Seconds of history a client may miss (`maxOfflineTime`); nil: no limit.
    var maxOfflineTime: Double? = nil

    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        let sender = FrameSender(outbound)
        guard await limiter.enter() else {
            await sender.fail(SessionFailure(.overloaded, "the service is at its session limit; retry later"))
            return
        }
        defer { Task { await limiter.leave() } }
        // Read ahead, so that pongs are read while an upload is integrated.
        let messages = MessageReader(inbound, maxSize: WireLimits.maxFrameBytes)
        defer { messages.stop() }
        do {
            guard let first = try await nextFrame(messages) else { return }
            guard case .hello(let version, let client, let partition, let token, let lastServer, let schema) = first else {
                throw SessionFailure(.protocol, "the first frame must be HELLO, not \(first.name)")
            }
            let isFlexible = version == WireLimits.flexibleProtocolVersion
            // Version 4: version 2 with a PROGRESS frame before each DOWNLOAD frame.
            let tellsProgress = version == WireLimits.progressProtocolVersion
            guard isFlexible || tellsProgress
                || (WireLimits.oldestProtocolVersion...WireLimits.protocolVersion).contains(version) else {
                throw SessionFailure(.version, "protocol version \(version) is not supported; this service speaks versions \(WireLimits.oldestProtocolVersion) to \(WireLimits.progressProtocolVersion)")
            }
            guard !partition.isEmpty else { throw SessionFailure(.protocol, "HELLO names no partition") }
            // Checked before anything of the client reaches PostgreSQL.
            let user = try await authenticate(token)
            var logger = self.logger
            logger[metadataKey: "client"] = "\(client)"
            logger[metadataKey: "partition"] = "\(partition)"
            if let user { logger[metadataKey: "user"] = "\(user.id)" }
            // Rules need a user; the configuration refuses rules without authentication.
            var writer = rules.flatMap { rules in
                user.map { SyncStore.Writer(rules: rules, user: QueryUser(
                    id: $0.id, roles: $0.roles.union(rules.userRoles[$0.id] ?? []))) }
            }
            // Flexible sync: the rules (or everything) narrowed by the subscriptions.
            let flexible = isFlexible ? FlexibleSync(
                rules: rules, user: writer?.user ?? user ?? QueryUser(id: "", roles: []),
                objects: ClientObjects(client: store.client, logger: logger), partition: partition) : nil
            if let flexible { writer = await flexible.writer }
            // With rules, downloads are filtered by the read rules for the same user.
            let readFilter = writer.map {
                ReadFilter(objects: ClientObjects(client: store.client, logger: logger), partition: partition,
                           client: client, rules: $0.rules, user: $0.user, scope: flexible?.scope)
            }
            // A flexible client's SUBSCRIBE follows its HELLO.
            var firstSubscribe: (version: UInt64, queries: [SubscriptionQuery])?
            if isFlexible {
                guard let next = try await nextFrame(messages),
                      case .subscribe(let setVersion, let queries) = next else {
                    throw SessionFailure(.protocol, "a version \(version) HELLO must be followed by SUBSCRIBE")
                }
                firstSubscribe = (setVersion, queries)
            }
            let registration = try await store.register(partition: partition, client: client, user: user?.id,
                                                        schema: schema)
            // A file restored from a backup has less than it acknowledged; the
            // versions it commits next would collide with those its client id
            // already uploaded, so it must sync as a new client.
            guard lastServer >= registration.lastAckedServerVersion else {
                throw SessionFailure(.clientReset, "HELLO says server version \(lastServer) was integrated, but this client acknowledged \(registration.lastAckedServerVersion): its file is behind (restored from a backup?) and must sync as a new client")
            }
            // A client (or a bundle) that missed a change older than the
            // maximum offline time has been away longer than the service
            // keeps history for it: it must reset (docs/SYNC.md, "Client reset").
            if let maxOfflineTime, lastServer > 0 {
                let missed = try await store.changeOlderThan(maxOfflineTime, partition: partition, after: lastServer)
                guard missed == 0 else {
                    throw SessionFailure(.clientReset, "this client last synced at server version \(lastServer) and missed changes older than the maximum offline time (\(maxOfflineTime) s, up to server version \(missed)): it must reset and download the partition again")
                }
            }
            if let readFilter { try await readFilter.start(lastServerVersion: lastServer) }
            var refusedSet: Frame?
            if let first = firstSubscribe, let flexible {
                refusedSet = try await flexible.subscribe(version: first.version, queries: first.queries, logger: logger)
            }
            try await sender.send(Frame.welcome(protocolVersion: version,
                                                lastClientVersion: registration.lastClientVersion,
                                                latestServerVersion: registration.latestServerVersion).encoded)
            if let refusedSet { try await sender.send(refusedSet.encoded) }
            logger.debug("session started")
            let (hubID, wakeups) = await hub.subscribe(partition: partition)
            let window = DownloadWindow(start: lastServer)
            let sessionLogger = logger
            let downloader = Task {
                do {
                    try await download(partition: partition, client: client, after: lastServer,
                                       wakeups: wakeups, window: window, sender: sender, readFilter: readFilter,
                                       flexible: flexible, tellsProgress: tellsProgress)
                } catch is CancellationError {
                } catch {
                    if !Task.isCancelled {
                        let failure = SessionFailure.from(error)
                        sessionLogger.warning("session ends: \(failure.code.name): \(failure.description)")
                        await sender.fail(failure)
                    }
                }
            }
            defer {
                downloader.cancel()
                Task { await hub.unsubscribe(partition: partition, id: hubID) }
            }
            await hub.wake(partition: partition)
            var lastUploaded = registration.lastClientVersion
            while let frame = try await nextFrame(messages) {
                switch frame {
                case .upload(let changesets):
                    try checkBatch(changesets, after: lastUploaded)
                    if let flexible { writer = await flexible.writer }
                    let result = try await store.integrate(partition: partition, client: client, changesets: changesets,
                                                           writer: writer)
                    lastUploaded = result.lastClientVersion
                    if let readFilter { await readFilter.state.uploaded(result.given) }
                    try await sender.send(Frame.uploadAck(lastClientVersion: result.lastClientVersion,
                                                          serverVersion: result.serverVersion).encoded)
                    for refusal in result.refused {
                        logger.info("compensating write: \(refusal.message)")
                        // Version 1 has no COMPENSATING_WRITE: its clients only see the object reverted.
                        if version >= 2 {
                            try await sender.send(Frame.compensatingWrite(message: refusal.message, className: refusal.className,
                                                                          pk: refusal.pk).encoded)
                        }
                    }
                case .downloadAck(let version):
                    guard await window.acknowledge(version) else {
                        throw SessionFailure(.protocol, "DOWNLOAD_ACK of server version \(version), which was not sent")
                    }
                    try await store.recordDownloadAck(partition: partition, client: client, version: version)
                    try await readFilter?.acknowledged(version)
                    // Its window opened: only this session's download may go on.
                    await hub.wake(partition: partition, id: hubID)
                case .subscribe(let setVersion, let queries) where flexible != nil:
                    if let refused = try await flexible?.subscribe(version: setVersion, queries: queries, logger: logger) {
                        try await sender.send(refused.encoded)
                    }
                case .error(let code, let message, _):
                    logger.info("client reported error \(code): \(message)")
                    return
                default:
                    throw SessionFailure(.protocol, "\(frame.name) is not a frame a client sends after HELLO")
                }
            }
        } catch {
            let failure = SessionFailure.from(error)
            logger.warning("session ends: \(failure.code.name): \(failure.description)")
            await sender.fail(failure)
        }
    }

    /// The user a HELLO's token names (nil in development mode), or the
    /// failure: AUTH for a missing or invalid token, TOKEN_EXPIRED for an
    /// expired one (the client refreshes it and connects again).
    private func authenticate(_ token: String) async throws -> QueryUser? {
        guard let accessTokens else { return nil }
        do {
            return try await accessTokens.verifiedUser(token)
        } catch {
            switch error {
            case .missing:
                throw SessionFailure(.auth, "HELLO carries no token: this service requires an access token (POST /auth/v1/login)")
            case .invalid(let why):
                throw SessionFailure(.auth, "the HELLO token was refused: \(why)")
            case .expired:
                throw SessionFailure(.tokenExpired, "the access token has expired: refresh it and connect again")
            }
        }
    }

    /// The next binary frame, or nil when the client closed the connection.
    private func nextFrame(_ messages: MessageReader) async throws -> Frame? {
        let message: WebSocketMessage?
        do {
            message = try await messages.next()
        } catch {
            throw SessionFailure(.protocol, "the WebSocket message could not be read: \(error)")
        }
        switch message {
        case nil: return nil
        case .text: throw SessionFailure(.protocol, "a text message: sync frames are binary messages")
        case .binary(let buffer): return try Frame(decoding: buffer.bytes)
        }
    }

    /// An UPLOAD's changesets must be in increasing client version, and a
    /// frame above the batch size must hold a single changeset.
    private func checkBatch(_ changesets: [Changeset], after last: UInt64) throws {
        var previous: UInt64 = 0
        var bytes = 0
        for changeset in changesets {
            guard changeset.clientVersion > previous else {
                throw SessionFailure(.protocol, "UPLOAD changesets are not in increasing client version (\(changeset.clientVersion) after \(previous))")
            }
            previous = changeset.clientVersion
            bytes += changeset.encoded.count
        }
        if changesets.count > 1 && bytes > WireLimits.batchBytes {
            throw SessionFailure(.protocol, "an UPLOAD of \(changesets.count) changesets holds \(bytes) bytes; above \(WireLimits.batchBytes) a frame holds one changeset")
        }
    }

    /// Sends the partition's changesets of other clients as they come, within
    /// the window; a count-0 frame each time the client is caught up.
    private func download(partition: String, client: ClientID, after start: UInt64, wakeups: AsyncStream<Void>,
                          window: DownloadWindow, sender: FrameSender, readFilter: ReadFilter?,
                          flexible: FlexibleSync? = nil, tellsProgress: Bool = false) async throws {
        var cursor = start
        var caughtUpSent = false
        for await _ in wakeups {
            // Protocol 4: what is left after the cursor, counted again at each
            // wakeup (new history) and lowered by each frame sent.
            var pending = tellsProgress
                ? try await store.pendingBytes(partition: partition, after: cursor, excluding: client) : 0
            while !Task.isCancelled {
                let room = WireLimits.windowBytes - (await window.unackedBytes)
                guard room > 0 else { break }
                let (fetched, latest) = try await store.history(
                    partition: partition, after: cursor, excluding: client, maxBytes: min(WireLimits.batchBytes, room))
                var changesets = fetched
                guard let last = changesets.last else {
                    if !caughtUpSent {
                        if tellsProgress { try await sender.send(Frame.progress(downloadableBytes: 0).encoded) }
                        try await sender.send(Frame.download(latestServerVersion: latest, changesets: []).encoded)
                        caughtUpSent = true
                    }
                    break
                }
                // Filtered by the read rules: the marks of what it gives and
                // takes count once the frame is sent.
                var marks: [ObjectKey: Bool] = [:]
                if let readFilter {
                    (changesets, marks) = try await readFilter.filter(changesets).pair
                }
                let frame = DownloadBatch.frame(latestServerVersion: latest, changesets: changesets)
                guard await window.admits(frame.count) else { break }
                await window.sent(lastVersion: last.serverVersion, bytes: frame.count)
                if let readFilter { await readFilter.state.sent(marks, lastVersion: last.serverVersion) }
                if tellsProgress {
                    // The history read may hold more than the count (a commit since).
                    pending = max(pending, fetched.reduce(0) { $0 + UInt64($1.encoded.count) })
                    try await sender.send(Frame.progress(downloadableBytes: pending).encoded)
                    pending -= fetched.reduce(0) { $0 + UInt64($1.encoded.count) }
                }
                try await sender.send(frame)
                for done in await flexible?.completions(through: last.serverVersion) ?? [] {
                    try await sender.send(done.encoded)
                }
                cursor = last.serverVersion
                caughtUpSent = false
            }
        }
    }
}
