// Tests of ThreadSafeReference: objects, results (with their queries) and
// collections handed to another thread or actor and resolved once there.

import Coffer
import Foundation
import Testing

/// An actor with a database of its own, which resolves references sent to it.
actor KennelKeeper {
    private var db: Database!

    func open(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    /// Resolves `reference` and renames the hound, returning its old name.
    func rename(_ reference: ThreadSafeReference<Hound>, to name: String) async throws -> String? {
        guard let hound = db.resolve(reference) else { return nil }
        let old = hound.name
        try await db.asyncWrite { hound.name = name }
        return old
    }

    func names(_ reference: ThreadSafeReference<Results<Hound>>) -> [String] {
        db.resolve(reference)?.map(\.name) ?? []
    }
}

@Suite struct ThreadSafeReferenceTests {
    @Test(arguments: Storage.allCases)
    func anObjectIsResolvedOnAnotherThread(storage: Storage) throws {
        let test = try TestDatabase(storage, Kennels.types), db = test.db
        let rex = try Kennels.fill(db).hounds[0]
        let reference = ThreadSafeReference(to: rex)
        #expect(!reference.isInvalidated)
        let configuration = test.configuration
        let name = onAnotherThread { () -> String? in
            let other = try! Database(configuration: configuration)
            guard let hound = other.resolve(reference) else { return nil }
            try! other.write { hound.age = 4 }
            return hound.name
        }
        #expect(name == "Rex")
        #expect(reference.isInvalidated)
        db.refresh()
        #expect(rex.age == 4)
    }

    @Test func resultsKeepTheirQueriesAndArguments() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        let rex = kennel.hounds[0]
        let grown = db.objects(Hound.self).filter("age >= %d AND name != %@", 3, "Fido").sorted(byKeyPath: "name")
        let inKennel = db.objects(Hound.self).filter("ANY kennels == %@", kennel).sorted(byKeyPath: "age")
        let young = kennel.hounds.where { $0.age < 4 }
        let references = (ThreadSafeReference(to: grown), ThreadSafeReference(to: inKennel), ThreadSafeReference(to: young))
        let configuration = test.configuration
        let names = onAnotherThread { () -> [[String]] in
            // Only the kennel's and hound's classes, opened in another order.
            var other = configuration
            other.objectTypes = [Hound.self, Yard.self]
            let db = try! Database(configuration: other)
            try! db.write { db.add(Hound(value: ["name": "Ace", "age": 9])) }
            return [db.resolve(references.0)!.map(\.name), db.resolve(references.1)!.map(\.name),
                    db.resolve(references.2)!.map(\.name)]
        }
        #expect(names == [["Ace", "Rex"], ["Bolt", "Rex", "Fido"], ["Rex", "Bolt"]])
        _ = rex
    }

    @Test(arguments: Storage.allCases)
    func collectionsAreResolvedOnAnotherThread(storage: Storage) throws {
        let test = try TestDatabase(storage, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        let references = (ThreadSafeReference(to: kennel.hounds), ThreadSafeReference(to: kennel.tags),
                          ThreadSafeReference(to: kennel.scores))
        let configuration = test.configuration
        let read = onAnotherThread { () -> String in
            let other = try! Database(configuration: configuration)
            let hounds = other.resolve(references.0)!, tags = other.resolve(references.1)!, scores = other.resolve(references.2)!
            try! other.write { hounds.append(Hound(value: ["name": "New"])) }
            return "\(hounds.map(\.name)) \(tags.sorted()) \(scores["clean"] ?? 0)"
        }
        #expect(read == #"["Rex", "Fido", "Bolt", "New"] ["dry", "large"] 4"#)
        db.refresh()
        #expect(kennel.hounds.count == 4)
    }

    @Test func aDeletedObjectResolvesToNil() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        let kennel = try Kennels.fill(db)
        let references = (ThreadSafeReference(to: kennel.hounds[0]), ThreadSafeReference(to: kennel.hounds))
        try db.write { db.delete(kennel.hounds[0]); db.delete(kennel) }
        #expect(db.resolve(references.0) == nil)
        #expect(db.resolve(references.1) == nil)
    }

    @Test func aDatabaseBehindMovesToTheReferencesVersion() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        try Kennels.fill(db)
        let reader = try Database(configuration: test.configuration)
        #expect(reader.objects(Hound.self).count == 3)
        let late = try db.write { db.create(Hound.self, value: ["name": "Late"]) }
        #expect(reader.resolve(ThreadSafeReference(to: late))?.name == "Late")
    }

    @Test func resolvingTwiceOrInTheWrongDatabaseThrows() throws {
        let test = try TestDatabase(.plain, Kennels.types), db = test.db
        let rex = try Kennels.fill(db).hounds[0]
        let reference = ThreadSafeReference(to: rex)
        #expect(try db.tryResolve(reference)?.name == "Rex")
        expectCofferError(.misuse, containing: "resolved already", "only once") { _ = try db.tryResolve(reference) }
        let elsewhere = try TestDatabase(.plain, Kennels.types)
        expectCofferError(.misuse, containing: "refers to a value of the database") {
            _ = try elsewhere.db.tryResolve(ThreadSafeReference(to: rex))
        }
        expectCofferError(.misuse, containing: "frozen") {
            _ = try db.freeze().tryResolve(ThreadSafeReference(to: rex))
        }
    }

    @Test func resolvingTwiceStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "resolve-twice", objectTypes: Kennels.types))
            let reference = ThreadSafeReference(to: try Kennels.fill(db))
            _ = db.resolve(reference)
            _ = db.resolve(reference)
        }
        #expect(errorOutput(result).contains("was resolved already; a reference can be resolved only once"))
    }

    @Test func aReferenceToAFrozenObjectStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "frozen-reference", objectTypes: Kennels.types))
            _ = ThreadSafeReference(to: try Kennels.fill(db).freeze())
        }
        #expect(errorOutput(result).contains("a frozen value can be passed to other threads as it is"))
    }

    @Test func aReferenceMadeInAWriteTransactionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "write-reference", objectTypes: Kennels.types))
            try db.write { _ = ThreadSafeReference(to: db.create(Hound.self)) }
        }
        #expect(errorOutput(result).contains("cannot make a ThreadSafeReference inside a write transaction"))
    }

    @Test @MainActor func anActorResolvesAReference() async throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, Kennels.types, in: dir)
        let db = try await Database(configuration: config)
        try Kennels.fill(db)
        let keeper = KennelKeeper()
        try await keeper.open(config)
        let rex = db.objects(Hound.self).filter("name == %@", "Rex").first!
        let old = try await keeper.rename(ThreadSafeReference(to: rex), to: "Max")
        #expect(old == "Rex")
        let names = await keeper.names(ThreadSafeReference(to: db.objects(Hound.self).sorted(byKeyPath: "name")))
        #expect(names == ["Bolt", "Fido", "Max"])
        db.refresh()
        #expect(rex.name == "Max")
    }
}
