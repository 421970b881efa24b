// Tests of query strings (Results.filter) and of the programmer errors queries
// stop on.

import Coffer
import Foundation
import Testing

@Suite struct StringQueryTests {
    @Test(arguments: Storage.allCases)
    func argumentsInBothStyles(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let tasks = db.objects(Todo.Task.self)
        #expect(tasks.filter("priority > %@ AND name BEGINSWITH %@", 5, "W").names == ["Write docs"])
        #expect(tasks.filter("priority > $0 AND name BEGINSWITH $1", 5, "W").names == ["Write docs"])
        #expect(tasks.filter("priority == $0 OR progressMinutes == $0", 5).names == ["Review", "Zoë's café"],
                "one argument used twice")
        #expect(tasks.filter("priority IN %@", [1, 10]).names == ["Fix bug", "Zoë's café"])
        #expect(tasks.filter("priority IN %@", Set([5])).names == ["Review"])
        #expect(tasks.filter("assignee == %@", String?.none as Any).names == ["Review"])
        #expect(tasks.filter("assignee == nil").names == ["Review"])
        #expect(tasks.filter("estimate > %@", 2.5).names == ["Review"])
        #expect(tasks.filter("due < %@", Date(timeIntervalSince1970: 2000)).names == ["Write docs"])
        #expect(tasks.filter("%K == %@", "priority", 10).names == ["Fix bug"])
        #expect(tasks.filter("name CONTAINS[cd] 'cafe'").names == ["Zoë's café"])
        #expect(tasks.filter("name == %@", "Zoë's café").count == 1)
        #expect(tasks.filter("ANY labels == 'docs'").names == ["Write docs"])
        #expect(tasks.filter("ratings.@avg >= 4").names == ["Write docs", "Review"])
        #expect(tasks.filter("priority > 0 SORT(priority DESC) LIMIT(2)").names == ["Fix bug", "Write docs"])
        #expect(tasks.filter("TRUEPREDICATE").count == 4)
        let projects = db.objects(Todo.Project.self)
        let ali = try #require(db.objects(Todo.Member.self).first)
        #expect(projects.filter("lead == %@", ali).names == ["Docs"])
        #expect(projects.filter("%@ IN crew", ali).names == ["Docs"])
        #expect(projects.filter("budget >= %@", Decimal128(250)).names == ["Core"])
        #expect(projects.filter("SUBQUERY(tasks, $t, $t.priority > 4 AND $t.isComplete == false).@count == 2").names == ["Core"])
        // Chained with typed queries.
        #expect(tasks.where { $0.isComplete }.filter("priority > 1").names == ["Write docs"])
    }

    /// The C format specifiers NSPredicate accepts take arguments as `%@` does,
    /// so `filter("age > %d", 2)` works as it does in Realm.
    @Test(arguments: Storage.allCases)
    func formatSpecifiersTakeArguments(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let tasks = db.objects(Todo.Task.self)
        for specifier in ["%d", "%i", "%ld", "%lld", "%qd", "%hd", "%u", "%lu", "%llu", "%zd"] {
            #expect(tasks.filter("priority > \(specifier)", 9).names == ["Fix bug"], "\(specifier)")
        }
        #expect(tasks.filter("priority > %d AND progressMinutes > %i", 1, 10).names == ["Write docs", "Review"])
        for specifier in ["%f", "%lf", "%g", "%e", "%F"] {
            #expect(tasks.filter("estimate > \(specifier)", 2.5).names == ["Review"], "\(specifier)")
        }
        #expect(tasks.filter("name == %s", "Fix bug").names == ["Fix bug"])
        #expect(tasks.filter("name BEGINSWITH %c", Character("W")).names == ["Write docs"])
        #expect(tasks.filter("%K == %d", "priority", 10).names == ["Fix bug"], "%K then a specifier")
        #expect(tasks.filter("name == '%d'").isEmpty, "specifiers in string literals are text")
        // Placeholders of every kind count together; too few arguments is an error.
        expectCofferError(.query, containing: "more %@ placeholders than the 1 argument") {
            _ = try tasks.tryFilter("priority == %d OR name == %@", 1)
        }
        expectCofferError(.query, containing: "mixes") { _ = try tasks.tryFilter("priority == %d OR priority == $0", 1) }
        // An argument of the wrong type for the property is reported as for %@.
        expectCofferError(.query, containing: "priority") { _ = try tasks.tryFilter("priority == %d", "high") }
        // Offsets in errors count in the text as written.
        expectCofferError(.query, containing: "offset 8") { _ = try tasks.tryFilter("%lld > > 1", 2) }
    }

    @Test func anInterruptWithNoQueryRunningChangesNothing() throws {
        let test = try todoDatabase(.inMemory), db = test.db
        db.interrupt()
        #expect(db.objects(Todo.Task.self).filter("priority > 0").count == 4)
        #expect(Coffer.Error.Code.interrupted.summary == "query interrupted")
    }

    /// A query text runs again with other arguments without being parsed again;
    /// each run still checks its own arguments, and many texts stay correct.
    @Test(arguments: Storage.allCases)
    func aQueryRunAgainWithOtherArgumentsIsCheckedAndCorrect(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let tasks = db.objects(Todo.Task.self)
        #expect(tasks.filter("priority == $0", 10).names == ["Fix bug"])
        #expect(tasks.filter("priority == $0", 5).names == ["Review"])
        #expect(tasks.where { $0.priority == 1 }.names == ["Zoë's café"])
        #expect(tasks.where { $0.priority == 10 }.names == ["Fix bug"])
        expectCofferError(.query, containing: "$0") { _ = try tasks.tryFilter("priority == $0", "ten") }
        #expect(tasks.filter("priority == $0", 5).names == ["Review"], "a refused argument changes nothing")
        for limit in 0..<100 {
            let text = "priority > $0 LIMIT(\(limit + 1))"
            #expect(tasks.filter(text, 0).count == min(limit + 1, 4))
        }
        #expect(tasks.filter("priority == $0", 10).names == ["Fix bug"])
    }

    @Test(arguments: Storage.allCases)
    func swiftNamesOfMappedPropertiesAreTranslated(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let members = db.objects(Todo.Member.self)
        #expect(members.filter("fullName BEGINSWITH 'Ali' AND level > 2").map(\.fullName) == ["Ali Baba"])
        #expect(members.filter("full_name BEGINSWITH 'Ali'").count == 1, "the stored name works too")
        #expect(members.filter("fullName == 'fullName'").isEmpty, "names in string literals are left alone")
        #expect(members.filter("fullName == \"level \\\" fullName\"").isEmpty)
        #expect(members.sorted(byKeyPath: "level").map(\.fullName) == ["Jo March", "Ali Baba"])
        #expect(members.sorted(byKeyPath: "fullName", ascending: false).map(\.fullName) == ["Jo March", "Ali Baba"])
        #expect(members.distinct(by: ["level"]).count == 2)
        #expect(members.filter("@links.Project.lead.name == 'Docs'").map(\.fullName) == ["Ali Baba"])
        #expect(members.filter("@links.Project.crew.@count == 1").map(\.fullName) == ["Ali Baba"])
        #expect(members.filter("%K > 2", "level").count == 1)
        let projects = db.objects(Todo.Project.self)
        #expect(projects.filter("lead.fullName == %@", "Ali Baba").names == ["Docs"])
        #expect(projects.filter("ANY crew.level == 1").names == ["Docs", "Core"])
        #expect(projects.filter("crew.@max.level == 1").names == ["Core"])
        #expect(projects.filter("SUBQUERY(crew, $m, $m.level > 2 AND $m.fullName BEGINSWITH 'A').@count == 1").names == ["Docs"])
        #expect(projects.filter("lead.level > 0 SORT(lead.fullName DESC)").names == ["Docs"])
        let typed = members.where { $0.fullName == "Jo March" }
        #expect(typed.queryDescriptions.count == 1)
        #expect(typed.queryDescriptions[0].contains("full_name"), "\(typed.queryDescriptions)")
    }

    @Test(arguments: Storage.allCases)
    func invalidQueriesThrowQueryErrors(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let tasks = db.objects(Todo.Task.self)
        expectCofferError(.query, containing: "offset 11", "expected") { _ = try tasks.tryFilter("priority >") }
        expectCofferError(.query, containing: "offset 12") { _ = try tasks.tryFilter("priority = = 3") }
        // Offsets count in the text as written, before names and placeholders are translated.
        expectCofferError(.query, containing: "offset 6") { _ = try tasks.tryFilter("%K > > 1", "progressMinutes") }
        expectCofferError(.query, containing: "offset 13") { _ = try db.objects(Todo.Member.self).tryFilter("fullName == = 3") }
        expectCofferError(.query, containing: "offset 3", "after '$'") { _ = try tasks.tryFilter("é $") }
        expectCofferError(.query, containing: "'nope'") { _ = try tasks.tryFilter("nope == 1") }
        expectCofferError(.query, containing: "priority") { _ = try tasks.tryFilter("priority == %@", "high") }
        expectCofferError(.query, containing: "BEGINSWITH needs strings or binary data, but 'priority' is int") {
            _ = try tasks.tryFilter("priority BEGINSWITH 'a'")
        }
        expectCofferError(.query, containing: "more %@ placeholders than the 1 argument") {
            _ = try tasks.tryFilter("priority == %@ OR priority == %@", 1)
        }
        expectCofferError(.query, containing: "$1", "1 argument") { _ = try tasks.tryFilter("priority == $1", 3) }
        expectCofferError(.query, containing: "mixes %@") { _ = try tasks.tryFilter("priority == %@ OR priority == $0", 1) }
        expectCofferError(.query, containing: "unmanaged Member") {
            _ = try db.objects(Todo.Project.self).tryFilter("lead == %@", Todo.Member())
        }
        expectCofferError(.query, containing: "URL") { _ = try tasks.tryFilter("name == %@", URL(fileURLWithPath: "/")) }
        expectCofferError(.query, containing: "%K", "not a string") { _ = try tasks.tryFilter("%K == 1", 5) }
        expectCofferError(.query, containing: "'nope'") { _ = try tasks.trySorted(byKeyPath: "nope") }
        expectCofferError(.query, containing: "SORT") { _ = try tasks.trySorted(byKeyPath: "labels") }
        expectCofferError(.query, containing: "DISTINCT") { _ = try db.objects(Todo.Project.self).tryDistinct(by: ["lead"]) }
        do {
            _ = try tasks.tryFilter("(")
            Issue.record("no error")
        } catch let error as Database.Error {
            #expect(error.code == .query)
            #expect(error.status == 27)
            #expect(error.code.summary == "invalid query")
        }
        #expect(tasks.count == 4, "nothing is changed by failed queries")
    }

    @Test func aQueryOfAnotherDatabaseIsRejected() throws {
        let test = try todoDatabase(.inMemory), first = test.db
        let second = try Database(configuration: configuration(.plain, Todo.types, in: test.dir, name: "other.coffer"))
        let ali = try #require(first.objects(Todo.Member.self).first)
        expectCofferError(.query, containing: "another Database") {
            _ = try second.objects(Todo.Project.self).tryFilter("lead == %@", ali)
        }
    }

    @Test func queriesFromAnotherThreadThrow() throws {
        let test = try todoDatabase(.plain), db = test.db
        let box = UncheckedBox(db.objects(Todo.Task.self))
        let error = onAnotherThread { () -> Coffer.Error? in
            do {
                _ = try box.value.tryFilter("priority > 1")
                return nil
            } catch {
                return error as? Coffer.Error
            }
        }
        #expect(error?.code == .misuse)
    }
}

@Suite struct QueryProgrammerErrorTests {
    @Test func aPropertyWithoutPersistedStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "plain-property", objectTypes: Todo.types))
            _ = db.objects(Todo.Task.self).where { $0.scratch == "" }
        }
        #expect(errorOutput(result).contains("is not a chain of @Persisted properties"))
    }

    @Test func aComputedPropertyStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "computed", objectTypes: Todo.types))
            _ = db.objects(Todo.Task.self).sorted(by: \.summary)
        }
        #expect(errorOutput(result).contains("is not a chain of @Persisted properties"))
    }

    @Test func anUnmanagedListCannotBeQueried() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Todo.Project().tasks.where { $0.priority > 1 }
        }
        #expect(errorOutput(result).contains("an unmanaged List<Task> cannot be queried"))
    }

    @Test func aSubqueryNeedsOneCollection() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let db = try Database(configuration: Database.Configuration(inMemoryIdentifier: "subquery", objectTypes: Todo.types))
            _ = db.objects(Todo.Project.self).where { ($0.name == "x").count > 0 }
        }
        #expect(errorOutput(result).contains("must go through exactly one collection"))
    }
}
