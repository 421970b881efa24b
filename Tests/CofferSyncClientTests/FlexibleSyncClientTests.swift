// Flexible sync from Swift against the real service and PostgreSQL, with
// Realm's names: initialSubscriptions, subscriptions.update with
// QuerySubscription<T>, first(named:), remove(named:), removeAll(ofType:),
// state, and a query the service cannot evaluate.
import Coffer
import CofferSyncTestSupport
import Foundation
import Testing

/// A dog of the flexible data set.
final class FlexDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var age = 0
    @Persisted var toys: List<String>
}

/// A flexible-sync database of its own file, opened on this actor.
actor FlexReplica {
    private var db: Database!

    init(_ user: User, initial: (@Sendable (MutableSubscriptionSet) -> Void)?) async throws {
        var config = user.flexibleSyncConfiguration(initialSubscriptions: initial)
        config.fileURL = Replica.newFileURL()
        config.objectTypes = [FlexDog.self]
        db = try await Database(configuration: config, actor: self)
    }

    func add(_ ages: [Int: Int]) throws {
        try db.write {
            for (id, age) in ages { db.add(FlexDog(value: ["id": id, "age": age, "toys": ["t\(id)"]])) }
        }
    }

    /// id → age of the dogs the file holds now.
    func ages() -> [Int: Int] {
        db.refresh()
        return Dictionary(uniqueKeysWithValues: db.objects(FlexDog.self).map { ($0.id, $0.age) })
    }

    func toys(_ id: Int) -> [String] {
        db.refresh()
        return db.object(ofType: FlexDog.self, forPrimaryKey: id).map { Array($0.toys) } ?? []
    }

    var subscriptions: SyncSubscriptionSet { db.subscriptions }

    func update(_ block: (MutableSubscriptionSet) -> Void) async throws {
        try await db.subscriptions.update(timeout: patience, block)
    }

    /// `update(_:onComplete:)`: what its callback was told.
    func updateWithCallback(_ block: (MutableSubscriptionSet) -> Void) async -> (any Error)? {
        await withCheckedContinuation { done in
            db.subscriptions.update(block, onComplete: { done.resume(returning: $0) })
        }
    }

    func waitForUpload() async throws {
        try await db.syncSession!.wait(for: .upload, timeout: patience)
    }
}

@Suite("Swift flexible sync")
struct FlexibleSyncClientTests {
    @Test("subscriptions added, narrowed and removed give the exact objects; a bad query names its part")
    func subscriptions() async throws {
        let service = try await AuthClientTests.service()
        defer { service.stop() }
        let app = AuthClientTests.app(service)
        let ada = try await app.login(credentials: .anonymous)
        let bob = try await app.login(credentials: .anonymous)

        let writer = try await FlexReplica(ada) { $0.append(QuerySubscription<FlexDog>(name: "all")) }
        try await writer.subscriptions.waitForCompletion(timeout: patience)
        try await writer.add([1: 1, 2: 3, 3: 5, 4: 7])
        try await writer.waitForUpload()

        let reader = try await FlexReplica(bob) {
            $0.append(QuerySubscription<FlexDog>(name: "older") { $0.age > 2 })
        }
        try await reader.subscriptions.waitForCompletion(timeout: patience)
        #expect(await reader.ages() == [2: 3, 3: 5, 4: 7])
        #expect(await reader.toys(3) == ["t3"])
        #expect(await reader.subscriptions.state == .complete)
        #expect(await reader.subscriptions.first(named: "older")?.queryString == "age > 2")

        let told = await reader.updateWithCallback {
            $0.removeAll()
            $0.append(QuerySubscription<FlexDog>(name: "older") { $0.age > 4 && $0.age < 100 })
        }
        #expect(told == nil)
        #expect(await reader.ages() == [3: 5, 4: 7])
        #expect(await reader.subscriptions.first(named: "older")?.queryString == "(age > 4 AND age < 100)")

        try await reader.update {
            $0.remove(named: "older")
            $0.append(QuerySubscription<FlexDog>(name: "oldest") { $0.age > 6 })
        }
        #expect(await reader.ages() == [4: 7])
        #expect(await reader.subscriptions.first(named: "older") == nil)
        #expect(await reader.subscriptions.first(ofType: FlexDog.self)?.name == "oldest")

        try await reader.update { $0.removeAll(ofType: FlexDog.self) }
        #expect(await reader.ages() == [:])
        #expect(await reader.subscriptions.count == 0)

        do {
            try await reader.update {
                $0.append(QuerySubscription<FlexDog>(name: "bad", where: "age BETWEEN {1, 3}"))
            }
            Issue.record("a query the service cannot evaluate completed")
        } catch let error as CofferError {
            #expect(error.code == .query, "\(error)")
            #expect(error.message.contains("'bad'") && error.message.contains("BETWEEN"), "\(error.message)")
        }
        guard case .error(let message) = await reader.subscriptions.state else {
            Issue.record("the refused set is not in the error state")
            return
        }
        #expect(message.contains("BETWEEN"))
        #expect(await reader.ages() == [:])
        #expect(await writer.ages() == [1: 1, 2: 3, 3: 5, 4: 7])
    }
}
