// Observing sorted and narrowed results of a set of objects, of linking
// objects and of projections: exact change sets as Realm reports them for
// results with an order of their own (a row that changes places is a deletion
// plus an insertion), key paths, the owner's deletion, and delivery on a queue.

import Coffer
import Foundation
import Testing

@Suite("observing results of sets, linking objects and projections")
struct CollectionResultsObservationTests {
    typealias Person = Contacts.Person
    typealias Club = Contacts.Club
    let test: TestDatabase
    var db: Database { test.db }
    let log = CallLog()

    init() throws {
        test = try TestDatabase(.inMemory, Contacts.types)
    }

    @discardableResult
    func addClub(_ name: String) throws -> Club {
        try db.write { db.create(Club.self, value: ["name": name]) }
    }

    func addPerson(_ firstName: String, age: Int = 30, clubs: [Club] = []) throws -> Person {
        try db.write { db.create(Person.self, value: ["firstName": firstName, "age": age, "clubs": clubs]) }
    }

    @Test func aSortedSetReportsAnInsertionAtItsSortedPlace() throws {
        let clubs = try ["Golf", "Chess", "Rowing"].map(addClub)
        let ann = try addPerson("Ann", clubs: clubs)
        let sorted = ann.clubs.sorted(byKeyPath: "name")
        let token = sorted.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["initial 3"])
        let bridge = try addClub("Bridge")
        db.refresh()
        #expect(log.all == ["initial 3"], "a club outside the set tells nothing")
        try db.write { ann.clubs.insert(bridge) }
        db.refresh()
        #expect(log.all.last == "update 4 -[] +[0] ~[]")
        #expect(sorted.map(\.name) == ["Bridge", "Chess", "Golf", "Rowing"])
        // A renamed club that changes places is a deletion plus an insertion.
        try db.write { clubs[1].name = "Tennis" }
        db.refresh()
        #expect(log.all.last == "update 4 -[1] +[3] ~[]")
        // One that keeps its place is a modification, at its old index.
        try db.write { clubs[0].name = "Hiking" }
        db.refresh()
        #expect(log.all.last == "update 4 -[] +[] ~[1]")
        try db.write { ann.clubs.remove(bridge) }
        db.refresh()
        #expect(log.all.last == "update 3 -[0] +[] ~[]")
        #expect(sorted.map(\.name) == ["Hiking", "Rowing", "Tennis"])
    }

    @Test func aNarrowedSetReportsObjectsEnteringAndLeavingIt() throws {
        let clubs = try ["Golf", "Chess", "Rowing", "Go"].map(addClub)
        let ann = try addPerson("Ann", clubs: Array(clubs.prefix(3)))
        let games = ann.clubs.where { $0.name.starts(with: "G") || $0.name == "Chess" }
        let token = games.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["initial 2"])
        #expect(games.map(\.name) == ["Golf", "Chess"], "in the order the clubs were created")
        try db.write { clubs[2].name = "Gliding" }
        db.refresh()
        #expect(log.all.last == "update 3 -[] +[2] ~[]")
        try db.write { clubs[0].name = "Polo" }
        db.refresh()
        #expect(log.all.last == "update 2 -[0] +[] ~[]")
        try db.write { ann.clubs.insert(clubs[3]) }
        db.refresh()
        #expect(log.all.last == "update 3 -[] +[2] ~[]")
        #expect(games.map(\.name) == ["Chess", "Gliding", "Go"])
    }

    @Test func keyPathsChooseWhichChangesOfASetsObjectsCount() throws {
        let clubs = try ["Golf", "Chess"].map(addClub)
        let ann = try addPerson("Ann", clubs: clubs)
        let friend = try addPerson("Bo")
        let token = ann.clubs.sorted(byKeyPath: "name").observe(keyPaths: ["name"]) { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { friend.clubs.insert(clubs[0]) }
        db.refresh()
        #expect(log.all == ["initial 2"], "a change of another property of a club tells nothing")
        try db.write { clubs[0].name = "Gym" }
        db.refresh()
        #expect(log.all == ["initial 2", "update 2 -[] +[] ~[1]"])
    }

    @Test func deletingTheSetsOwnerDeletesEveryRow() throws {
        let clubs = try ["Golf", "Chess", "Rowing"].map(addClub)
        let ann = try addPerson("Ann", clubs: clubs)
        let token = ann.clubs.filter("name != 'Chess'").observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { db.delete(ann) }
        db.refresh()
        #expect(log.all == ["initial 2", "update 0 -[0, 1] +[] ~[]"])
    }

    @Test func sortedLinkingObjectsReportTheirLinksComingAndGoing() throws {
        let golf = try addClub("Golf")
        let ann = try addPerson("Ann", age: 40, clubs: [golf])
        let bo = try addPerson("Bo", age: 20, clubs: [golf])
        let members = golf.members.sorted(byKeyPath: "age", ascending: false)
        let token = members.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["initial 2"])
        _ = try addPerson("Cy", age: 30, clubs: [golf])
        db.refresh()
        #expect(log.all.last == "update 3 -[] +[1] ~[]")
        #expect(members.map(\.firstName) == ["Ann", "Cy", "Bo"])
        try db.write { bo.age = 50 }
        db.refresh()
        #expect(log.all.last == "update 3 -[2] +[0] ~[]")
        try db.write { ann.clubs.remove(golf) }
        db.refresh()
        #expect(log.all.last == "update 2 -[1] +[] ~[]")
        #expect(members.map(\.firstName) == ["Bo", "Cy"])
    }

    @Test func narrowedLinkingObjectsFollowTheirQueryAndItsKeyPaths() throws {
        let golf = try addClub("Golf")
        let ann = try addPerson("Ann", age: 40, clubs: [golf])
        _ = try addPerson("Bo", age: 20, clubs: [golf])
        let older = golf.members.where { $0.age > 30 }
        let token = older.observe(keyPaths: ["firstName"]) { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { ann.lastName = "Lee" }
        db.refresh()
        #expect(log.all == ["initial 1"], "a property outside the key paths tells nothing")
        try db.write { ann.firstName = "Anna" }
        db.refresh()
        #expect(log.all.last == "update 1 -[] +[] ~[0]")
        try db.write { ann.age = 25 }
        db.refresh()
        #expect(log.all.last == "update 0 -[0] +[] ~[]", "leaving the query counts whatever the key paths")
    }

    @Test func sortedAndNarrowedProjectionsAreObservedAsTheirObjects() throws {
        _ = try addPerson("Ann", age: 40)
        let bo = try addPerson("Bo", age: 20)
        _ = try addPerson("Cy", age: 60)
        let projections = db.objects(PersonProjection.self).filter("age > 10").sorted(byKeyPath: "firstName", ascending: false)
        let token = projections.observe(keyPaths: ["firstName"]) { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["initial 3"])
        try db.write { bo.firstName = "Zoe" }
        db.refresh()
        #expect(log.all.last == "update 3 -[1] +[0] ~[]")
        #expect(projections.map(\.firstName) == ["Zoe", "Cy", "Ann"])
        try db.write { bo.age = 5 }
        db.refresh()
        #expect(log.all.last == "update 2 -[0] +[] ~[]")
    }

    @Test func aSortedSetObservedOnAQueueGetsFrozenResultsInTheSameOrder() throws {
        let clubs = try ["Golf", "Chess"].map(addClub)
        let ann = try addPerson("Ann", clubs: clubs)
        let queue = DispatchQueue(label: "set-results")
        let token = ann.clubs.sorted(byKeyPath: "name").observe(on: queue) { change in
            if case .update(let results, _, let insertions, _) = change {
                log.append("\(results.map(\.name)) +\(insertions)")
            } else {
                log.append(describe(change))
            }
        }
        defer { token.invalidate() }
        #expect(log.wait(for: 1) == ["initial 2"])
        let bridge = try addClub("Bridge")
        try db.write { ann.clubs.insert(bridge) }
        #expect(log.wait(for: 2).last == "[\"Bridge\", \"Chess\", \"Golf\"] +[0]")
    }

    @Test func anUnknownKeyPathOfSetResultsIsReportedAsAnError() throws {
        let ann = try addPerson("Ann", clubs: [try addClub("Golf")])
        let token = ann.clubs.sorted(byKeyPath: "name").observe(keyPaths: ["nmae"]) { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all.count == 1)
        #expect(log.all.first?.hasPrefix("error") == true && log.all.first?.contains("nmae") == true, "\(log.all)")
    }
}
