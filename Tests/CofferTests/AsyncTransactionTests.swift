// Tests of Realm's asynchronous transactions in parts (beginAsyncWrite,
// commitAsyncWrite, cancelAsyncWrite) and of an actor that lets go of its
// database while asynchronous writes are still pending.

import Coffer
import Foundation
import Testing

extension DogStore {
    /// beginAsyncWrite whose block adds `name` and commits with commitAsyncWrite:
    /// whether the transaction had ended when commitAsyncWrite returned, and
    /// the completion's error.
    func addInAsyncTransaction(_ name: String) async -> (ended: Bool, error: (any Error)?) {
        await withCheckedContinuation { (continuation: CheckedContinuation<(ended: Bool, error: (any Error)?), Never>) in
            db.beginAsyncWrite {
                self.db.add(Dog(value: ["name": name]))
                self.db.commitAsyncWrite { error in
                    continuation.resume(returning: (true, error))
                }
                if self.db.isInWriteTransaction {
                    self.events.append("still in a transaction after commitAsyncWrite")
                }
            }
        }
    }

    /// A beginAsyncWrite block that leaves its transaction open, an asyncWrite
    /// queued behind it, then the commit: the names in the order written.
    func transactionLeftOpenThenCommitted() async throws -> [String] {
        db.beginAsyncWrite { self.db.add(Dog(value: ["name": "begun", "age": 1])) }
        let queued = _Concurrency.Task { try await db.asyncWrite { db.add(Dog(value: ["name": "queued", "age": 2])) } }
        while !db.isInWriteTransaction {
            await _Concurrency.Task.yield()
        }
        await _Concurrency.Task.yield()
        #expect(db.objects(Dog.self).count == 1, "the queued asyncWrite waits for the open transaction")
        db.commitAsyncWrite()
        try await queued.value
        return names
    }

    /// beginAsyncWrite cancelled while it waits for the write lock `holder`
    /// holds: whether a second cancel throws, and the names once it is released.
    func cancelledBegin(_ holder: WriteLockHolder) async throws -> (secondCancelThrew: Bool, names: [String]) {
        let id = db.beginAsyncWrite { self.db.add(Dog(value: ["name": "never"])) }
        try db.cancelAsyncWrite(id)
        var threw = false
        do { try db.cancelAsyncWrite(id) } catch let error as CofferError {
            threw = error.code == .invalidArgument && error.message.contains("id \(id)")
        }
        holder.commit()
        _ = try await add("after", age: 1)
        return (threw, names)
    }

    /// A commit whose completion is cancelled: whether it was called, and the
    /// names once a later write (which waits for the commit) is done.
    func cancelledCommitCompletion() async throws -> (called: Bool, names: [String]) {
        events = []
        db.beginAsyncWrite {
            self.db.add(Dog(value: ["name": "kept"]))
            let id = self.db.commitAsyncWrite { _ in self.events.append("completed") }
            try! self.db.cancelAsyncWrite(id)
        }
        _ = try await add("later", age: 1)
        return (!events.isEmpty, names)
    }

    /// A writeAsync whose block commits with commitAsyncWrite, then an asyncWrite
    /// that may begin before that commit's task resumes: the names written.
    func commitAsyncWriteInsideAWriteThenAnotherWrite() async throws -> [String] {
        events = []
        db.writeAsync({
            self.db.add(Dog(value: ["name": "first", "age": 1]))
            self.db.commitAsyncWrite { error in self.events.append(error == nil ? "committed" : "\(error!)") }
        })
        try await db.asyncWrite { db.add(Dog(value: ["name": "second", "age": 2])) }
        while events.isEmpty {
            await _Concurrency.Task.yield()
        }
        return events + names
    }

    /// beginWrite on the actor, then commitAsyncWrite: the completion's error.
    func synchronousBeginAsynchronousCommit() async -> (any Error)? {
        await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
            db.beginWrite()
            db.add(Dog(value: ["name": "sync-begun"]))
            db.commitAsyncWrite { continuation.resume(returning: $0) }
        }
    }

    /// Starts `count` asyncWrites and lets go of the database before any of
    /// them ran; returns once they are all done.
    func writeThenLetGo(_ count: Int) async throws {
        let database: Database = db
        var tasks: [_Concurrency.Task<Void, any Error>] = []
        for index in 0..<count {
            tasks.append(_Concurrency.Task {
                _ = self  // isolated to this actor, as the database is
                try await database.asyncWrite { database.add(Dog(value: ["name": "dog \(index)", "age": index])) }
            })
        }
        db = nil
        for task in tasks {
            try await task.value
        }
    }
}

@Suite(.timeLimit(.minutes(2))) struct AsyncTransactionTests {
    @Test(arguments: [Storage.plain, .encrypted, .inMemory])
    func beginAndCommitAsyncWrite(_ storage: Storage) async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(storage, [Dog.self], in: dir))
        try await store.open()
        let (ended, error) = await store.addInAsyncTransaction("Rex")
        #expect(ended && error == nil)
        #expect(await store.events.isEmpty, "commitAsyncWrite ends the transaction when it returns")
        #expect(await store.names == ["Rex"])
        #expect(await !store.isWritingAsynchronously)
    }

    @Test func aTransactionLeftOpenHoldsLaterWritesUntilItsCommit() async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(.plain, [Dog.self], in: dir))
        try await store.open()
        #expect(try await store.transactionLeftOpenThenCommitted() == ["begun", "queued"])
    }

    @Test func cancellingAWaitingBeginWritesNothing() async throws {
        let dir = TemporaryDirectory()
        let config = configuration(.plain, [Dog.self], in: dir)
        let store = DogStore(config)
        try await store.open()
        let holder = WriteLockHolder(config)
        let (secondCancelThrew, names) = try await store.cancelledBegin(holder)
        #expect(secondCancelThrew)
        #expect(names == ["holder", "after"])
    }

    @Test func cancellingACommitsCompletionKeepsTheCommit() async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(.encrypted, [Dog.self], in: dir))
        try await store.open()
        let (called, names) = try await store.cancelledCommitCompletion()
        #expect(!called)
        #expect(names == ["kept", "later"])
    }

    @Test(arguments: 0..<5)
    func aWriteAfterAnAsynchronousCommitKeepsItsTransaction(_ round: Int) async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(.plain, [Dog.self], in: dir))
        try await store.open()
        #expect(try await store.commitAsyncWriteInsideAWriteThenAnotherWrite() == ["committed", "first", "second"])
    }

    @Test func commitAsyncWriteAfterBeginWrite() async throws {
        let dir = TemporaryDirectory()
        let store = DogStore(configuration(.plain, [Dog.self], in: dir))
        try await store.open()
        #expect(await store.synchronousBeginAsynchronousCommit() == nil)
        #expect(await store.names == ["sync-begun"])
    }

    @Test func commitAsyncWriteOutsideATransactionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let store = DogStore(Database.Configuration(inMemoryIdentifier: "commit-outside", objectTypes: [Dog.self]))
            try await store.open()
            await store.commitOutsideATransaction()
        }
        #expect(errorOutput(result).contains("commitAsyncWrite() was called outside a write transaction"))
    }

    /// The actor lets go of its database while asynchronous writes wait: they
    /// all land, and the file is closed once the last one is done.
    @Test(arguments: [Storage.plain, .encrypted])
    func anActorLettingGoOfItsDatabaseWithWritesPending(_ storage: Storage) async throws {
        let dir = TemporaryDirectory()
        let config = configuration(storage, [Dog.self], in: dir)
        let store = DogStore(config)
        try await store.open()
        try await store.writeThenLetGo(20)
        #expect(try dogNames(config) == (0..<20).map { "dog \($0)" })
        #expect(try Database.deleteFiles(for: config), "no Database has the file open any more")
    }
}

/// The names of the dogs in the file, by age, read by a database opened and closed here.
private func dogNames(_ configuration: Database.Configuration) throws -> [String] {
    let reader = try Database(configuration: configuration)
    return reader.objects(Dog.self).sorted(byKeyPath: "age").map(\.name)
}

extension DogStore {
    func commitOutsideATransaction() {
        db.commitAsyncWrite()
    }
}
