// A commit made by another process (this test program run again as a child,
// through an exit test) reaches a database isolated to an actor by itself:
// its live results, objects and lists show it without refresh(), and its
// observers are told exact change sets.

import Coffer
import Foundation
import Testing

@Suite("observing commits of another process")
struct CrossProcessObservationTests {
    let dir = TemporaryDirectory()
    var path: String { dir.url.appendingPathComponent("shared.coffer").path }

    /// The file's configuration, the same in both processes.
    static func configuration(_ path: String) -> Database.Configuration {
        Database.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: noteTypes)
    }

    /// Waits, without blocking the actor, until `log` has `count` entries,
    /// for at most a minute (the machine may be loaded).
    static func wait(_ log: CallLog, for count: Int) async -> [String] {
        let deadline = Date().addingTimeInterval(60)
        while log.all.count < count && Date() < deadline {
            try? await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
        }
        return log.all
    }

    @MainActor @Test func aCommitOfAnotherProcessReachesLiveValuesAndObservers() async throws {
        let db = try await Database(configuration: Self.configuration(path))
        let (ann, bo) = try db.write {
            let dogs = [("Ace", 1), ("Bo", 2), ("Cy", 3)].map { db.create(NoteDog.self, value: ["name": $0.0, "age": $0.1]) }
            return (db.create(NotePerson.self, value: ["name": "Ann", "dogs": [dogs[0], dogs[1]]]), dogs[1])
        }
        let dogs = db.objects(NoteDog.self).where { $0.age < 10 }.sorted(by: \.name)
        let log = CallLog()
        let tokens = [
            dogs.observe { log.append("results \(describe($0))") },
            ann.dogs.observe { log.append("list \(describe($0))") },
            bo.observe { change in
                if case .change(_, let properties) = change {
                    log.append("object " + properties.map { "\($0.name) \($0.oldValue ?? "nil")->\($0.newValue ?? "nil")" }.joined(separator: ", "))
                }
            },
        ]
        defer { tokens.forEach { $0.invalidate() } }
        #expect(Set(await Self.wait(log, for: 2)) == ["results initial 3", "list initial 2"])

        await #expect(processExitsWith: .success) { [path = self.path as String] in
            let other = try Database(configuration: CrossProcessObservationTests.configuration(path))
            try other.write {
                let dogs = other.objects(NoteDog.self)
                let ben = other.create(NoteDog.self, value: ["name": "Ben", "age": 4])
                dogs.where { $0.name == "Bo" }.first!.name = "Zed"
                other.delete(dogs.where { $0.name == "Cy" }.first!)
                other.objects(NotePerson.self).first!.dogs.append(ben)
            }
        }

        let calls = await Self.wait(log, for: 5)
        // Ace, Bo, Cy -> Ace, Ben, Zed: Cy went, Ben came, and Bo, renamed, kept
        // its place among the rows kept (after Ace), so it is modified.
        #expect(calls.contains("results update 3 -[2] +[1] ~[1]"), "\(calls)")
        // Ace, Bo -> Ace, Zed, Ben: Bo changed, Ben came.
        #expect(calls.contains("list update 3 -[] +[2] ~[1]"), "\(calls)")
        #expect(calls.contains("object name Bo->Zed"), "\(calls)")
        #expect(calls.count == 5, "one call each: \(calls)")
        // Read on the actor without refresh().
        #expect(dogs.map(\.name) == ["Ace", "Ben", "Zed"])
        #expect(bo.name == "Zed")
        #expect(ann.dogs.map(\.name) == ["Ace", "Zed", "Ben"])
    }
}
