// Tests of Database.verify: sound files of every object kind give no
// findings; a zeroed page gives a finding naming it, and verifyOnOpen
// refuses the file.

import Coffer
import Foundation
import Testing

@Suite struct VerifyTests {
    private static let types: [Object.Type] = Social.types + [Book.self, Bag.self]

    private func fill(_ db: Database, count: Int) throws {
        try db.write {
            for i in 0..<count {
                let dog = Social.Dog()
                dog.name = "dog \(i)"
                let person = Social.Person()
                person.name = "person \(i)"
                let address = Social.Address()
                address.street = "\(i) Main Street"
                person.address = address
                person.dogs.append(dog)
                db.add(person)
                db.add(Book(value: ["title": "book \(i)"]))
                let bag = Bag()
                bag.numbers.append(contentsOf: [i, i + 1])
                bag.tags.insert("tag \(i % 3)")
                bag.scores["x"] = i
                bag.anything = i.isMultiple(of: 2) ? AnyValue.string("text") : AnyValue.int(i)
                db.add(bag)
            }
        }
    }

    @Test(arguments: Storage.allCases)
    func soundFilesHaveNoFindings(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let config = configuration(storage, Self.types, in: dir)
        let db = try Database(configuration: config)
        try fill(db, count: 40)
        #expect(try db.verify().isEmpty)
        #expect(try Database.verify(configuration: config).isEmpty)
    }

    @Test func missingFileAndWrongKeyThrow() throws {
        let dir = TemporaryDirectory()
        expectCofferError(.notFound) { _ = try Database.verify(configuration: .init(fileURL: dir.file("none.coffer"))) }
        let config = configuration(.encrypted, Self.types, in: dir)
        try fill(try Database(configuration: config), count: 2)
        expectCofferError(.keyRequired) { _ = try Database.verify(configuration: .init(fileURL: config.fileURL)) }
    }

    @Test func aZeroedPageIsFoundAndRefused() throws {
        let dir = TemporaryDirectory()
        let source = configuration(.plain, Self.types, in: dir, name: "source.coffer")
        let target = dir.file("compacted.coffer")
        do {
            let db = try Database(configuration: source)
            try fill(db, count: 200)
            try db.writeCopy(toFile: target) // no free pages: every page is in use
        }
        var data = try Data(contentsOf: target)
        let pageSize = 4096
        func u16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        var leaf = 0
        for page in 2..<(data.count / pageSize) where u16(page * pageSize + 10) == 0x02 && u16(page * pageSize) == page {
            leaf = page
            break
        }
        #expect(leaf >= 2)
        data.replaceSubrange(leaf * pageSize..<(leaf + 1) * pageSize, with: Data(count: pageSize))
        try data.write(to: target)

        let findings = try Database.verify(configuration: .init(fileURL: target))
        let first = try #require(findings.first)
        #expect(first.kind == .pageHeader)
        #expect(first.page == UInt64(leaf))
        #expect(first.description.contains("page \(leaf)"))

        var config = Database.Configuration(fileURL: target)
        config.verifyOnOpen = true
        expectCofferError(.corrupted, containing: "page \(leaf)") { _ = try Database(configuration: config) }
    }
}
