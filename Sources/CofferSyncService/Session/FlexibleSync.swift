// The flexible-sync part of a session (protocol 3, docs/SYNC.md, "Flexible
// sync"): the client's subscription set, which narrows what its downloads
// carry and what its uploads may change. Each SUBSCRIBE replaces the set and
// appends a marker to the partition's history (an empty changeset of the
// service that only this session acts on), at which the session's download
// compares what the client has with what it may now read: DELETEs for the
// objects that left its view, each object that entered it whole. Once the
// frame holding the marker is sent, SUBSCRIPTION_COMPLETE tells the client
// that its set is in effect.
import CofferSyncProtocol
import Logging

struct FlexibleSync: Sendable {
    let scope: SubscriptionScope
    /// The configured rules (nil: everything allowed) and the session's user.
    let rules: PermissionRules?
    let user: QueryUser
    let objects: ClientObjects
    let partition: String

    init(rules: PermissionRules?, user: QueryUser, objects: ClientObjects, partition: String) {
        self.rules = rules
        self.user = user
        self.objects = objects
        self.partition = partition
        // Nothing is subscribed until the first SUBSCRIBE.
        let empty = try! SubscriptionSet(version: 0, queries: [])
        scope = SubscriptionScope(rules: empty.narrowing(rules, for: user))
    }

    /// The rules an upload is checked against now.
    var writer: SyncStore.Writer {
        get async { SyncStore.Writer(rules: await scope.rules, user: user) }
    }

    /// Applies SUBSCRIBE `version`: the frame to send at once, ERROR
    /// SUBSCRIPTION for a set with a query the service cannot evaluate (the
    /// session goes on with the set before it), else nil (SUBSCRIPTION_COMPLETE
    /// follows the marker's download).
    func subscribe(version: UInt64, queries: [SubscriptionQuery], logger: Logger) async throws -> Frame? {
        let set: SubscriptionSet
        do {
            set = try SubscriptionSet(version: version, queries: queries)
        } catch let refusal as SubscriptionRefusal {
            logger.info("subscription set \(version) refused: \(refusal.description)")
            return .subscriptionError(message: "subscription set \(version) refused: \(refusal.description)",
                                      setVersion: version)
        }
        // Appended and made this session's own before a batch holding it is filtered.
        await scope.acquire()
        let marker: UInt64
        do {
            marker = try await objects.appendReconcileMarker(partition: partition, only: true)
        } catch {
            await scope.release()
            throw error
        }
        await scope.replace(set.narrowing(rules, for: user), marker: marker, setVersion: version)
        await scope.release()
        logger.debug("subscription set \(version) (\(queries.count) queries) takes effect at server version \(marker)")
        return nil
    }

    /// The SUBSCRIPTION_COMPLETE frames due once the download sent the
    /// history through `version`.
    func completions(through version: UInt64) async -> [Frame] {
        await scope.completed(through: version).map {
            .subscriptionComplete(setVersion: $0.setVersion, serverVersion: $0.marker)
        }
    }
}
