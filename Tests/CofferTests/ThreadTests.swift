// Tests of thread confinement: objects, results and databases used from the
// wrong thread.

import Coffer
import Foundation
import Testing

@Suite struct ThreadTests {
    @Test func throwingCallsFromAnotherThreadThrowMisuse() throws {
        let test = try TestDatabase(.plain, [Dog.self]), db = test.db
        try db.write { db.add(Dog(value: ["name": "Rex"])) }
        let box = UncheckedBox(db)
        let errors = onAnotherThread { () -> [Coffer.Error?] in
            let db = box.value
            func error(_ body: () throws -> Void) -> Coffer.Error? {
                do { try body(); return nil } catch { return error as? Coffer.Error }
            }
            return [
                error { try db.write {} },
                error { try db.tryAdd(Dog()) },
            ]
        }
        for error in errors {
            #expect(error?.code == .misuse)
            #expect(error?.message.contains("opened on another thread") == true)
        }
        #expect(!db.isInWriteTransaction)
        #expect(db.objects(Dog.self).count == 1, "the database still works on its own thread")
    }

    @Test func committingFromAnotherThreadStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "commit-thread", objectTypes: [Dog.self]))
            db.beginWrite()
            db.add(Dog(value: ["name": "Rex"]))
            let box = UncheckedBox(db)
            _ = onAnotherThread { try? box.value.commitWrite() }
        }
        #expect(errorOutput(result).contains("this Database was opened on another thread"))
    }

    /// Every throwing call of a database, its results and objects, made from a
    /// detached task, throws `.misuse` and changes nothing.
    @Test func aDetachedTaskGetsMisuseFromEveryThrowingCall() async throws {
        let dir = TemporaryDirectory()
        let config = configuration(.encrypted, [Dog.self], in: dir)
        let owner = OwnerThread { () -> (Database, Results<Dog>, Dog) in
            let db = try! Database(configuration: config)
            let rex = try! db.write { db.create(Dog.self, value: ["name": "Rex", "age": 3]) }
            return (db, db.objects(Dog.self), rex)
        }
        defer { owner.finish() }
        let copy = dir.file("copy.coffer")
        let errors = await _Concurrency.Task.detached { () -> [String: Coffer.Error] in
            let (db, dogs, rex) = owner.value
            var errors: [String: Coffer.Error] = [:]
            func record(_ call: String, _ body: () throws -> Void) {
                do { try body() } catch let error as Coffer.Error { errors[call] = error } catch {}
            }
            record("write") { try db.write { db.add(Dog()) } }
            record("tryAdd") { try db.tryAdd(Dog()) }
            record("tryCreate") { _ = try db.tryCreate(Dog.self, value: ["name": "Fido"]) }
            record("tryDelete") { try db.tryDelete(rex) }
            record("writeCopy") { try db.writeCopy(toFile: copy) }
            record("tryFilter") { _ = try dogs.tryFilter("name == %@", "Rex") }
            record("trySorted") { _ = try dogs.trySorted(byKeyPath: "age") }
            record("tryDistinct") { _ = try dogs.tryDistinct(by: ["name"]) }
            record("tryMin") { _ = try dogs.tryMin(ofProperty: "age") as Int? }
            return errors
        }.value
        let calls = ["write", "tryAdd", "tryCreate", "tryDelete", "writeCopy", "tryFilter", "trySorted",
                     "tryDistinct", "tryMin"]
        #expect(Set(errors.keys) == Set(calls), "every call threw a Coffer.Error")
        for (call, error) in errors {
            #expect(error.code == .misuse, "\(call): \(error)")
            #expect(error.message.contains("opened on another thread"), "\(call): \(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: copy.path))
        let db = try await Database(configuration: config)
        #expect(db.objects(Dog.self).map(\.name) == ["Rex"], "nothing was written")
    }

    @Test func readingAManagedObjectOnAnotherThreadStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "threads", objectTypes: [Dog.self]))
            let rex = try db.write { db.create(Dog.self, value: ["name": "Rex"]) }
            let box = UncheckedBox(rex)
            _ = onAnotherThread { box.value.name }
        }
        #expect(errorOutput(result).contains("this Database was opened on another thread"))
    }

    @Test func oneDatabasePerThreadSharesTheFile() throws {
        let dir = TemporaryDirectory()
        let config = configuration(.encrypted, [Book.self], in: dir)
        let threads = 4, perThread = 25
        let done = DispatchSemaphore(value: 0)
        let failures = LockedCount()
        for t in 0..<threads {
            Thread {
                do {
                    let db = try Database(configuration: config)
                    for i in 0..<perThread {
                        try db.write { db.add(Book(value: ["title": "\(t)-\(i)"])) }
                    }
                } catch {
                    failures.increment()
                }
                done.signal()
            }.start()
        }
        for _ in 0..<threads { done.wait() }
        #expect(failures.value == 0)
        let db = try Database(configuration: config)
        #expect(db.objects(Book.self).count == threads * perThread)
        #expect(Set(db.objects(Book.self).map(\.title)).count == threads * perThread)
    }
}

final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
