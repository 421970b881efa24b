// Tests that every value type is written and read back unchanged.

import Coffer
import Foundation
import Testing

@Suite struct ValueRoundTripTests {
    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static let objectId = try! ObjectId(string: "5f1b2c3d4e5f60718293a4b5")
    static let date = Date(timeIntervalSince1970: 1_700_000_000.123456)
    static let bytes = Data((0..<1000).map { UInt8($0 % 251) })

    static func filled(id: Int) -> AllTypes {
        AllTypes(value: [
            "id": id, "bool": true, "int": Int.min, "int8": Int8.min, "int16": Int16.max, "int32": Int32.min,
            "int64": Int64.max, "float": Float(3.25), "double": -1e300, "string": "héllo, 世界 🐕",
            "data": bytes, "date": date, "objectId": objectId, "uuid": uuid,
            "decimal": try! Decimal128(string: "-12.340"), "priority": Priority.high,
            "optBool": false, "optInt": 0, "optInt8": Int8(-1), "optInt16": Int16(2), "optInt32": Int32(3),
            "optInt64": Int64(4), "optFloat": Float.infinity, "optDouble": 0.5, "optString": "",
            "optData": Data(), "optDate": Date(timeIntervalSince1970: -1.5), "optObjectId": objectId,
            "optUUID": uuid, "optDecimal": Decimal128(7), "optPriority": Priority.medium,
        ])
    }

    static func check(_ o: AllTypes) {
        #expect(o.bool == true)
        #expect(o.int == Int.min)
        #expect(o.int8 == Int8.min)
        #expect(o.int16 == Int16.max)
        #expect(o.int32 == Int32.min)
        #expect(o.int64 == Int64.max)
        #expect(o.float == 3.25)
        #expect(o.double == -1e300)
        #expect(o.string == "héllo, 世界 🐕")
        #expect(o.data == bytes)
        #expect(o.date == date)
        #expect(o.objectId == objectId)
        #expect(o.uuid == uuid)
        #expect(o.decimal.stringValue == "-12.340")
        #expect(o.priority == .high)
        #expect(o.optBool == false)
        #expect(o.optInt == 0)
        #expect(o.optInt8 == -1)
        #expect(o.optInt16 == 2)
        #expect(o.optInt32 == 3)
        #expect(o.optInt64 == 4)
        #expect(o.optFloat == .infinity)
        #expect(o.optDouble == 0.5)
        #expect(o.optString == "")
        #expect(o.optData == Data())
        #expect(o.optDate == Date(timeIntervalSince1970: -1.5))
        #expect(o.optObjectId == objectId)
        #expect(o.optUUID == uuid)
        #expect(o.optDecimal == Decimal128(7))
        #expect(o.optPriority == .medium)
    }

    static func checkDefaults(_ o: AllTypes) {
        #expect(o.bool == false && o.int == 0 && o.int8 == 0 && o.float == 0 && o.double == 0)
        #expect(o.string == "" && o.data.isEmpty && o.date == Date(timeIntervalSince1970: 0))
        #expect(o.objectId == ObjectId() && o.decimal == Decimal128() && o.priority == .low)
        #expect(o.optBool == nil && o.optInt == nil && o.optInt8 == nil && o.optInt16 == nil && o.optInt32 == nil)
        #expect(o.optInt64 == nil && o.optFloat == nil && o.optDouble == nil && o.optString == nil && o.optData == nil)
        #expect(o.optDate == nil && o.optObjectId == nil && o.optUUID == nil && o.optDecimal == nil && o.optPriority == nil)
    }

    @Test(arguments: Storage.allCases)
    func everyTypeSurvivesStorage(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let config = configuration(storage, [AllTypes.self], in: dir)
        let db = try Database(configuration: config)
        try db.write {
            db.add(Self.filled(id: 1))
            db.add(AllTypes(value: ["id": 2]))
        }
        Self.check(try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 1)))
        Self.checkDefaults(try #require(db.object(ofType: AllTypes.self, forPrimaryKey: 2)))
        if storage != .inMemory {
            let reopened = try Database(configuration: config)
            Self.check(try #require(reopened.object(ofType: AllTypes.self, forPrimaryKey: 1)))
        }
    }

    @Test(arguments: Storage.allCases)
    func managedPropertiesWriteEveryType(storage: Storage) throws {
        let test = try TestDatabase(storage, [AllTypes.self]), db = test.db
        let source = Self.filled(id: 0)
        let o = try db.write { db.create(AllTypes.self, value: ["id": 1]) }
        try db.write {
            o.bool = source.bool; o.int = source.int; o.int8 = source.int8; o.int16 = source.int16
            o.int32 = source.int32; o.int64 = source.int64; o.float = source.float; o.double = source.double
            o.string = source.string; o.data = source.data; o.date = source.date; o.objectId = source.objectId
            o.uuid = source.uuid; o.decimal = source.decimal; o.priority = source.priority
            o.optBool = source.optBool; o.optInt = source.optInt; o.optInt8 = source.optInt8
            o.optInt16 = source.optInt16; o.optInt32 = source.optInt32; o.optInt64 = source.optInt64
            o.optFloat = source.optFloat; o.optDouble = source.optDouble; o.optString = source.optString
            o.optData = source.optData; o.optDate = source.optDate; o.optObjectId = source.optObjectId
            o.optUUID = source.optUUID; o.optDecimal = source.optDecimal; o.optPriority = source.optPriority
        }
        Self.check(o)
        try db.write {
            o.optBool = nil; o.optInt = nil; o.optInt8 = nil; o.optInt16 = nil; o.optInt32 = nil; o.optInt64 = nil
            o.optFloat = nil; o.optDouble = nil; o.optString = nil; o.optData = nil; o.optDate = nil
            o.optObjectId = nil; o.optUUID = nil; o.optDecimal = nil; o.optPriority = nil
        }
        #expect(o.optString == nil && o.optPriority == nil && o.optDate == nil && o.optDecimal == nil)
        #expect(db.objects(AllTypes.self)[0].optInt == nil)
    }

    @Test func nanAndDatesAroundTheEpoch() throws {
        let test = try TestDatabase(.plain, [AllTypes.self]), db = test.db
        let o = try db.write { db.create(AllTypes.self, value: ["id": 1, "double": Double.nan, "optDecimal": Decimal128(Double.nan)]) }
        #expect(o.double.isNaN)
        #expect(o.optDecimal?.isNaN == true)
        for seconds in [-86_400.25, -0.5, 0, 0.999_999, 4_102_444_800.5] {
            let date = Date(timeIntervalSince1970: seconds)
            try db.write { o.date = date }
            #expect(o.date == date)
        }
    }

    @Test func storedIntegersOutOfRangeStopWhenRead() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // The same class name with a wider type writes a value Int8 cannot hold.
            enum Wide {
                final class Narrow: Object {
                    @Persisted var small = 0
                }
            }
            final class Narrow: Object {
                @Persisted var small: Int8 = 0
            }
            let config = Database.Configuration(inMemoryIdentifier: "narrow", objectTypes: [Wide.Narrow.self])
            let db = try Database(configuration: config)
            try db.write { _ = db.create(Wide.Narrow.self, value: ["small": 300]) }
            _ = db.objects(Narrow.self).first?.small
        }
        #expect(errorOutput(result).contains("Narrow.small holds 300, which is not a Int8"))
    }
}
