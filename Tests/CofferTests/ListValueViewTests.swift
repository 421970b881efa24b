// A list of values seen sorted or distinct (`sorted(ascending:)`,
// `distinct()`): what it reads, managed and unmanaged, and what its observers
// are told, on the database's thread and on a queue.

import Coffer
import Foundation
import Testing

final class ViewHolder: Object {
    @Persisted var numbers: List<Int>
    @Persisted var words: List<String>
}

@Suite("sorted and distinct views of a list of values")
struct ListValueViewTests {
    let test: TestDatabase
    var db: Database { test.db }
    let log = CallLog()

    init() throws {
        test = try TestDatabase(.inMemory, [ViewHolder.self])
    }

    func holder(_ numbers: [Int], words: [String] = []) throws -> ViewHolder {
        try db.write { db.create(ViewHolder.self, value: ["numbers": numbers, "words": words]) }
    }

    @Test func aManagedListReadsSortedAndDistinctLive() throws {
        let holder = try holder([3, 1, 2, 1], words: ["pear", "Apple", "fig"])
        let ascending = holder.numbers.sorted()
        let descending = holder.numbers.sorted(ascending: false)
        let distinct = holder.numbers.distinct()
        #expect(Array(ascending) == [1, 1, 2, 3])
        #expect(Array(descending) == [3, 2, 1, 1])
        #expect(Array(distinct) == [3, 1, 2])
        #expect(Array(distinct.sorted()) == [1, 2, 3])
        #expect(Array(holder.words.sorted()) == ["Apple", "fig", "pear"])
        #expect(ascending.count == 4 && ascending[3] == 3 && ascending.database === db)
        try db.write { holder.numbers.append(0) }
        #expect(Array(ascending) == [0, 1, 1, 2, 3], "the view reads its list anew")
        #expect(ascending.description == "Results<Int>[0, 1, 1, 2, 3]")
    }

    @Test func anUnmanagedListSortsInMemory() {
        let holder = ViewHolder()
        holder.numbers.append(objectsIn: [2, 3, 2, 1])
        #expect(Array(holder.numbers.sorted()) == [1, 2, 2, 3])
        #expect(Array(holder.numbers.sorted(ascending: false)) == [3, 2, 2, 1])
        #expect(Array(holder.numbers.distinct()) == [2, 3, 1])
        #expect(holder.numbers.sorted().database == nil)
    }

    @Test func aSortedViewReportsRowsOfTheView() throws {
        let holder = try holder([3, 1, 2])
        let sorted = holder.numbers.sorted()
        let token = sorted.observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        #expect(log.all == ["initial 3"])
        try db.write { holder.numbers.append(0) }
        db.refresh()
        #expect(log.all.last == "update 4 -[] +[0] ~[]")
        // 3 becomes 4: it stays last, so it is modified in place.
        try db.write { holder.numbers[0] = 4 }
        db.refresh()
        #expect(log.all.last == "update 4 -[] +[] ~[3]")
        // 4 becomes -1: it moves to the front, a deletion plus an insertion.
        try db.write { holder.numbers[0] = -1 }
        db.refresh()
        #expect(log.all.last == "update 4 -[3] +[0] ~[]")
        #expect(Array(sorted) == [-1, 0, 1, 2])
        // Reordering the list leaves the sorted view as it was.
        try db.write { holder.numbers.move(from: 0, to: 3) }
        db.refresh()
        #expect(log.all.count == 4)
        try db.write { db.delete(holder) }
        db.refresh()
        #expect(log.all.last == "update 0 -[0, 1, 2, 3] +[] ~[]")
        #expect(sorted.isEmpty && Array(sorted).isEmpty, "the view of a deleted object's list is empty")
    }

    @Test func aDistinctViewReportsOnlyTheFirstOfEqualValues() throws {
        let holder = try holder([3, 1, 2])
        let token = holder.numbers.distinct().observe { log.append(describe($0)) }
        defer { token.invalidate() }
        db.refresh()
        try db.write { holder.numbers.append(1) }
        db.refresh()
        #expect(log.all == ["initial 3"], "a second 1 is not seen")
        try db.write { holder.numbers.remove(at: 1) }
        db.refresh()
        // A row is a position of the list: the first 1 goes, and the later
        // one, now the first, comes in at its place in the view.
        #expect(log.all == ["initial 3", "update 3 -[1] +[2] ~[]"])
        #expect(Array(holder.numbers.distinct()) == [3, 2, 1])
    }

    @Test func aViewObservedOnAQueueGetsFrozenValues() throws {
        let holder = try holder([2, 1])
        let queue = DispatchQueue(label: "list-view")
        let token = holder.numbers.sorted(ascending: false).observe(on: queue) { change in
            switch change {
            case .initial(let values): log.append("initial \(Array(values))")
            case .update(let values, let deletions, let insertions, _): log.append("\(Array(values)) -\(deletions) +\(insertions)")
            case .error(let error): log.append("error \(error)")
            }
        }
        defer { token.invalidate() }
        #expect(log.wait(for: 1) == ["initial [2, 1]"])
        try db.write { holder.numbers.append(5) }
        #expect(log.wait(for: 2).last == "[5, 2, 1] -[] +[0]")
    }
}
