// Tests of the value types ObjectId and Decimal128.

import Coffer
import Foundation
import Testing

@Suite struct ObjectIdTests {
    @Test func zeroAndGenerated() {
        #expect(ObjectId().stringValue == "000000000000000000000000")
        let a = ObjectId.generate(), b = ObjectId.generate()
        #expect(a != b)
        #expect(a < b, "the counter makes later ids sort after earlier ones")
        #expect(abs(a.timestamp.timeIntervalSinceNow) < 60)
    }

    @Test func stringRoundTripAndBytes() throws {
        let id = try ObjectId(string: "5f1b2c3d4e5f60718293a4b5")
        #expect(id.stringValue == "5f1b2c3d4e5f60718293a4b5")
        #expect(id.description == id.stringValue)
        #expect(id.bytes == [0x5f, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f, 0x60, 0x71, 0x82, 0x93, 0xa4, 0xb5])
        #expect(ObjectId(bytes: id.bytes) == id)
        #expect(ObjectId(bytes: [1, 2, 3]) == nil)
        #expect(id.timestamp == Date(timeIntervalSince1970: 0x5f1b_2c3d))
    }

    @Test func invalidStringsThrowNamingTheText() {
        expectCofferError(.invalidArgument, containing: "xyz") { _ = try ObjectId(string: "xyz") }
        expectCofferError(.invalidArgument) { _ = try ObjectId(string: "5f1b2c3d4e5f60718293a4bZ") }
    }

    @Test func codableAsString() throws {
        let id = ObjectId.generate()
        let json = try JSONEncoder().encode([id])
        #expect(String(decoding: json, as: UTF8.self) == "[\"\(id)\"]")
        #expect(try JSONDecoder().decode([ObjectId].self, from: json) == [id])
        #expect(throws: Coffer.Error.self) { try JSONDecoder().decode([ObjectId].self, from: Data("[\"nope\"]".utf8)) }
    }
}

@Suite struct Decimal128Tests {
    @Test func keepsPrecisionAndComparesByValue() throws {
        let a = try Decimal128(string: "1.0"), b = try Decimal128(string: "1.00")
        #expect(a.stringValue == "1.0")
        #expect(b.stringValue == "1.00")
        #expect(a == b)
        #expect(a != Decimal128(2))
        #expect(Decimal128().stringValue == "0")
        #expect(try Decimal128(string: "-3E-7").stringValue == "-3E-7")
    }

    @Test func literalsAndConversions() {
        let price: Decimal128 = "19.99"
        let tenth: Decimal128 = 0.1
        let five: Decimal128 = 5
        #expect(price.description == "19.99")
        #expect(tenth.stringValue == "0.1")
        #expect(five == Decimal128(5))
        #expect(Decimal128(-42).stringValue == "-42")
        #expect(Decimal128(1e20) == Decimal128(100_000_000_000_000_000_000 as Double))
        #expect(Decimal128(Double.nan).isNaN)
        #expect(!tenth.isNaN)
        #expect(Decimal128(Double.infinity).stringValue == "Infinity")
    }

    @Test func invalidTextThrowsNamingIt() {
        expectCofferError(.invalidArgument, containing: "abc") { _ = try Decimal128(string: "abc") }
        expectCofferError(.invalidArgument) { _ = try Decimal128(string: String(repeating: "1", count: 40)) }
    }
}
