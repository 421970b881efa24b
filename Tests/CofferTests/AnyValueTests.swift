// Tests of AnyValue: every scalar, links, and nested lists and dictionaries, on
// every kind of database.

import Coffer
import Foundation
import Testing

/// `AnyValue`: any scalar, a link, or nested lists and dictionaries.
@Suite struct AnyValueTests {
    @Test(arguments: Storage.allCases)
    func everyCaseRoundTrips(storage: Storage) throws {
        let test = try TestDatabase(storage, Bag.types), db = test.db
        let bag = try db.write { db.create(Bag.self) }
        #expect(bag.anything == .none)
        let rex = try db.write { db.create(Social.Dog.self, value: ["name": "Rex"]) }
        let values: [AnyValue] = [
            .int(42), .bool(true), .float(1.5), .double(2.25), .string("text"), .data(Data([1, 2])),
            .date(Date(timeIntervalSince1970: 1_700_000_000)), .objectId(ObjectId.generate()),
            .decimal128(try Decimal128(string: "1.25")), .uuid(UUID()), .object(rex),
            .list([.int(1), .string("two"), .list([.bool(false)]), .dictionary(["k": .none])]),
            .dictionary(["a": .int(1), "b": .list([.double(0.5), .object(rex)])]),
            .none,
        ]
        for value in values {
            try db.write { bag.anything = value }
            #expect(bag.anything == value)
        }
        try db.write {
            bag.mixedList.append(.string("s"))
            bag.mixedList.append(.dictionary(["n": .list([.int(3)])]))
        }
        #expect(Array(bag.mixedList) == [.string("s"), .dictionary(["n": .list([.int(3)])])])
        try db.write {
            bag.mixedMap["deep"] = .list([.dictionary(["x": .object(rex)])])
            bag.mixedMap["flat"] = .int(1)
        }
        #expect(bag.mixedMap.keys.sorted() == ["deep", "flat"])
        #expect(bag.mixedMap["deep"] == .list([.dictionary(["x": .object(rex)])]))
    }

    @Test func aLinkInsideANestedValueBecomesNoneWhenItsObjectIsDeleted() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let rex = try db.write { db.create(Social.Dog.self, value: ["name": "Rex"]) }
        let bag = try db.write { db.create(Bag.self, value: ["anything": AnyValue.object(rex)]) }
        guard case .object(let linked) = bag.anything else {
            Issue.record("expected an object, got \(bag.anything)")
            return
        }
        #expect((linked as? Social.Dog)?.name == "Rex")
        try db.write { db.delete(rex) }
        #expect(bag.anything == .none)
    }

    /// Nested `depth` levels deep: a list in a list in ... holding 1.
    func nested(_ depth: Int) -> AnyValue {
        (1..<depth).reduce(AnyValue.list([.int(1)])) { inner, _ in .list([inner]) }
    }

    @Test func collectionsNestOneHundredLevelsAndNoMore() throws {
        let test = try TestDatabase(.plain, Bag.types), db = test.db
        let deep = try db.write { db.create(Bag.self, value: ["anything": nested(100)]) }
        #expect(deep.anything == nested(100))
        expectCofferError(.limit, containing: "Bag", "anything", "limit is 100") {
            _ = try db.write { try db.tryCreate(Bag.self, value: ["anything": nested(101)]) }
        }
        #expect(db.objects(Bag.self).count == 1, "the failed create wrote nothing")
    }

    @Test func plainValuesAndDictionariesConvert() throws {
        let test = try TestDatabase(.inMemory, Bag.types), db = test.db
        let bag = try db.write {
            db.create(Bag.self, value: ["anything": ["x": [1, "y"]], "mixedList": [1, nil, "z"]])
        }
        #expect(bag.anything == .dictionary(["x": .list([.int(1), .string("y")])]))
        #expect(Array(bag.mixedList) == [.int(1), .none, .string("z")])
        expectCofferError(.type, containing: "Bag.anything") {
            _ = try db.write { try db.tryCreate(Bag.self, value: ["anything": NSObject()]) }
        }
    }
}
