// Observing with typed key paths: they resolve to the same paths as their
// Swift names (through links, mapped property names, projections), on
// objects, results, lists, sets and linking objects; a key path that is not a
// persisted property stops the program, naming it.

import Coffer
import Foundation
import Testing

final class KeyPathOwner: Object {
    @Persisted var name = ""
    @Persisted var city = ""
}

final class KeyPathPet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var owner: KeyPathOwner?
    @Persisted var friends: List<KeyPathPet>
    @Persisted var rivals: MutableSet<KeyPathPet>
    @Persisted(originProperty: "friends") var friendOf: LinkingObjects<KeyPathPet>

    /// Not persisted: observing these is a programming error.
    var nameLength: Int { name.count }
    var visits = 0

    override class func propertiesMapping() -> [String: String] {
        ["age": "age_in_years"]
    }
}

@Suite("observing with typed key paths")
struct TypedKeyPathObservationTests {
    let test: TestDatabase
    var db: Database { test.db }
    let log = CallLog()

    init() throws {
        test = try TestDatabase(.inMemory, [KeyPathOwner.self, KeyPathPet.self])
    }

    func addPet(_ name: String, owner: KeyPathOwner? = nil) throws -> KeyPathPet {
        try db.write { db.create(KeyPathPet.self, value: ["name": name, "owner": owner as Any]) }
    }

    @Test func anObjectCountsOnlyItsTypedKeyPathsThroughLinks() throws {
        let ann = try db.write { db.create(KeyPathOwner.self, value: ["name": "Ann"]) }
        let rex = try addPet("Rex", owner: ann)
        var calls: [String] = []
        let token = rex.observe(keyPaths: [\KeyPathPet.age, \KeyPathPet.owner?.name]) { change in
            if case .change(_, let properties) = change { calls.append(properties.map(\.name).joined(separator: ",")) }
        }
        defer { token.invalidate() }
        try db.write { rex.name = "Max"; ann.city = "Oslo" }
        db.refresh()
        #expect(calls.isEmpty, "properties outside the key paths tell nothing")
        try db.write { rex.age = 3 }
        db.refresh()
        try db.write { ann.name = "Anna" }
        db.refresh()
        #expect(calls == ["age", "owner"])
    }

    @Test func resultsListsSetsAndLinkingObjectsResolveTypedKeyPathsAsTheirNames() throws {
        let rex = try addPet("Rex")
        let bo = try addPet("Bo")
        try db.write { rex.friends.append(bo); rex.rivals.insert(bo) }
        var tokens: [NotificationToken] = []
        defer { tokens.forEach { $0.invalidate() } }
        tokens.append(db.objects(KeyPathPet.self).sorted(by: \.name).observe(keyPaths: [\.age]) { log.append("results \(describe($0))") })
        tokens.append(rex.friends.observe(keyPaths: [\.age]) { log.append("list \(describe($0))") })
        tokens.append(rex.rivals.observe(keyPaths: [\.age]) { log.append("set \(describe($0))") })
        tokens.append(bo.friendOf.observe(keyPaths: [\.name]) { log.append("links \(describe($0))") })
        db.refresh()
        #expect(log.all.count == 4)
        try db.write { bo.name = "Bob" }
        db.refresh()
        // Bo sorts first: only the results' row of Bo is told, the others do not count names.
        #expect(Array(log.all.dropFirst(4)) == [], "names do not count for age observers, nor Bo's own name for its linking objects")
        try db.write { bo.age = 4 }
        db.refresh()
        #expect(Set(log.all.dropFirst(4)) == ["results update 2 -[] +[] ~[0]", "list update 1 -[] +[] ~[0]", "set update 1 -[] +[] ~[0]"])
        try db.write { rex.name = "Rexy" }
        db.refresh()
        #expect(log.all.last == "links update 1 -[] +[] ~[0]")
    }

    @Test func aProjectionsTypedKeyPathsLeadToItsObjectsProperties() throws {
        let test = try TestDatabase(.inMemory, Contacts.types), db = test.db
        let ann = try db.write { db.create(Contacts.Person.self, value: ["firstName": "Ann", "age": 30]) }
        let token = db.objects(PersonProjection.self).observe(keyPaths: [\PersonProjection.years]) { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { ann.firstName = "Anna" }
        db.refresh()
        #expect(log.all == ["initial 1"])
        try db.write { ann.age = 31 }
        db.refresh()
        #expect(log.all == ["initial 1", "update 1 -[] +[] ~[0]"])
    }

    @Test func anEmptyListOfTypedKeyPathsCountsNoProperty() throws {
        let rex = try addPet("Rex")
        let token = db.objects(KeyPathPet.self).observe(keyPaths: [PartialKeyPath<KeyPathPet>]()) { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { rex.name = "Max" }
        db.refresh()
        #expect(log.all == ["initial 1"])
        _ = try addPet("Bo")
        db.refresh()
        #expect(log.all == ["initial 1", "update 2 -[] +[1] ~[]"])
    }

    @Test func aComputedKeyPathStopsTheProgramNamingWhatItReads() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "typed-key-path-computed",
                                                                        objectTypes: [KeyPathOwner.self, KeyPathPet.self]))
            let rex = try db.write { db.create(KeyPathPet.self, value: ["name": "Rex"]) }
            _ = rex.observe(keyPaths: [\KeyPathPet.nameLength]) { _ in }
        }
        let output = errorOutput(result)
        #expect(output.contains("reads a value computed from KeyPathPet.name; observers' key paths need the stored property itself"), "\(output)")
    }

    @Test func aPropertyThatIsNotPersistedStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "typed-key-path-plain",
                                                                        objectTypes: [KeyPathOwner.self, KeyPathPet.self]))
            _ = db.objects(KeyPathPet.self).observe(keyPaths: [\.visits]) { _ in }
        }
        let output = errorOutput(result)
        #expect(output.contains("of KeyPathPet is not a chain of @Persisted properties; observers' key paths need stored properties"), "\(output)")
    }
}
