// A query text a database compiled before, run again with new arguments of
// the same types, waits with them instead of making a query of its own:
// counting it makes no C query and no C results; any other use binds it
// then. These check the counts, the uses that bind it, and the arguments
// that cannot wait (other types, null), with their errors.

@testable import Coffer
import Foundation
import Testing

@Suite struct PreparedQueryCountTests {
    typealias Task = Todo.Task

    /// 40 tasks: priority i % 4, name "t<i % 8>", assignee set on even ones.
    private func filled(_ storage: Storage) throws -> TestDatabase {
        let test = try TestDatabase(storage, Todo.types)
        try test.db.write {
            for i in 0..<40 {
                test.db.create(Task.self, value: ["name": "t\(i % 8)", "priority": i % 4,
                                                  "assignee": i % 2 == 0 ? "ann" : nil])
            }
        }
        return test
    }

    @Test(arguments: Storage.allCases)
    func aPreparedTextCountsNewArgumentsWithoutAQueryOfItsOwn(_ storage: Storage) throws {
        let test = try filled(storage)
        let all = test.db.objects(Task.self)
        let first = all.where { $0.priority == 0 }
        #expect(first.queries[0].pending == nil)  // compiled: the prepared query
        #expect(first.count == 10)
        for priority in [3, 1, 0, 2, 7] {
            let narrowed = all.where { $0.priority == priority }
            let query = narrowed.queries[0]
            #expect(query.pending != nil)
            #expect(narrowed.count == (priority < 4 ? 10 : 0))
            #expect(query.pending != nil)  // counted: still no query of its own
        }
        for index in 0..<9 {
            let name = "t\(index)"
            let named = all.where { $0.name == name }
            #expect(named.count == (index < 8 ? 5 : 0))
            #expect(named.queries[0].pending != nil || index == 0)
        }
    }

    @Test(arguments: Storage.allCases)
    func usesOtherThanCountingBindTheWaitingArguments(_ storage: Storage) throws {
        let test = try filled(storage)
        let all = test.db.objects(Task.self)
        #expect(all.where { $0.priority == 0 }.count == 10)
        let narrowed = all.where { $0.priority == 2 }
        #expect(narrowed.queries[0].pending != nil)
        #expect(narrowed.queryDescriptions == ["priority == $0"])
        #expect(narrowed.queries[0].pending == nil)
        #expect(narrowed.count == 10)
        #expect(narrowed.allSatisfy { $0.priority == 2 })

        // Iterating, narrowing further and sorting run the bound query.
        let again = all.where { $0.priority == 3 }
        #expect(Array(again).map(\.priority) == Array(repeating: 3, count: 10))
        #expect(again.where { $0.name == "t3" }.count == 5)
        #expect(again.sorted(byKeyPath: "name", ascending: false).first?.name == "t7")
        #expect(again.first(where: { $0.assignee != nil }) == nil)
    }

    @Test(arguments: Storage.allCases)
    func countsSeeTheWriteTransactionAndLaterCommits(_ storage: Storage) throws {
        let test = try filled(storage)
        let db = test.db
        let all = db.objects(Task.self)
        #expect(all.where { $0.priority == 0 }.count == 10)
        let kept = all.where { $0.priority == 1 }
        #expect(kept.count == 10)
        try db.write {
            db.create(Task.self, value: ["name": "new", "priority": 1])
            // Uncommitted, and an assignment waiting to be written.
            all.where { $0.priority == 0 }.first!.priority = 1
            #expect(all.filter("priority == 1").count == 12)
            #expect(kept.count == 12)
            #expect(all.where { $0.priority == 1 }.count == 12)
        }
        #expect(kept.count == 12)
        #expect(all.where { $0.priority == 0 }.count == 9)
        try db.write { db.delete(all.where { $0.priority == 1 }) }
        #expect(kept.count == 0)
    }

    @Test func frozenResultsCountTheirWaitingArguments() throws {
        let test = try filled(.plain)
        let all = test.db.objects(Task.self)
        #expect(all.where { $0.priority == 0 }.count == 10)
        let frozen = all.where { $0.priority == 3 }.freeze()
        try test.db.write { test.db.delete(test.db.objects(Task.self)) }
        #expect(frozen.count == 10)
        #expect(test.db.objects(Task.self).where { $0.priority == 3 }.count == 0)
        let box = UncheckedBox(frozen)
        let count = onAnotherThread { box.value.count }
        #expect(count == 10)
    }

    @Test func argumentsOfAnotherTypeOrNullAreBoundAtOnceWithTheirErrors() throws {
        let test = try filled(.plain)
        let all = test.db.objects(Task.self)
        #expect(try all.tryFilter("priority == %@", 1).count == 10)
        let waiting = try all.tryFilter("priority == %@", 2)
        #expect(waiting.queries[0].pending != nil)
        // A double for the same text: bound now, and matching as a number.
        let double = try all.tryFilter("priority == %@", 2.0)
        #expect(double.queries[0].pending == nil)
        #expect(double.count == 10)
        // A string for an int property: the C core's error, at once.
        #expect {
            _ = try all.tryFilter("priority == %@", "two")
        } throws: { error in
            guard let error = error as? CofferError else { return false }
            return error.code == .query && error.message.contains("$0")
        }
        // Null where a string was bound: bound at once, counted through results.
        #expect(try all.tryFilter("assignee == %@", "ann").count == 20)
        let none = try all.tryFilter("assignee == %@", NSNull())
        #expect(none.queries[0].pending == nil)
        #expect(none.count == 20)
        #expect(try all.tryFilter("assignee == %@", "bob").count == 0)
    }

    @Test func observingAWaitingQueryBindsIt() throws {
        let test = try filled(.plain)
        let db = test.db
        let all = db.objects(Task.self)
        #expect(all.where { $0.priority == 0 }.count == 10)
        let narrowed = all.where { $0.priority == 1 }
        let token = narrowed.observe { change in
            if case .error(let error) = change { Issue.record("observer failed: \(error)") }
        }
        defer { token.invalidate() }
        #expect(narrowed.queries[0].pending == nil)
        try db.write { db.create(Task.self, value: ["name": "x", "priority": 1]) }
        #expect(narrowed.count == 11)
        #expect(all.where { $0.priority == 1 }.count == 11)
    }
}
