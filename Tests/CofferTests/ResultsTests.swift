// Tests of Results: liveness, snapshots, sorting, aggregates and lookups.

import Coffer
import Foundation
import Testing

@Suite struct ResultsTests {
    @Test(arguments: Storage.allCases)
    func collectionBasics(storage: Storage) throws {
        let test = try TestDatabase(storage, [Book.self]), db = test.db
        let books = db.objects(Book.self)
        #expect(books.isEmpty)
        #expect(books.first == nil)
        try db.write {
            for title in ["A", "B", "C"] {
                db.add(Book(value: ["title": title]))
            }
        }
        #expect(books.count == 3, "results are live")
        #expect(books.map(\.title) == ["A", "B", "C"], "in creation order")
        #expect(books[1].title == "B")
        #expect(books.first?.title == "A")
        #expect(books.last?.title == "C")
        #expect(books.indices == 0..<3)
        #expect(books.reversed().map(\.title) == ["C", "B", "A"])
        #expect(books.description == "Results<Book>(3 objects)")
        #expect(books.database === db)
        #expect(books.allSatisfy { $0.database === db })
    }

    @Test func resultsFollowWritesInsideATransaction() throws {
        let test = try TestDatabase(.plain, [Book.self]), db = test.db
        let books = db.objects(Book.self)
        try db.write {
            db.add(Book(value: ["title": "A"]))
            #expect(books.map(\.title) == ["A"])
            db.add(Book(value: ["title": "B"]))
            #expect(books.map(\.title) == ["A", "B"])
            db.delete(books[0])
            #expect(books.map(\.title) == ["B"])
        }
    }

    @Test func loopsRunOverTheObjectsPresentWhenTheyStart() throws {
        let test = try TestDatabase(.plain, [Book.self]), db = test.db
        try db.write {
            for i in 0..<10 {
                db.add(Book(value: ["title": "\(i)"]))
            }
        }
        var seen = 0
        try db.write {
            for book in db.objects(Book.self) {
                db.delete(book)
                seen += 1
            }
        }
        #expect(seen == 10)
        #expect(db.objects(Book.self).isEmpty)
    }

    @Test func updatingEveryObjectInALoop() throws {
        let test = try TestDatabase(.encrypted, [Book.self]), db = test.db
        try db.write {
            for i in 0..<500 {
                db.add(Book(value: ["title": "\(i)", "price": Double(i)]))
            }
        }
        try db.write {
            for book in db.objects(Book.self) {
                book.price *= 2
            }
        }
        let prices = db.objects(Book.self).map(\.price)
        #expect(prices == (0..<500).map { Double($0) * 2 })
    }

    @Test func snapshotsMoveOnRefreshAndWrite() throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, [Book.self], in: dir)
        let reader = try Database(configuration: config)
        let writer = try Database(configuration: config)
        let books = reader.objects(Book.self)
        #expect(books.count == 0)
        try writer.write { writer.add(Book(value: ["title": "New"])) }
        #expect(books.count == 0, "the reader keeps its snapshot")
        #expect(reader.refresh())
        #expect(books.count == 1)
        #expect(books[0].title == "New")
        try writer.write { writer.objects(Book.self)[0].title = "Changed" }
        #expect(books[0].title == "New")
        // Beginning a write moves to the latest data.
        try reader.write {
            #expect(books[0].title == "Changed")
            #expect(!reader.refresh(), "refresh does nothing in a write transaction")
        }
    }

    @Test(arguments: Storage.allCases)
    func objectForPrimaryKey(storage: Storage) throws {
        let test = try TestDatabase(storage, [StringKeyed.self, UUIDKeyed.self, OptionalIntKeyed.self, AllTypes.self]), db = test.db
        let uuid = UUID()
        try db.write {
            db.add(StringKeyed(value: ["key": "a", "value": 1]))
            db.add(UUIDKeyed(value: ["key": uuid, "value": "u"]))
            db.add(OptionalIntKeyed(value: ["key": 7, "value": "seven"]))
            db.add(OptionalIntKeyed(value: ["value": "none"]))
            db.add(AllTypes(value: ["id": 42]))
        }
        #expect(db.object(ofType: StringKeyed.self, forPrimaryKey: "a")?.value == 1)
        #expect(db.object(ofType: StringKeyed.self, forPrimaryKey: "b") == nil)
        #expect(db.object(ofType: UUIDKeyed.self, forPrimaryKey: uuid)?.value == "u")
        #expect(db.object(ofType: UUIDKeyed.self, forPrimaryKey: UUID()) == nil)
        #expect(db.object(ofType: OptionalIntKeyed.self, forPrimaryKey: 7)?.value == "seven")
        #expect(db.object(ofType: OptionalIntKeyed.self, forPrimaryKey: Int?.none)?.value == "none")
        #expect(db.object(ofType: AllTypes.self, forPrimaryKey: Int8(42)) != nil, "any integer type finds an int key")
        expectCofferError(.primaryKeyExists) {
            try db.write { try db.tryAdd(OptionalIntKeyed(value: ["value": "second nil"])) }
        }
    }

    @Test func primaryKeyLookupOnAClassWithoutOneStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "no-key", objectTypes: [Note.self]))
            _ = db.object(ofType: Note.self, forPrimaryKey: "x")
        }
        #expect(errorOutput(result).contains("class 'Note' has no primary key"))
    }

    @Test func primaryKeyOfTheWrongTypeStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "wrong-key", objectTypes: [StringKeyed.self]))
            _ = db.object(ofType: StringKeyed.self, forPrimaryKey: 5)
        }
        #expect(errorOutput(result).contains("StringKeyed"))
    }

    @Test func subscriptOutOfRangeStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "range", objectTypes: [Book.self]))
            _ = db.objects(Book.self)[0]
        }
        #expect(errorOutput(result).contains("index 0 is out of range for Results<Book> of 0 objects"))
    }
}
