// Tests of the calls that do not throw, as in Realm: misuse stops the process
// with a message naming the object, property or query position (checked in a
// child process by exit tests), and the `try` twins throw the same error.

import Coffer
import Foundation
import Testing

@Suite struct ProgrammingErrorTests {
    /// An in-memory database of `Dog` and `AllTypes`, named after the test.
    static func database(_ name: String) throws -> Database {
        try Database(configuration: Database.Configuration(inMemoryIdentifier: "programming-error-\(name)",
                                                           objectTypes: [Dog.self, AllTypes.self]))
    }

    @Test func addOutsideAWriteTransactionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("add")
            db.add(Dog(value: ["name": "Rex"]))
        }
        #expect(errorOutput(result).contains("cannot add objects outside a write transaction; call write {} or beginWrite() first"))
    }

    @Test func aDuplicatePrimaryKeyStopsNamingClassAndValue() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("duplicate")
            try db.write {
                db.create(AllTypes.self, value: ["id": 7])
                db.create(AllTypes.self, value: ["id": 7])
            }
        }
        let output = errorOutput(result)
        #expect(output.contains("AllTypes") && output.contains("7"), "\(output)")
    }

    @Test func aWrongTypeInADictionaryValueStopsNamingTheProperty() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("wrong-type")
            try db.write { db.create(Dog.self, value: ["name": "Rex", "age": "three"]) }
        }
        #expect(errorOutput(result).contains("Dog.age"), "\(errorOutput(result))")
    }

    @Test func anInvalidQueryStringStopsNamingItsPosition() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("query")
            _ = db.objects(Dog.self).filter("age > > 3").count
        }
        #expect(errorOutput(result).contains("at offset 7"), "\(errorOutput(result))")
    }

    @Test func anUnknownSortKeyStopsNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("sort")
            _ = db.objects(Dog.self).sorted(byKeyPath: "weight")
        }
        #expect(errorOutput(result).contains("'weight'"), "\(errorOutput(result))")
    }

    @Test func deletingAnUnmanagedObjectStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("delete")
            try db.write { db.delete(Dog()) }
        }
        #expect(errorOutput(result).contains("the Dog object is not managed by a database"))
    }

    @Test func deleteAllOutsideAWriteTransactionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("delete-all")
            db.deleteAll()
        }
        #expect(errorOutput(result).contains("cannot delete objects outside a write transaction"))
    }

    @Test func beginWriteInsideAWriteTransactionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("begin")
            db.beginWrite()
            db.beginWrite()
        }
        #expect(errorOutput(result).contains("the database is already in a write transaction"))
    }

    @Test func commitWriteWithoutBeginWriteStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("commit")
            try db.commitWrite()
        }
        #expect(errorOutput(result).contains("commitWrite() was called outside a write transaction"))
    }

    @Test func cancelWriteWithoutBeginWriteStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("cancel")
            db.cancelWrite()
        }
        #expect(errorOutput(result).contains("cancelWrite() was called outside a write transaction"))
    }

    @Test func anUnknownAggregatePropertyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try ProgrammingErrorTests.database("aggregate")
            _ = db.objects(Dog.self).max(ofProperty: "weight") as Int?
        }
        #expect(errorOutput(result).contains("class 'Dog' has no property 'weight'"))
    }

    // The twins: the same misuse throws, and nothing is changed.

    @Test func theTryTwinsThrowWhereThePlainCallsStop() throws {
        let test = try TestDatabase(.plain, [Dog.self, AllTypes.self]), db = test.db
        expectCofferError(.notInWriteTransaction, containing: "add objects") { try db.tryAdd(Dog()) }
        try db.write {
            db.create(AllTypes.self, value: ["id": 7])
            expectCofferError(.primaryKeyExists, containing: "AllTypes", "7") { try db.tryCreate(AllTypes.self, value: ["id": 7]) }
            expectCofferError(.type, containing: "Dog.age") { try db.tryCreate(Dog.self, value: ["age": "three"]) }
            expectCofferError(.invalidArgument, containing: "not managed") { try db.tryDelete(Dog()) }
            expectCofferError(.primaryKeyExists) { try db.tryAdd([AllTypes(value: ["id": 8]), AllTypes(value: ["id": 8])]) }
        }
        #expect(db.objects(AllTypes.self).map(\.id) == [7, 8], "the second 8 was not written")
        let dogs = db.objects(Dog.self)
        expectCofferError(.query, containing: "at offset 7") { _ = try dogs.tryFilter("age > > 3") }
        expectCofferError(.query, containing: "'weight'") { _ = try dogs.trySorted(byKeyPath: "weight") }
        expectCofferError(.query, containing: "'weight'") { _ = try dogs.trySorted(by: [SortDescriptor(keyPath: "weight")]) }
        expectCofferError(.query, containing: "'weight'") { _ = try dogs.tryDistinct(by: ["weight"]) }
        expectCofferError(.notFound, containing: "'weight'") { _ = try dogs.tryMin(ofProperty: "weight") as Int? }
        expectCofferError(.notFound, containing: "'weight'") { _ = try dogs.tryMax(ofProperty: "weight") as Int? }
        expectCofferError(.notFound, containing: "'weight'") { _ = try dogs.trySum(ofProperty: "weight") as Int }
        expectCofferError(.notFound, containing: "'weight'") { _ = try dogs.tryAverage(ofProperty: "weight") as Double? }
        #expect(try dogs.tryFilter("age > %@", 2).isEmpty)
        #expect(try db.objects(AllTypes.self).tryMax(ofProperty: "id") as Int? == 8)
    }

    @Test func thePlainCallsDoNotThrowForCorrectUse() throws {
        let test = try TestDatabase(.plain, [Dog.self]), db = test.db
        db.beginWrite()
        let rex = db.create(Dog.self, value: ["name": "Rex", "age": 3])
        db.add(Dog(value: ["name": "Fido", "age": 5]))
        try db.commitWrite()
        let dogs = db.objects(Dog.self)
        #expect(dogs.filter("age > %@", 4).map(\.name) == ["Fido"])
        #expect(dogs.sorted(byKeyPath: "age", ascending: false).map(\.name) == ["Fido", "Rex"])
        #expect(dogs.distinct(by: ["age"]).count == 2)
        #expect(dogs.sum(ofProperty: "age") as Int == 8)
        db.beginWrite()
        db.delete(rex)
        db.cancelWrite()
        #expect(dogs.count == 2, "the cancelled delete left rex")
        try db.write { db.deleteAll() }
        #expect(dogs.isEmpty)
    }
}
