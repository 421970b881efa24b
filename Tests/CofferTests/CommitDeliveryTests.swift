// A commit through the observing database tells its observers on the
// committing thread, before the write returns (coffer_db_set_refresh_on_commit):
// a queue observer's call is on its queue by then. The frozen results such a
// call gets take their rows from the change set instead of running their
// query again, and read what the query reads at their version, also while
// another thread commits.

import Coffer
import Foundation
import Testing

@Suite("commit delivery")
struct CommitDeliveryTests {
    let dir = TemporaryDirectory()

    @Test(arguments: [Storage.plain, .encrypted, .inMemory])
    func aQueueObserverIsCalledBeforeTheWriteReturns(_ storage: Storage) throws {
        let db = try Database(configuration: configuration(storage, noteTypes, in: dir))
        let queue = DispatchQueue(label: "commit-observer")
        let log = CallLog()
        let token = db.objects(NoteDog.self).sorted(by: \.age).observe(on: queue) { change in
            switch change {
            case .initial(let dogs): log.append("initial \(dogs.count)")
            case .update(let dogs, let deletions, let insertions, let modifications):
                log.append("\(dogs.map(\.name)) -\(deletions) +\(insertions) ~\(modifications)")
            case .error(let error): log.append("error \(error)")
            }
        }
        defer { token.invalidate() }
        #expect(log.wait(for: 1) == ["initial 0"])
        db.refresh()  // the notifier's first cycle is over
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex", "age": 3]) }
        queue.sync {}
        #expect(log.all.last == "[\"Rex\"] -[] +[0] ~[]")
        try db.write { db.create(NoteDog.self, value: ["name": "Ace", "age": 5]) }
        queue.sync {}
        #expect(log.all.last == "[\"Rex\", \"Ace\"] -[] +[1] ~[]")
        try db.write { rex.age = 9 }
        queue.sync {}
        #expect(log.all.last == "[\"Ace\", \"Rex\"] -[0] +[1] ~[]")
        try db.write { rex.name = "Max" }
        queue.sync {}
        #expect(log.all.last == "[\"Ace\", \"Max\"] -[] +[] ~[1]")
        #expect(log.all.count == 5)
    }

    @Test func frozenResultsOfACallReadTheRowsOfTheirVersion() throws {
        let config = configuration(.plain, noteTypes, in: dir)
        let db = try Database(configuration: config)
        try db.write {
            for age in 0..<20 { db.create(NoteDog.self, value: ["name": "dog \(age)", "age": age]) }
        }
        let queue = DispatchQueue(label: "frozen-rows")
        let log = CallLog()
        let token = db.objects(NoteDog.self).where { $0.age < 1_000 }.sorted(by: \.age).observe(on: queue) { change in
            guard case .update(let dogs, _, _, _) = change else { return }
            // The query run again on the same frozen version.
            let again = dogs.database.objects(NoteDog.self).where { $0.age < 1_000 }.sorted(by: \.age)
            let same = dogs.map(\.name) == again.map(\.name) && dogs.count == again.count
            log.append(same ? "same" : "differs: \(dogs.map(\.name)) vs \(again.map(\.name))")
        }
        defer { token.invalidate() }
        db.refresh()
        // Another thread commits while this one does: some calls are made
        // by the notifier at a version a later commit already passed.
        let other = Thread {
            let db = try! Database(configuration: config)
            for round in 0..<20 {
                try! db.write { db.objects(NoteDog.self).where { $0.name == "dog \(round)" }.first!.age = 2_000 + round }
            }
        }
        other.start()
        let dogs = db.objects(NoteDog.self)
        for round in 0..<20 {
            try db.write { dogs.where { $0.name == "dog \(19 - round)" }.first?.age = 100 - round }
        }
        while !other.isFinished { usleep(1_000) }
        try db.write { db.create(NoteDog.self, value: ["name": "last", "age": 1]) }
        queue.sync {}
        let calls = log.all
        #expect(!calls.isEmpty)
        #expect(calls.allSatisfy { $0 == "same" }, "\(calls.filter { $0 != "same" })")
    }
}
