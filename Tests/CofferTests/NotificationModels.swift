// Classes for the notification tests: people owning dogs through a list, a
// set of tags and a map of scores; dogs with an age and their owners.

import Coffer
import Foundation

final class NoteDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<NotePerson>
}

final class NotePerson: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<NoteDog>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
}

let noteTypes: [Object.Type] = [NoteDog.self, NotePerson.self]

/// What observers were told, in order, as text.
final class CallLog: @unchecked Sendable {  // `entries` is guarded by `lock`
    private let lock = NSLock()
    private var entries: [String] = []

    func append(_ entry: String) {
        lock.lock(); defer { lock.unlock() }
        entries.append(entry)
    }

    var all: [String] {
        lock.lock(); defer { lock.unlock() }
        return entries
    }

    /// Waits, without blocking the caller's actor, until at least `count`
    /// entries came, for at most five seconds.
    func waitAsync(for count: Int) async -> [String] {
        for _ in 0..<500 where all.count < count {
            try? await _Concurrency.Task.sleep(nanoseconds: 10_000_000)
        }
        return all
    }

    /// Waits until at least `count` entries came, for at most five seconds.
    func wait(for count: Int) -> [String] {
        let deadline = Date().addingTimeInterval(5)
        while all.count < count && Date() < deadline {
            usleep(2_000)
        }
        return all
    }
}

/// `.update(deletions, insertions, modifications)` as text, `initial N` and
/// `error` for the others; N is the collection's count.
func describe<C: Collection>(_ change: CollectionChange<C>) -> String {
    switch change {
    case .initial(let collection): return "initial \(collection.count)"
    case .update(let collection, let deletions, let insertions, let modifications):
        return "update \(collection.count) -\(deletions) +\(insertions) ~\(modifications)"
    case .error(let error): return "error \(error)"
    }
}
