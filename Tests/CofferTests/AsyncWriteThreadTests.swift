// Tests that one thread serves every asyncWrite of a database, and that it
// ends with the database. Threads are counted by name in /proc in a child
// process (an exit test), where no other test's database has one.

import Coffer
import Foundation
import Testing

/// The threads of this process named as a database's asyncWrite thread.
private func asyncWriteThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
        let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines) == "coffer-write"
    }.count
}

@Suite struct AsyncWriteThreadTests {
    @Test func oneThreadServesEveryAsyncWriteAndEndsWithTheDatabase() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let dir = TemporaryDirectory()
            let store = DogStore(configuration(.plain, [Dog.self], in: dir))
            try await store.open()
            for index in 0..<20 {
                try await store.addInAsyncWrite("dog \(index)")
                let threads = asyncWriteThreads()
                if threads != 1 {
                    fatalError("\(threads) asyncWrite threads after write \(index)")
                }
            }
            await store.letGo()
            var waited = 0
            while asyncWriteThreads() > 0 && waited < 200 {
                try await _Concurrency.Task.sleep(for: .milliseconds(10))
                waited += 1
            }
            if asyncWriteThreads() != 0 {
                fatalError("the asyncWrite thread outlived its database")
            }
            let reader = try await Database(configuration: configuration(.plain, [Dog.self], in: dir))
            if reader.objects(Dog.self).count != 20 {
                fatalError("\(reader.objects(Dog.self).count) dogs written")
            }
        }
        #expect(errorOutput(result).isEmpty, "\(errorOutput(result))")
    }
}

extension DogStore {
    func addInAsyncWrite(_ name: String) async throws {
        try await db.asyncWrite { db.add(Dog(value: ["name": name])) }
    }

    func letGo() {
        db = nil
    }
}
