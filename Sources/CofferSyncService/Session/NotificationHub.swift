// Fans PostgreSQL notifications out to the sessions of this instance: one
// connection LISTENs on coffer_sync (whichever instance integrated a
// changeset NOTIFYs it), and every session of the named partition is woken.
// When the listening connection is lost it reconnects with backoff and then
// wakes every session, since notifications sent meanwhile are lost; a
// periodic wake-up of all sessions is the last safety net.
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

actor NotificationHub {
    private var sessions: [String: [Int: AsyncStream<Void>.Continuation]] = [:]
    private var nextID = 0

    /// A stream that yields whenever the partition may have new changesets.
    func subscribe(partition: String) -> (id: Int, wakeups: AsyncStream<Void>) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        nextID += 1
        sessions[partition, default: [:]][nextID] = continuation
        return (nextID, stream)
    }

    func unsubscribe(partition: String, id: Int) {
        sessions[partition]?[id]?.finish()
        sessions[partition]?[id] = nil
        if sessions[partition]?.isEmpty == true { sessions[partition] = nil }
    }

    func wake(partition: String) {
        guard let subscribers = sessions[partition] else { return }
        for continuation in subscribers.values { continuation.yield() }
    }

    /// Wakes one session (its download window opened).
    func wake(partition: String, id: Int) {
        sessions[partition]?[id]?.yield()
    }

    func wakeAll() {
        for partition in sessions.values {
            for continuation in partition.values { continuation.yield() }
        }
    }

    /// Listens until cancelled, reconnecting after failures.
    nonisolated func run(url: PostgresURL, logger: Logger) async {
        var delay: Duration = .milliseconds(200)
        var connectionID = 0
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // The safety net: a lost notification delays a download by at most this.
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(30))
                    await self.wakeAll()
                }
            }
            while !Task.isCancelled {
                connectionID += 1
                do {
                    let connection = try await PostgresConnection.connect(
                        on: MultiThreadedEventLoopGroup.singleton.next(),
                        configuration: url.connectionConfiguration, id: connectionID, logger: logger).get()
                    defer { Task { try? await connection.close() } }
                    try await connection.listen(on: SyncStore.channel) { notifications in
                        logger.info("listening for changes on \(url)")
                        delay = .milliseconds(200)
                        await self.wakeAll()
                        for try await notification in notifications {
                            await self.wake(partition: notification.payload)
                        }
                    }
                    throw StoreError("the listening connection closed")
                } catch {
                    if Task.isCancelled { break }
                    logger.warning("change notifications from \(url) lost (\(error)); reconnecting in \(delay)")
                }
                if Task.isCancelled { break }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
            group.cancelAll()
        }
    }
}
