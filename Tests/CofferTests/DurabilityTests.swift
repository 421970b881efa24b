// Tests of Database.Configuration.durability: every level opens, commits and
// reads back its level; handles of one file must agree.

import Coffer
import Foundation
import Testing

@Suite struct DurabilityTests {
    @Test(arguments: Database.Durability.allCases)
    func eachLevelCommitsAndReadsBack(level: Database.Durability) throws {
        let dir = TemporaryDirectory()
        var config = Database.Configuration(fileURL: dir.file("d.coffer"), objectTypes: [Dog.self])
        #expect(config.durability == .full)
        config.durability = level
        do {
            let db = try Database(configuration: config)
            #expect(try db.durability == level)
            try db.write { db.add(Dog(value: ["name": "Rex", "age": 3])) }
            try db.flushToDisk()
        }
        config.durability = .full
        let reopened = try Database(configuration: config)
        #expect(try reopened.durability == .full)
        #expect(reopened.objects(Dog.self).count == 1)
    }

    @Test func inMemoryIsNone() throws {
        var config = Database.Configuration(inMemoryIdentifier: "durability-\(UUID())", objectTypes: [Dog.self])
        config.durability = .full
        let db = try Database(configuration: config)
        #expect(try db.durability == Database.Durability.none)
        try db.flushToDisk()
    }

    @Test func secondHandleMustAgree() throws {
        let dir = TemporaryDirectory()
        var config = Database.Configuration(fileURL: dir.file("d.coffer"), objectTypes: [Dog.self])
        config.durability = .normal
        let first = try Database(configuration: config)
        var other = config
        other.durability = .full
        #expect {
            _ = try Database(configuration: other)
        } throws: { error in
            guard let error = error as? CofferError else { return false }
            return error.code == .busy && error.message.contains("durability normal")
        }
        let second = try Database(configuration: config)
        #expect(try second.durability == .normal)
        _ = first
    }
}
