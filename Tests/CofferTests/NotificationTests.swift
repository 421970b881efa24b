// Notifications on the database's own thread: the calls of observers
// registered with `on: nil` come from refresh(). Exact change sets under
// sorting, key paths through links, object changes with old and new values,
// deletion, maps, sets, linking objects, tokens invalidated from inside a
// callback, writes without notifying, and errors.

import Coffer
import Foundation
import Testing

@Suite("notifications on the database's thread")
struct NotificationTests {
    let test: TestDatabase
    var db: Database { test.db }
    let log = CallLog()

    init() throws {
        test = try TestDatabase(.inMemory, noteTypes)
    }

    @discardableResult
    func addDog(_ name: String, age: Int = 1) throws -> NoteDog {
        try db.write { db.create(NoteDog.self, value: ["name": name, "age": age]) }
    }

    @Test func sortedResultsReportAMoveAsADeletionPlusAnInsertion() throws {
        for name in ["Ace", "Bo", "Cy", "Di"] { try addDog(name) }
        let sorted = db.objects(NoteDog.self).sorted(by: \.name)
        let token = sorted.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["initial 4"])
        let bo = db.objects(NoteDog.self).where { $0.name == "Bo" }.first!
        try db.write { bo.name = "Zed" }
        db.refresh()
        #expect(log.all == ["initial 4", "update 4 -[1] +[3] ~[]"])
        // A property that keeps the order is a modification, in old indices.
        let cy = db.objects(NoteDog.self).where { $0.name == "Cy" }.first!
        try db.write { cy.age = 9 }
        db.refresh()
        #expect(log.all.last == "update 4 -[] +[] ~[1]")
    }

    @Test func aFilterThenASortIsObservedAsOneQuery() throws {
        for (name, age) in [("Ace", 1), ("Bo", 5), ("Cy", 2)] { try addDog(name, age: age) }
        let young = db.objects(NoteDog.self).where { $0.age < 4 }.sorted(by: \.name, ascending: false)
        let token = young.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try addDog("Bea", age: 3)
        db.refresh()
        // Cy, Bea, Ace: the new dog is second.
        #expect(log.all == ["initial 2", "update 3 -[] +[1] ~[]"])
        #expect(young.map(\.name) == ["Cy", "Bea", "Ace"])
    }

    @Test func keyPathsThroughLinksChooseWhichChangesCount() throws {
        let rex = try addDog("Rex")
        try db.write { db.create(NotePerson.self, value: ["name": "Ann", "dogs": [rex]]) }
        let people = db.objects(NotePerson.self)
        let token = people.observe(keyPaths: ["dogs.name"]) { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { rex.age = 7 }
        db.refresh()
        #expect(log.all == ["initial 1"], "a change off the key path tells nothing")
        try db.write { rex.name = "Max" }
        db.refresh()
        #expect(log.all == ["initial 1", "update 1 -[] +[] ~[0]"])
    }

    @Test func anObjectObserverGetsOldAndNewValuesThenTheDeletion() throws {
        let rex = try addDog("Rex", age: 2)
        var calls: [String] = []
        let token = rex.observe { change in
            switch change {
            case .change(let dog, let properties):
                calls.append(properties.map { "\($0.name) \($0.oldValue ?? "nil")->\($0.newValue ?? "nil")" }.joined(separator: ", ")
                             + " on \(dog.name)")
            case .deleted: calls.append("deleted")
            case .error(let error): calls.append("error \(error)")
            }
        }
        defer { token.invalidate() }
        db.refresh()
        #expect(calls.isEmpty, "an object observer has no initial call")
        try db.write {
            rex.name = "Max"
            rex.age = 3
        }
        db.refresh()
        #expect(calls == ["name Rex->Max, age 2->3 on Max"])
        let values = try #require(calls.first)
        #expect(values.contains("Rex->Max"))
        try db.write { db.delete(rex) }
        db.refresh()
        #expect(calls.last == "deleted")
        #expect(calls.count == 2)
    }

    @Test func anObjectChangeReachedThroughALinkIsNamedByItsFirstProperty() throws {
        let rex = try addDog("Rex")
        let ann = try db.write { db.create(NotePerson.self, value: ["name": "Ann", "dogs": [rex]]) }
        var names: [[String]] = []
        let token = ann.observe(keyPaths: ["dogs.name"]) { change in
            if case .change(_, let properties) = change { names.append(properties.map(\.name)) }
        }
        defer { token.invalidate() }
        db.refresh()
        try db.write { rex.name = "Max" }
        db.refresh()
        #expect(names == [["dogs"]])
    }

    @Test func anUnknownKeyPathIsAnErrorNamingIt() throws {
        try addDog("Rex")
        let token = db.objects(NoteDog.self).observe(keyPaths: ["nmae"]) { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        let calls = log.all
        #expect(calls.count == 1)
        #expect(calls.first?.hasPrefix("error") == true && calls.first?.contains("nmae") == true, "\(calls)")
        try addDog("Max")
        db.refresh()
        #expect(log.all.count == 1, "nothing follows an error")
    }

    @Test func listsSetsMapsAndLinkingObjectsReportTheirChanges() throws {
        let rex = try addDog("Rex"), max = try addDog("Max")
        let ann = try db.write { db.create(NotePerson.self, value: ["name": "Ann", "dogs": [rex, max]]) }
        var maps: [String] = []
        let tokens = [
            ann.dogs.observe { log.append("dogs " + describe($0)) },
            ann.tags.observe { log.append("tags " + describe($0)) },
            ann.scores.observe { change in
                switch change {
                case .initial(let map): maps.append("initial \(map.count)")
                case .update(_, let deletions, let insertions, let modifications):
                    maps.append("-\(deletions) +\(insertions) ~\(modifications)")
                case .error(let error): maps.append("error \(error)")
                }
            },
            rex.owners.observe { log.append("owners " + describe($0)) },
        ]
        defer { tokens.forEach { $0.invalidate() } }
        db.refresh()
        #expect(Set(log.all) == ["dogs initial 2", "tags initial 0", "owners initial 1"])
        #expect(maps == ["initial 0"])
        try db.write {
            ann.dogs.move(from: 0, to: 1)
            ann.tags.insert("good")
            ann.scores["walks"] = 3
            db.create(NotePerson.self, value: ["name": "Bob", "dogs": [rex]])
        }
        db.refresh()
        let updates = log.all.filter { !$0.contains("initial") }
        // Ann's dogs changed, so Ann, linking to Rex, is modified too.
        // A move is a deletion plus an insertion, as Realm Swift reports it.
        #expect(Set(updates) == ["dogs update 2 -[0] +[1] ~[]", "tags update 1 -[] +[0] ~[]", "owners update 2 -[] +[1] ~[0]"])
        #expect(maps.last == "-[] +[\"walks\"] ~[]")
        try db.write { ann.scores["walks"] = 4 }
        db.refresh()
        #expect(maps.last == "-[] +[] ~[\"walks\"]")
    }

    @Test func aTokenInvalidatedInsideItsCallbackIsNotCalledAgain() throws {
        var token: NotificationToken?
        var calls = 0
        token = db.objects(NoteDog.self).observe { change in
            calls += 1
            if case .update = change { token?.invalidate() }
        }
        db.refresh()
        try addDog("Rex")
        db.refresh()
        try addDog("Max")
        db.refresh()
        #expect(calls == 2)
    }

    @Test func writeWithoutNotifyingSkipsOnlyTheGivenObservers() throws {
        let rex = try addDog("Rex")
        let quiet = db.objects(NoteDog.self).observe { log.append("quiet " + describe($0)) }
        let told = db.objects(NoteDog.self).observe { log.append("told " + describe($0)) }
        var objectCalls = 0
        let quietObject = rex.observe { _ in objectCalls += 1 }
        defer { [quiet, told, quietObject].forEach { $0.invalidate() } }
        db.refresh()
        try db.write(withoutNotifying: [quiet, quietObject]) { rex.age = 5 }
        db.refresh()
        #expect(log.all.filter { $0.hasPrefix("quiet") } == ["quiet initial 1"])
        #expect(log.all.filter { $0.hasPrefix("told") } == ["told initial 1", "told update 1 -[] +[] ~[0]"])
        #expect(objectCalls == 0)
        // Later commits are told again; an insertion is told even when skipped,
        // so that indices stay right.
        db.beginWrite()
        db.create(NoteDog.self, value: ["name": "Max"])
        try db.commitWrite(withoutNotifying: [quiet])
        db.refresh()
        #expect(log.all.filter { $0.hasPrefix("quiet") }.last == "quiet update 2 -[] +[1] ~[]")
        try db.write { rex.age = 6 }
        db.refresh()
        #expect(objectCalls == 1)
    }

    @Test func aTokenOfAnotherDatabaseIsRefusedAndNothingIsCommitted() throws {
        let other = try TestDatabase(.inMemory, noteTypes)
        let foreign = other.db.objects(NoteDog.self).observe { _ in }
        defer { foreign.invalidate() }
        #expect(throws: CofferError.self) {
            try db.write(withoutNotifying: [foreign]) { db.create(NoteDog.self, value: ["name": "Rex"]) }
        }
        #expect(db.objects(NoteDog.self).isEmpty)
        #expect(!db.isInWriteTransaction)
    }

    @Test func theDatabaseObserverIsToldOfEachRefreshThatMovedIt() throws {
        var notes: [Database.Notification] = []
        let token = db.observe { notification, database in
            notes.append(notification)
            #expect(database === db)
        }
        defer { token.invalidate() }
        db.refresh()
        try addDog("Rex")
        db.refresh()
        #expect(notes.contains(.didChange))
        let seen = notes.count
        db.refresh()
        #expect(notes.count == seen, "a refresh that did not move tells nothing")
    }

    @Test func withAutorefreshOffCallsWaitForRefresh() throws {
        db.autorefresh = false
        #expect(!db.autorefresh)
        let token = db.objects(NoteDog.self).observe { log.append(describe($0)) }
        defer { token.invalidate() }
        try addDog("Rex")
        usleep(50_000)
        #expect(log.all.isEmpty)
        db.refresh()
        #expect(log.all.last == "update 1 -[] +[0] ~[]" || log.all == ["initial 1"])
    }
}
