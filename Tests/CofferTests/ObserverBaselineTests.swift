// An observer's first call reports the database as it was when the observer
// was registered, however late the notifier gets to it: a write committed
// right after registering is told as a change, never folded into the first
// call. The handle's notifier is held (auto-refresh off in the C core) so
// that the first refresh comes only after the write, as on a loaded machine.

@testable import Coffer
import CCoffer
import Foundation
import Testing

@Suite("observers start from their registration")
struct ObserverBaselineTests {
    let test: TestDatabase
    var db: Database { test.db }
    let log = CallLog()

    init() throws {
        test = try TestDatabase(.inMemory, noteTypes)
    }

    /// Keeps the C core's notifier from refreshing on its own: observers are
    /// then called only from `refresh()`.
    func holdNotifier() {
        #expect(coffer_db_set_auto_refresh(db.handle, 0) == COFFER_OK)
    }

    @Test func anObjectObserverRegisteredJustBeforeAWriteIsToldOfIt() throws {
        holdNotifier()
        let ace = try db.write { db.create(NoteDog.self, value: ["name": "Ace"]) }
        let token = ace.observe(keyPaths: ["name"]) { change in
            if case .change(_, let properties) = change {
                log.append(properties.map { "\($0.name): \($0.oldValue ?? "") -> \($0.newValue ?? "")" }.joined())
            }
        }
        defer { token.invalidate() }
        try db.write { ace.name = "Abe" }
        db.refresh()
        #expect(log.all == ["name: Ace -> Abe"])
        db.refresh()
        #expect(log.all == ["name: Ace -> Abe"], "told once")
    }

    @Test func resultsRegisteredJustBeforeAnInsertGetTheInsertion() throws {
        holdNotifier()
        try db.write { _ = db.create(NoteDog.self, value: ["name": "Bo"]) }
        let dogs = db.objects(NoteDog.self).sorted(by: \.name)
        let token = dogs.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        try db.write { _ = db.create(NoteDog.self, value: ["name": "Ace"]) }
        db.refresh()
        // The first call hands over the live results, which already show
        // the insert; the insert still comes as a change of its own.
        #expect(log.all == ["initial 2", "update 2 -[] +[0] ~[]"])
    }

    @Test func aQueueObserverRegisteredJustBeforeAWriteIsToldOfIt() async throws {
        holdNotifier()
        let ace = try db.write { db.create(NoteDog.self, value: ["name": "Ace", "age": 1]) }
        let queue = DispatchQueue(label: "baseline")
        let log = self.log
        let token = ace.observe(keyPaths: ["age"], on: queue) { change in
            if case .change(let dog, let properties) = change {
                log.append("\(properties.map(\.name)) \(dog.age)")
            }
        }
        defer { token.invalidate() }
        try db.write { ace.age = 2 }
        db.refresh()
        #expect(await log.waitAsync(for: 1) == ["[\"age\"] 2"])
    }

    /// The race as it happens with the notifier running: registering and
    /// writing at once, many times; every write is told.
    @Test func writesRacingTheNotifierAreNeverFoldedIntoTheFirstCall() throws {
        let ace = try db.write { db.create(NoteDog.self, value: ["name": "Ace", "age": 0]) }
        for round in 1...30 {
            var told: [Int] = []
            let token = ace.observe(keyPaths: ["age"]) { change in
                if case .change(let dog, _) = change { told.append(dog.age) }
            }
            try db.write { ace.age = round }
            for _ in 0..<500 where told.isEmpty {
                db.refresh()
                if told.isEmpty { Thread.sleep(forTimeInterval: 0.01) }
            }
            token.invalidate()
            #expect(told == [round], "round \(round)")
        }
    }
}
