// Tests of writing copies, compaction and compact-on-launch.

import Coffer
import Foundation
import Testing

@Suite struct CopyAndCompactTests {
    private func fileSize(_ url: URL) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: url.path)[.size] as! Int
    }

    /// Fills the file with large books, then deletes most of them, leaving free pages.
    private func makeFileWithFreeSpace(_ config: Database.Configuration) throws {
        let db = try Database(configuration: config)
        let text = String(repeating: "x", count: 4000)
        try db.write {
            for i in 0..<500 {
                db.add(Book(value: ["title": "\(i)-\(text)"]))
            }
        }
        try db.write {
            db.delete(db.objects(Book.self).filter { !$0.title.hasPrefix("7-") })
        }
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func compactOnLaunchShrinksTheFile(storage: Storage) throws {
        let dir = TemporaryDirectory()
        var config = configuration(storage, [Book.self], in: dir)
        try makeFileWithFreeSpace(config)
        let before = try fileSize(config.fileURL!)

        // Declining leaves the file as it is.
        let seen = ResultSlot<(Int, Int)>()
        config.shouldCompactOnLaunch = { total, used in
            seen.value = (total, used)
            return false
        }
        _ = try Database(configuration: config)
        #expect(seen.value?.0 == before)
        #expect(try fileSize(config.fileURL!) == before)
        let used = try #require(seen.value?.1)
        #expect(used > 0 && used < before / 4)

        config.shouldCompactOnLaunch = { total, used in total > 2 * used }
        let db = try Database(configuration: config)
        let after = try fileSize(config.fileURL!)
        #expect(after < before / 4)
        #expect(db.objects(Book.self).map { $0.title.prefix(2) } == ["7-"])
        try db.write { db.add(Book(value: ["title": "new"])) }
        #expect(db.objects(Book.self).count == 2)
    }

    @Test func compactOnLaunchRejectsReadOnly() throws {
        let dir = TemporaryDirectory()
        var config = configuration(.plain, [Book.self], in: dir)
        _ = try Database(configuration: config)
        config.readOnly = true
        config.shouldCompactOnLaunch = { _, _ in true }
        expectCofferError(.invalidArgument, containing: "readOnly", "shouldCompactOnLaunch") { _ = try Database(configuration: config) }
    }

    @Test(arguments: [Storage.plain, .encrypted])
    func activeVersionLimitStopsWrites(storage: Storage) throws {
        let dir = TemporaryDirectory()
        var config = configuration(storage, [Book.self], in: dir)
        config.maximumNumberOfActiveVersions = 2
        let writer = try Database(configuration: config)
        try writer.write { writer.add(Book(value: ["title": "one"])) }
        // A reader pins the version with one book.
        let reader = try Database(configuration: config)
        #expect(reader.objects(Book.self).count == 1)
        try writer.write { writer.add(Book(value: ["title": "two"])) }
        // A second reader pins the version with two books.
        let secondReader = try Database(configuration: config)
        #expect(secondReader.objects(Book.self).count == 2)
        // The two pinned versions and the new one would be three.
        expectCofferError(.limit, containing: "2") {
            try writer.write { try writer.tryAdd(Book(value: ["title": "three"])) }
        }
        #expect(!writer.isInWriteTransaction)
        // Once the first reader moves on to the second's version, writing works again.
        #expect(reader.refresh())
        try writer.write { writer.add(Book(value: ["title": "three"])) }
        #expect(writer.objects(Book.self).count == 3)
    }

    @Test(arguments: [Storage.plain, .encrypted, .inMemory])
    func writeCopyWithEveryKeyCombination(storage: Storage) throws {
        let dir = TemporaryDirectory()
        let config = configuration(storage, [Book.self], in: dir)
        let db = try Database(configuration: config)
        try db.write {
            db.add(Book(value: ["title": "Dune"]))
            db.add(Book(value: ["title": "Emma"]))
        }
        let otherKey = Data((0..<64).map { UInt8(255 - $0) })
        for (name, key) in [("plain", nil), ("same-key", testKey), ("other-key", otherKey)] as [(String, Data?)] {
            var copy = Database.Configuration(fileURL: dir.file("\(name).coffer"), objectTypes: [Book.self])
            copy.encryptionKey = key
            try db.writeCopy(configuration: copy)
            let opened = try Database(configuration: copy)
            #expect(opened.objects(Book.self).map(\.title) == ["Dune", "Emma"], "\(name)")
            // The copy opens only with its own key.
            var wrong = copy
            wrong.encryptionKey = key == nil ? testKey : nil
            expectCofferError(key == nil ? .notEncrypted : .keyRequired) { _ = try Database(configuration: wrong) }
            if key != nil {
                wrong.encryptionKey = key == testKey ? otherKey : testKey
                expectCofferError(.wrongKey) { _ = try Database(configuration: wrong) }
            }
        }
    }

    @Test func writeCopyErrors() throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, [Book.self], in: dir)
        let db = try Database(configuration: config)
        try db.write {
            db.add(Book(value: ["title": "Dune"]))
        }
        let target = dir.file("copy.coffer")
        try db.writeCopy(toFile: target)
        // Never overwrites.
        expectCofferError(.io, containing: "copy.coffer") { try db.writeCopy(toFile: target) }
        expectCofferError(.invalidArgument, containing: "64") {
            try db.writeCopy(toFile: dir.file("short.coffer"), encryptionKey: Data(count: 63))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("short.coffer").path))
        expectCofferError(.invalidArgument, containing: "in-memory") {
            try db.writeCopy(configuration: Database.Configuration(inMemoryIdentifier: "nowhere"))
        }
        // Uncommitted writes are not copied.
        try db.write {
            db.add(Book(value: ["title": "Emma"]))
            try db.writeCopy(toFile: dir.file("during-write.coffer"))
        }
        let copy = try Database(configuration: Database.Configuration(fileURL: dir.file("during-write.coffer"), objectTypes: [Book.self]))
        #expect(copy.objects(Book.self).map(\.title) == ["Dune"])
    }
}
