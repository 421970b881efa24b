import Coffer
import Foundation
import Testing

/// The README's Swift quick start, kept compiling and passing.
enum QuickStart {
    enum Status: String, PersistableEnum { case open, done }

    final class Dog: Object {
        @Persisted(primaryKey: true) var id: ObjectId
        @Persisted(indexed: true) var name = ""
        @Persisted var breed: String?
        @Persisted var status = Status.open
        var nickname = ""
    }
}

@Suite struct QuickStartTests {
    @Test func readmeQuickStart() throws {
        typealias Dog = QuickStart.Dog
        let dir = TemporaryDirectory()
        let key = testKey

        var config = Database.Configuration(fileURL: dir.file("dogs.coffer"))
        config.objectTypes = [Dog.self]
        config.encryptionKey = key
        let db = try Database(configuration: config)

        let rex = Dog(value: ["name": "Rex", "breed": "Beagle"])
        try db.write {
            try db.add(rex)
        }
        try db.write { rex.status = .done }

        let dogs = db.objects(Dog.self)
        #expect(dogs.count == 1)
        #expect(dogs.first?.name == "Rex")
        let same = db.object(ofType: Dog.self, forPrimaryKey: rex.id)
        #expect(same?.status == .done)
        #expect(same?.breed == "Beagle")
    }
}
