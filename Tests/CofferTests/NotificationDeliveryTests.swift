// Where observers are called: on a DispatchQueue and on an actor (frozen
// values, in order), on the actor of a database isolated to it with the live
// value after a commit of another thread (auto-refresh, no refresh() call),
// and as async sequences ended by cancelling their task.

import Coffer
import Foundation
import Testing

/// Records what observers isolated to it were told.
actor ChangeCollector {
    private(set) var calls: [String] = []

    func record(_ call: String) {
        calls.append(call)
    }

    func wait(for count: Int) async -> [String] {
        for _ in 0..<500 where calls.count < count {
            try? await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
        }
        return calls
    }
}

/// What a loop thread keeps between its jobs: used only on that thread.
final class LoopState: @unchecked Sendable {
    var database: Database?
    var token: NotificationToken?
}

@Suite("notification delivery")
struct NotificationDeliveryTests {
    let dir = TemporaryDirectory()
    var config: Database.Configuration { configuration(.plain, noteTypes, in: dir) }

    @Test func aQueueGetsFrozenValuesInOrderUntilTheTokenIsInvalidated() throws {
        let db = try Database(configuration: config)
        let queue = DispatchQueue(label: "observer")
        let log = CallLog()
        let token = db.objects(NoteDog.self).sorted(by: \.name).observe(on: queue) { change in
            dispatchPrecondition(condition: .onQueue(queue))
            switch change {
            case .initial(let dogs): log.append("initial \(dogs.count) frozen \(dogs.isFrozen)")
            case .update(let dogs, let deletions, let insertions, _): log.append("update \(dogs.map(\.name)) -\(deletions) +\(insertions)")
            case .error(let error): log.append("error \(error)")
            }
        }
        #expect(log.wait(for: 1) == ["initial 0 frozen true"])
        try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        #expect(log.wait(for: 2).last == "update [\"Rex\"] -[] +[0]")
        try db.write { db.create(NoteDog.self, value: ["name": "Ace"]) }
        #expect(log.wait(for: 3).last == "update [\"Ace\", \"Rex\"] -[] +[0]")
        token.invalidate()
        try db.write { db.create(NoteDog.self, value: ["name": "Max"]) }
        usleep(100_000)
        #expect(log.all.count == 3)
    }

    @Test func anObjectObservedOnAQueueGetsItsChangesAndDeletion() throws {
        let db = try Database(configuration: config)
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        let queue = DispatchQueue(label: "object-observer")
        let log = CallLog()
        let token = rex.observe(keyPaths: ["age"], on: queue) { change in
            switch change {
            case .change(let dog, let properties):
                log.append("\(dog.name) \(properties.map { "\($0.name) \($0.oldValue ?? "nil")->\($0.newValue ?? "nil")" })")
            case .deleted: log.append("deleted")
            case .error(let error): log.append("error \(error)")
            }
        }
        defer { token.invalidate() }
        // The observer's first (silent) call, here and now: changes count from then.
        db.refresh()
        try db.write { rex.name = "Max" }
        try db.write { rex.age = 4 }
        #expect(log.wait(for: 1) == ["Max [\"age 0->4\"]"])
        try db.write { db.delete(rex) }
        #expect(log.wait(for: 2) == ["Max [\"age 0->4\"]", "deleted"])
    }

    @Test func aSchedulerBringsRefreshesAndCallsToTheThreadsOwnLoop() throws {
        let loop = WorkerThread()  // the program's own loop
        let state = LoopState()
        let log = CallLog()
        let config = self.config
        loop.runAndWait {
            let db = try! Database(configuration: config)
            db.setScheduler { work in loop.post(work) }
            state.database = db
            state.token = db.objects(NoteDog.self).observe { change in
                log.append(describe(change) + (Thread.current.isMainThread ? " main" : ""))
            }
        }
        // No refresh() call: the loop refreshes when the scheduler posts.
        #expect(log.wait(for: 1) == ["initial 0"])
        let writer = try Database(configuration: config)
        try writer.write { writer.create(NoteDog.self, value: ["name": "Rex"]) }
        #expect(log.wait(for: 2) == ["initial 0", "update 1 -[] +[0] ~[]"])
        loop.runAndWait {
            #expect(state.database?.objects(NoteDog.self).count == 1)
            state.token?.invalidate()
            state.database?.setScheduler(nil)
            state.database = nil
        }
        try writer.write { writer.create(NoteDog.self, value: ["name": "Max"]) }
        usleep(100_000)
        #expect(log.all.count == 2)
    }

    @Test func observingAFrozenValueOrAnUnmanagedObjectStops() async {
        let frozen = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "observe-frozen",
                                                                        objectTypes: [NoteDog.self, NotePerson.self]))
            _ = db.objects(NoteDog.self).freeze().observe { _ in }
        }
        #expect(errorOutput(frozen).contains("a frozen value never changes and cannot be observed"))
        let unmanaged = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = NoteDog().observe { _ in }
        }
        #expect(errorOutput(unmanaged).contains("an unmanaged NoteDog cannot be observed"))
    }

    @MainActor @Test func anActorGetsItsCallsIsolatedToIt() async throws {
        let db = try await Database(configuration: config)
        let collector = ChangeCollector()
        let token = await db.objects(NoteDog.self).observe(on: collector) { collector, change in
            collector.record(describe(change))
        }
        #expect(await collector.wait(for: 1) == ["initial 0"])
        try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        #expect(await collector.wait(for: 2) == ["initial 0", "update 1 -[] +[0] ~[]"])
        token.invalidate()
        try db.write { db.create(NoteDog.self, value: ["name": "Max"]) }
        try await _Concurrency.Task.sleep(nanoseconds: 100_000_000)
        #expect(await collector.calls.count == 2)
    }

    @MainActor @Test func aDatabaseOnAnActorRefreshesByItselfWhenAnotherThreadCommits() async throws {
        let db = try await Database(configuration: config)
        #expect(db.autorefresh)
        let dogs = db.objects(NoteDog.self)
        #expect(dogs.isEmpty)
        let log = CallLog()
        let token = dogs.observe { change in log.append(describe(change)) }
        defer { token.invalidate() }
        #expect(await log.waitAsync(for: 1) == ["initial 0"])
        let config = self.config
        let thread = Thread {
            let other = try! Database(configuration: config)
            try! other.write { other.create(NoteDog.self, value: ["name": "Rex"]) }
        }
        thread.start()
        #expect(await log.waitAsync(for: 2) == ["initial 0", "update 1 -[] +[0] ~[]"])
        // The live results, read on the actor without refresh(), show the commit.
        #expect(dogs.count == 1)
        #expect(dogs.first?.name == "Rex")
    }

    @MainActor @Test func withAutorefreshOffADatabaseOnAnActorWaitsForRefresh() async throws {
        let db = try await Database(configuration: config)
        db.autorefresh = false
        let log = CallLog()
        let token = db.objects(NoteDog.self).observe { change in log.append(describe(change)) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["initial 0"])
        let config = self.config
        await _Concurrency.Task.detached {
            let other = try! Database(configuration: config)
            try! other.write { other.create(NoteDog.self, value: ["name": "Rex"]) }
        }.value
        try await _Concurrency.Task.sleep(nanoseconds: 200_000_000)
        #expect(log.all == ["initial 0"], "nothing before refresh()")
        #expect(db.refresh())
        #expect(log.all == ["initial 0", "update 1 -[] +[0] ~[]"])
    }

    @MainActor @Test func changesEndWhenTheirTaskIsCancelled() async throws {
        let db = try await Database(configuration: config)
        let changes = db.objects(NoteDog.self).changes
        let log = CallLog()
        let task = _Concurrency.Task {
            for await change in changes { log.append(describe(change)) }
            log.append("ended")
        }
        #expect(await log.waitAsync(for: 1) == ["initial 0"])
        try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        #expect(await log.waitAsync(for: 2) == ["initial 0", "update 1 -[] +[0] ~[]"])
        task.cancel()
        await task.value
        #expect(log.all == ["initial 0", "update 1 -[] +[0] ~[]", "ended"])
    }

    @MainActor @Test func valuesAreFrozenSnapshotsAndAnObjectsChangesEndWithItsDeletion() async throws {
        let db = try await Database(configuration: config)
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        let snapshots = db.objects(NoteDog.self).values
        let objectChanges = rex.changes
        let log = CallLog()
        let valuesTask = _Concurrency.Task {
            for await dogs in snapshots {
                log.append("values \(dogs.count) frozen \(dogs.isFrozen)")
                if dogs.count == 2 { break }
            }
        }
        let changesTask = _Concurrency.Task {
            for await change in objectChanges {
                switch change {
                case .change(let dog, let properties): log.append("rex \(dog.isFrozen) \(properties.map(\.name))")
                case .deleted: log.append("rex deleted")
                case .error(let error): log.append("rex error \(error)")
                }
            }
            log.append("rex ended")
        }
        _ = await log.waitAsync(for: 1)
        try db.write { db.create(NoteDog.self, value: ["name": "Max"]) }
        await valuesTask.value
        try db.write { rex.age = 3 }
        _ = await log.waitAsync(for: 3)
        try db.write { db.delete(rex) }
        await changesTask.value
        let calls = log.all
        #expect(calls.filter { $0.hasPrefix("values") } == ["values 1 frozen true", "values 2 frozen true"])
        #expect(calls.filter { $0.hasPrefix("rex") } == ["rex true [\"age\"]", "rex deleted", "rex ended"])
    }
}
