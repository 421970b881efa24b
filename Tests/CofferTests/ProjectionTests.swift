// Tests of Projections and ProjectedCollection.

import Coffer
import Foundation
import Testing

/// Projections, as in Realm's documented example, on every kind of database.
@Suite struct ProjectionTests {
    /// Ada (Lisbon) with friends Grace and Alan; Grace (Paris); Alan (no address).
    static func people(in db: Database) throws -> (ada: Contacts.Person, grace: Contacts.Person, alan: Contacts.Person) {
        try db.write {
            let grace = db.create(Contacts.Person.self, value: ["firstName": "Grace", "lastName": "Hopper", "age": 85,
                                                                    "address": ["city": "Paris", "country": "France"]])
            let alan = db.create(Contacts.Person.self, value: ["firstName": "Alan", "lastName": "Turing", "age": 41])
            let ada = db.create(Contacts.Person.self, value: ["firstName": "Ada", "lastName": "Lovelace", "age": 36,
                                                                  "address": ["city": "Lisbon", "country": "Portugal"],
                                                                  "friends": [grace, alan], "reviews": ["clear", "kind"]])
            let chess = db.create(Contacts.Club.self, value: ["name": "Chess"])
            ada.clubs.insert(chess)
            alan.clubs.insert(chess)
            return (ada, grace, alan)
        }
    }

    @Test(arguments: Storage.allCases)
    func resultsOfProjectionsReadThroughToTheObjects(storage: Storage) throws {
        let test = try TestDatabase(storage, Contacts.types), db = test.db
        let (ada, _, _) = try Self.people(in: db)

        let people: Results<PersonProjection> = db.objects(PersonProjection.self)
        #expect(people.count == 3)
        let projection = try #require(people.last)
        #expect(projection.rootObject.isSameObject(as: ada))
        #expect(projection.database === db)
        #expect(projection.firstName == "Ada")
        #expect(projection.lastNameCaps == "LOVELACE")
        #expect(projection.years == 36)
        #expect(projection.homeCity == "Lisbon")
        #expect(Array(projection.firstFriendsName) == ["Grace", "Alan"])
        #expect(projection.firstFriendsName.count == 2)
        #expect(Array(projection.clubNames) == ["Chess"])
        #expect(Array(projection.reviews) == ["clear", "kind"])
        #expect(people[1].homeCity == nil, "Alan has no address")
        #expect(people.map(\.firstName) == ["Grace", "Alan", "Ada"])
        #expect(PersonProjection(projecting: ada) == projection)
        #expect(Set(people.map { $0 }).count == 3)
        #expect(Set([projection, PersonProjection(projecting: ada)]).count == 1)

        let clubs = db.objects(ClubProjection.self)
        #expect(clubs.first?.title == "Chess")
        #expect(clubs.first.map { Array($0.memberAges).sorted() } == [36, 41])
    }

    @Test(arguments: Storage.allCases)
    func projectionsAreLiveAndWriteThrough(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let config = configuration(storage, Contacts.types, in: dir)
        let db = try Database(configuration: config)
        let (ada, grace, alan) = try Self.people(in: db)
        let projection = PersonProjection(projecting: ada)
        let friends = projection.firstFriendsName

        try db.write {
            projection.firstName = "Augusta"
            projection.years = 37
            friends[0] = "Amazing Grace"
            ada.address?.city = "London"
            ada.friends.remove(at: 1)
        }
        #expect(ada.firstName == "Augusta")
        #expect(ada.age == 37)
        #expect(grace.firstName == "Amazing Grace")
        #expect(projection.homeCity == "London")
        #expect(Array(friends) == ["Amazing Grace"], "the projected list follows the list")
        #expect(alan.firstName == "Alan")

        // The stored names are the mapped ones; the change is in the file.
        if storage != .inMemory {
            let reopened = try Database(configuration: config)
            let again = try #require(reopened.objects(PersonProjection.self).where { $0.firstName == "Augusta" }.first)
            #expect(again.years == 37)
            #expect(Array(again.firstFriendsName) == ["Amazing Grace"])
        }

        try db.write { db.delete(ada) }
        #expect(projection.isInvalidated)
        #expect(db.objects(PersonProjection.self).count == 2)
    }

    @Test(arguments: Storage.allCases)
    func queriesSortsAndAggregatesUseTheProjectedKeyPaths(storage: Storage) throws {
        let test = try TestDatabase(storage, Contacts.types), db = test.db
        _ = try Self.people(in: db)
        let people = db.objects(PersonProjection.self)

        #expect(people.where { $0.homeCity == "Lisbon" }.map(\.firstName) == ["Ada"])
        #expect(people.where { $0.years > 40 && $0.firstName.starts(with: "A") }.map(\.firstName) == ["Alan"])
        #expect(people.where { $0.homeCity == nil }.map(\.firstName) == ["Alan"])
        #expect(people.sorted(by: \.firstName).map(\.firstName) == ["Ada", "Alan", "Grace"])
        #expect(people.sorted(by: \.years, ascending: false).map(\.years) == [85, 41, 36])
        #expect(people.sorted(by: \.homeCity).map(\.firstName) == ["Alan", "Ada", "Grace"])
        #expect(people.distinct(by: [\PersonProjection.homeCity]).count == 3)
        #expect(people.max(of: \.years) == 85)
        #expect(people.sum(of: \.years) == 162)
        #expect(people.where { $0.years < 50 }.queryDescriptions.count == 1)

        // String queries and key paths name the object's properties (Swift names).
        #expect(people.filter("firstName BEGINSWITH %@", "G").map(\.firstName) == ["Grace"])
        #expect(people.sorted(byKeyPath: "address.city", ascending: false).map(\.firstName) == ["Grace", "Ada", "Alan"])
        #expect(people.min(ofProperty: "age") as Int? == 36)
        expectCofferError(.query, containing: "years") { _ = try people.tryFilter("years > 3") }
        #expect(people.description == "Results<PersonProjection>(3 objects)")
    }

    @Test func anUnmanagedProjectionReadsAndWritesThePlainObject() {
        let person = Contacts.Person(value: ["firstName": "Edsger", "lastName": "Dijkstra",
                                             "friends": [["firstName": "Tony"]]])
        let projection = PersonProjection(projecting: person)
        #expect(projection.database == nil)
        #expect(!projection.isInvalidated)
        #expect(projection.lastNameCaps == "DIJKSTRA")
        #expect(projection.homeCity == nil)
        projection.firstName = "E. W."
        projection.firstFriendsName[0] = "C. A. R."
        #expect(person.firstName == "E. W.")
        #expect(person.friends[0].firstName == "C. A. R.")
        #expect(projection.description.hasPrefix("PersonProjection<Person> { firstName = E. W.; lastNameCaps = DIJKSTRA; years = 0; homeCity = nil;"))
        #expect(projection != PersonProjection(projecting: Contacts.Person()))
    }

    @Test func settingAComputedProjectedPropertyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let projection = PersonProjection(projecting: Contacts.Person())
            projection.lastNameCaps = "X"
        }
        #expect(errorOutput(result).contains("PersonProjection cannot set a projected property whose key path"))
    }

    @Test func settingAProjectedPropertyOutsideAWriteStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "projection-outside-write", objectTypes: Contacts.types))
            let person = try db.write { db.create(Contacts.Person.self) }
            PersonProjection(projecting: person).firstName = "X"
        }
        #expect(errorOutput(result).contains("cannot modify Person.firstName outside a write transaction"))
    }

    @Test func queryingAComputedProjectedPropertyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "projection-computed", objectTypes: Contacts.types))
            _ = db.objects(PersonProjection.self).where { $0.lastNameCaps == "LOVELACE" }
        }
        #expect(errorOutput(result).contains("reads a value computed from Person.lastName"))
    }

    @Test func sortingByAValueComputedFromAPropertyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "sort-computed", objectTypes: Contacts.types))
            _ = db.objects(Contacts.Person.self).sorted(by: \.lastName.count)
        }
        #expect(errorOutput(result).contains("reads a value computed from Person.lastName"))
    }
}
