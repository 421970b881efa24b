// Results of linking objects, narrowed or sorted, observed row by row as they
// are read: an object whose list holds the target twice is two rows when it
// matches, side by side in the results' order, in the change sets as in
// reading (as realm-core's query over a backlink view keeps each row).

import Coffer
import Foundation
import Testing

/// The same suite's database and log (BacklinkRowsTests.swift).
extension BacklinkRowsTests {
    func person(_ name: String, _ dogs: [NoteDog]) throws -> NotePerson {
        try db.write { db.create(NotePerson.self, value: ["name": name, "dogs": dogs]) }
    }

    @Test func narrowedLinkingObjectsAreReadOneRowPerLink() throws {
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        _ = try person("Ann", [rex, rex])
        _ = try person("Bob", [rex])
        _ = try person("Abe", [rex])
        let named = rex.owners.where { $0.name.starts(with: "A") }
        #expect(named.map(\.name) == ["Ann", "Ann", "Abe"])
        #expect(named.count == 3)
        #expect(rex.owners.sorted(byKeyPath: "name").map(\.name) == ["Abe", "Ann", "Ann", "Bob"])
        #expect(rex.owners.distinct(by: ["name"]).map(\.name) == ["Ann", "Bob", "Abe"], "distinct keeps an object once")
    }

    @Test func narrowedLinkingObjectsTellEachLinkAndEachMatch() throws {
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        let ann = try person("Ann", [rex])
        let named = rex.owners.where { $0.name.starts(with: "A") }
        let token = named.observe { record($0) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["[\"Ann\"] initial"])

        // A second link of a matching object: a row after its first.
        try db.write { ann.dogs.append(rex) }
        db.refresh()
        #expect(log.all.last == "[\"Ann\", \"Ann\"] -[] +[1] ~[0]")

        // An object that does not match links twice: nothing to tell.
        let bob = try person("Bob", [rex, rex])
        db.refresh()
        #expect(log.all.count == 2)

        // It starts matching: both its rows are inserted.
        try db.write { bob.name = "Al" }
        db.refresh()
        #expect(log.all.last == "[\"Ann\", \"Ann\", \"Al\", \"Al\"] -[] +[2, 3] ~[]")

        // A link removed from a matching object deletes its last row.
        try db.write { ann.dogs.remove(at: 1) }
        db.refresh()
        #expect(log.all.last == "[\"Ann\", \"Al\", \"Al\"] -[1] +[] ~[0]")

        // It stops matching: both its rows go.
        try db.write { bob.name = "Zed" }
        db.refresh()
        #expect(log.all.last == "[\"Ann\"] -[1, 2] +[] ~[]")
        #expect(log.all.count == 5)
        #expect(named.map(\.name) == ["Ann"])
    }

    @Test func sortedLinkingObjectsMoveAllTheRowsOfAnObjectWhoseKeyChanged() throws {
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        let cy = try person("Cy", [rex, rex])
        let ann = try person("Ann", [rex])
        let sorted = rex.owners.sorted(byKeyPath: "name")
        let token = sorted.observe { record($0) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["[\"Ann\", \"Cy\", \"Cy\"] initial"])

        try db.write { ann.dogs.append(rex) }
        db.refresh()
        #expect(log.all.last == "[\"Ann\", \"Ann\", \"Cy\", \"Cy\"] -[] +[1] ~[0]")

        // Ann's sort key passes Cy's: her rows are deleted and inserted.
        try db.write { ann.name = "Zoe" }
        db.refresh()
        #expect(log.all.last == "[\"Cy\", \"Cy\", \"Zoe\", \"Zoe\"] -[0, 1] +[2, 3] ~[]")

        // A key changed that keeps the place modifies the rows.
        try db.write { cy.name = "Cyd" }
        db.refresh()
        #expect(log.all.last == "[\"Cyd\", \"Cyd\", \"Zoe\", \"Zoe\"] -[] +[] ~[0, 1]")

        // A link removed while the key moves the object: its old rows go,
        // its one new row comes at its new place.
        try db.write {
            cy.dogs.remove(at: 0)
            cy.name = "Zz"
        }
        db.refresh()
        #expect(log.all.last == "[\"Zoe\", \"Zoe\", \"Zz\"] -[0, 1] +[2] ~[]")
        #expect(sorted.map(\.name) == ["Zoe", "Zoe", "Zz"])

        // The object linked to deleted: every row goes.
        try db.write { db.delete(rex) }
        db.refresh()
        #expect(log.all.last == "[] -[0, 1, 2] +[] ~[]")
    }

    @Test func narrowedAndSortedLinkingObjectsOnAQueueGetTheRowsTheChangeCounts() throws {
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        let ann = try person("Ann", [rex])
        let bob = try person("Bob", [rex, rex])
        let results = rex.owners.where { $0.name != "Nobody" }.sorted(byKeyPath: "name", ascending: false)
        let token = results.observe(on: DispatchQueue(label: "backlink-results-rows")) { record($0) }
        defer { token.invalidate() }
        #expect(log.wait(for: 1) == ["[\"Bob\", \"Bob\", \"Ann\"] initial"])

        try db.write { ann.dogs.append(objectsIn: [rex, rex]) }
        #expect(log.wait(for: 2).last == "[\"Bob\", \"Bob\", \"Ann\", \"Ann\", \"Ann\"] -[] +[3, 4] ~[2]")

        try db.write { bob.name = "Nobody" }
        #expect(log.wait(for: 3).last == "[\"Ann\", \"Ann\", \"Ann\"] -[0, 1] +[] ~[]")

        try db.write { bob.name = "Cat" }
        #expect(log.wait(for: 4).last == "[\"Cat\", \"Cat\", \"Ann\", \"Ann\", \"Ann\"] -[] +[0, 1] ~[]")

        try db.write { ann.name = "Dan" }
        #expect(log.wait(for: 5).last == "[\"Dan\", \"Dan\", \"Dan\", \"Cat\", \"Cat\"] -[2, 3, 4] +[0, 1, 2] ~[]")

        try db.write { bob.dogs.removeAll() }
        #expect(log.wait(for: 6).last == "[\"Dan\", \"Dan\", \"Dan\"] -[3, 4] +[] ~[]")
    }

    @Test func keyPathsOfNarrowedLinkingObjectsThatLeaveOutTheListTellALinkWithTheNextChange() throws {
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        let ann = try person("Ann", [rex])
        let named = rex.owners.filter("name BEGINSWITH 'A'")
        let token = named.observe(keyPaths: ["name"]) { record($0) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { ann.dogs.append(rex) }
        db.refresh()
        #expect(log.all == ["[\"Ann\"] initial"], "the list is outside the key paths")
        try db.write { ann.name = "Anna" }
        db.refresh()
        #expect(log.all.last == "[\"Anna\", \"Anna\"] -[] +[1] ~[0]")
    }

    @Test func distinctLinkingObjectsKeepAnObjectOnceAsTheyAreRead() throws {
        let rex = try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        let ann = try person("Ann", [rex])
        let distinct = rex.owners.distinct(by: ["name"])
        let token = distinct.observe { record($0) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { ann.dogs.append(rex) }
        db.refresh()
        #expect(log.all.last == "[\"Ann\"] -[] +[] ~[0]", "a second link is no second row")
        _ = try person("Bob", [rex, rex])
        db.refresh()
        #expect(log.all.last == "[\"Ann\", \"Bob\"] -[] +[1] ~[]")
        try db.write { ann.dogs.removeAll() }
        db.refresh()
        #expect(log.all.last == "[\"Bob\"] -[0] +[] ~[]")
    }
}
