// Tests of embedded objects and of backlinks (LinkingObjects).

import Coffer
import Foundation
import Testing

/// Embedded objects live in their parent; backlinks follow links.
@Suite struct EmbeddedAndBacklinkTests {
    @Test(arguments: Storage.allCases)
    func embeddedObjectsAreWrittenReplacedAndDeletedWithTheirParent(storage: Storage) throws {
        let test = try TestDatabase(storage, Social.types + [Business.self]), db = test.db
        let ada = Social.Person(value: ["name": "Ada"])
        ada.address = Social.Address(value: ["street": "1 Main St", "city": "London"])
        try db.write { db.add(ada) }
        #expect(ada.address?.city == "London")
        #expect(db.objects(Social.Address.self).count == 1)

        try db.write { ada.address?.city = "Paris" }
        #expect(ada.address?.city == "Paris", "a managed embedded object writes its parent's copy")
        try db.write { ada.address = Social.Address(value: ["city": "Rome"]) }
        #expect(ada.address?.city == "Rome")
        #expect(ada.address?.street == nil)
        #expect(db.objects(Social.Address.self).count == 1, "the replaced embedded object is deleted")

        try db.write { db.delete(ada) }
        #expect(db.objects(Social.Address.self).isEmpty, "embedded objects are deleted with their parent")
    }

    @Test(arguments: Storage.allCases)
    func listsOfEmbeddedObjects(storage: Storage) throws {
        let test = try TestDatabase(storage, Social.types + [Business.self]), db = test.db
        let shop = Business(value: ["name": "Shop", "addresses": [
            Social.Address(value: ["city": "Oslo"]), Social.Address(value: ["city": "Bergen"]),
        ]])
        try db.write { db.add(shop) }
        #expect(shop.addresses.compactMap(\.city) == ["Oslo", "Bergen"])
        try db.write {
            shop.addresses.append(Social.Address(value: ["city": "Tromsø"]))
            shop.addresses.remove(at: 0)
            shop.addresses[0].city = "Stavanger"
        }
        #expect(shop.addresses.compactMap(\.city) == ["Stavanger", "Tromsø"])
        #expect(db.objects(Social.Address.self).count == 2, "a removed embedded object is deleted")
        try db.write {
            // Assigning a managed embedded object elsewhere stores a copy.
            shop.addresses.append(shop.addresses[0])
        }
        #expect(shop.addresses.compactMap(\.city) == ["Stavanger", "Tromsø", "Stavanger"])
        try db.write { db.delete(shop) }
        #expect(db.objects(Social.Address.self).isEmpty)
    }

    @Test(arguments: Storage.allCases)
    func embeddedObjectsGivenToAParentBecomeManaged(storage: Storage) throws {
        let test = try TestDatabase(storage, Social.types + [Business.self]), db = test.db
        let home = Social.Address(value: ["city": "Oslo"])
        let office = Social.Address(value: ["city": "Bergen"])
        let ada = Social.Person(value: ["name": "Ada", "address": home])
        let shop = Business(value: ["name": "Shop", "addresses": [office]])
        try db.write {
            db.add(ada)
            db.add(shop)
        }
        #expect(home.database === db, "as Realm's add, the embedded object is managed")
        #expect(office.database === db)
        try db.write {
            home.city = "Paris"
            office.city = "Nice"
        }
        #expect(ada.address?.city == "Paris")
        #expect(shop.addresses[0].city == "Nice")
        let next = Social.Address(value: ["city": "Rome"])
        try db.write { ada.address = next }
        #expect(next.database === db, "assigning to a managed parent manages it too")
        #expect(home.isInvalidated, "the replaced embedded object is deleted")
    }

    @Test func embeddedObjectsCannotBeAddedOrCreatedAlone() throws {
        let test = try TestDatabase(.plain, Social.types), db = test.db
        expectCofferError(.invalidArgument, containing: "Address", "embedded") {
            try db.write { try db.tryAdd(Social.Address()) }
        }
        expectCofferError(.invalidArgument, containing: "Address", "embedded") {
            _ = try db.write { try db.tryCreate(Social.Address.self, value: ["city": "Nowhere"]) }
        }
        #expect(db.objects(Social.Address.self).isEmpty)
    }

    @Test(arguments: Storage.allCases)
    func linkingObjectsFollowLinks(storage: Storage) throws {
        let test = try TestDatabase(storage, Social.types), db = test.db
        let rex = Social.Dog(value: ["name": "Rex"])
        #expect(rex.owners.isEmpty, "an unmanaged object has no backlinks")
        let ada = Social.Person(value: ["name": "Ada", "dogs": [rex]])
        let bob = Social.Person(value: ["name": "Bob", "dogs": [rex, rex]])
        try db.write {
            db.add([ada, bob])
            db.add(Walker(value: ["name": "Wes", "bestDog": rex]))
        }
        #expect(rex.owners.map(\.name) == ["Ada", "Bob", "Bob"], "one entry per link")
        #expect(rex.owners.count == 3)
        #expect(rex.walkers.map(\.name) == ["Wes"], "the plain LinkingObjects(fromType:property:) form")
        let stored = db.objects(Social.Dog.self)[0]
        #expect(stored.walkers.first?.name == "Wes")
        try db.write { bob.dogs.removeAll() }
        #expect(rex.owners.map(\.name) == ["Ada"])
        try db.write { db.delete(ada) }
        #expect(rex.owners.isEmpty)
    }

    @Test func linkingObjectsTakeNoValue() throws {
        let test = try TestDatabase(.plain, Social.types), db = test.db
        expectCofferError(.invalidArgument, containing: "Dog.owners", "read-only") {
            _ = try db.write { try db.tryCreate(Social.Dog.self, value: ["owners": []]) }
        }
        let rex = try db.write { db.create(Social.Dog.self, value: ["Rex", 3, "Beagle"]) }
        #expect(rex.breed == "Beagle", "an array gives the stored properties only")
        let copy = Social.Dog(value: rex)
        #expect(copy.name == "Rex" && copy.owners.isEmpty)
    }

    @Test func backlinksToAPropertyThatIsNoLinkAreASchemaError() {
        expectCofferError(.schema, containing: "BadBacklink") {
            _ = try Database(configuration: Database.Configuration(inMemoryIdentifier: "bad-backlink", objectTypes: [BadBacklink.self, Social.Person.self, Social.Dog.self, Social.Address.self, Walker.self]))
        }
    }
}

final class BadBacklink: Object {
    @Persisted(originProperty: "name") var people: LinkingObjects<Social.Person>
}
