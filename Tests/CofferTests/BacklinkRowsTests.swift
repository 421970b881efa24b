// Linking objects observed row by row as they are read: an object whose list
// holds the target twice is two rows, in the change sets as in reading.

import Coffer
import Foundation
import Testing

@Suite struct BacklinkRowsTests {
    let test: TestDatabase
    var db: Database { test.db }
    let log = CallLog()

    init() throws {
        test = try TestDatabase(.inMemory, noteTypes)
    }

    /// The owners' names as delivered, then the change told.
    func record<Owners: Sequence>(_ change: CollectionChange<Owners>) where Owners.Element == NotePerson {
        switch change {
        case .initial(let owners): log.append("\(owners.map(\.name)) initial")
        case .update(let owners, let deletions, let insertions, let modifications):
            log.append("\(owners.map(\.name)) -\(deletions) +\(insertions) ~\(modifications)")
        case .error(let error): log.append("error \(error)")
        }
    }

    @Test func aSecondLinkIsASecondRowAddedAndRemovedExactly() throws {
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        let ann = try db.write { db.create(NotePerson.self, value: ["name": "Ann", "dogs": [rex]]) }
        let token = rex.owners.observe { record($0) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["[\"Ann\"] initial"])

        // Ann's list changed, so her first row is modified; her second link
        // is a row of its own, inserted after the first.
        try db.write { ann.dogs.append(rex) }
        db.refresh()
        #expect(log.all.last == "[\"Ann\", \"Ann\"] -[] +[1] ~[0]")
        #expect(rex.owners.count == 2)

        // Bob comes after Ann (in key order), with two links at once.
        let bob = try db.write { db.create(NotePerson.self, value: ["name": "Bob", "dogs": [rex, rex]]) }
        db.refresh()
        #expect(log.all.last == "[\"Ann\", \"Ann\", \"Bob\", \"Bob\"] -[] +[2, 3] ~[]")

        // A link removed deletes its object's last row.
        try db.write { ann.dogs.remove(at: 0) }
        db.refresh()
        #expect(log.all.last == "[\"Ann\", \"Bob\", \"Bob\"] -[1] +[] ~[0]")

        // A change of Bob's name modifies both his rows.
        try db.write { bob.name = "Bo" }
        db.refresh()
        #expect(log.all.last == "[\"Ann\", \"Bo\", \"Bo\"] -[] +[] ~[1, 2]")

        // Bob deleted: both his rows go.
        try db.write { db.delete(bob) }
        db.refresh()
        #expect(log.all.last == "[\"Ann\"] -[1, 2] +[] ~[]")
        #expect(log.all.count == 6)
    }

    @Test func keyPathsLeavingOutTheListTellALinkWithTheNextChange() throws {
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        let ann = try db.write { db.create(NotePerson.self, value: ["name": "Ann", "dogs": [rex]]) }
        let token = rex.owners.observe(keyPaths: ["name"]) { record($0) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { ann.dogs.append(rex) }
        db.refresh()
        #expect(log.all == ["[\"Ann\"] initial"], "the list is outside the key paths")
        try db.write { ann.name = "Anna" }
        db.refresh()
        #expect(log.all.last == "[\"Anna\", \"Anna\"] -[] +[1] ~[0]")
    }

    @Test func frozenLinkingObjectsOnAQueueHaveTheRowsTheChangeCounts() throws {
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        let ann = try db.write { db.create(NotePerson.self, value: ["name": "Ann", "dogs": [rex]]) }
        let token = rex.owners.observe(on: DispatchQueue(label: "backlink-rows")) { record($0) }
        defer { token.invalidate() }
        #expect(log.wait(for: 1) == ["[\"Ann\"] initial"])
        try db.write { ann.dogs.append(objectsIn: [rex, rex]) }
        #expect(log.wait(for: 2).last == "[\"Ann\", \"Ann\", \"Ann\"] -[] +[1, 2] ~[0]")
        try db.write { ann.dogs.removeAll() }
        #expect(log.wait(for: 3).last == "[] -[0, 1, 2] +[] ~[]")
    }
}
