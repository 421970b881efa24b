// Tests of typed queries (Results.where), and the task-list database they share
// with the string query tests.

import Coffer
import Foundation
import Testing

/// A database with Realm's task-list example data.
func todoDatabase(_ storage: Storage) throws -> TestDatabase {
    let test = try TestDatabase(storage, Todo.types), db = test.db
    try db.write {
        let ali = db.create(Todo.Member.self, value: ["fullName": "Ali Baba", "level": 3])
        let jo = db.create(Todo.Member.self, value: ["fullName": "Jo March", "level": 1])
        let tasks: [[String: Any]] = [
            ["name": "Write docs", "isComplete": true, "assignee": "Ali", "priority": 9, "progressMinutes": 50,
             "labels": ["docs", "easy"], "ratings": [4, 5], "estimate": 1.5, "notes": ["a": 1, "b": 2],
             "due": Date(timeIntervalSince1970: 1000)],
            ["name": "Fix bug", "isComplete": false, "assignee": "Jo", "priority": 10, "progressMinutes": 0,
             "labels": ["urgent"], "ratings": [1], "notes": ["a": 7]],
            ["name": "Review", "isComplete": false, "priority": 5, "progressMinutes": 20,
             "ratings": [3, 4, 5], "estimate": 4.0, "due": Date(timeIntervalSince1970: 5000)],
            ["name": "Zoë's café", "isComplete": true, "assignee": "ali", "priority": 1, "progressMinutes": 5],
        ]
        let created = tasks.map { db.create(Todo.Task.self, value: $0) }
        db.create(Todo.Project.self, value: ["name": "Docs", "tasks": [created[0], created[2]], "lead": ali,
                                                 "crew": [ali, jo], "budget": Decimal128(100)])
        db.create(Todo.Project.self, value: ["name": "Core", "tasks": [created[1], created[2], created[3]],
                                                 "crew": [jo], "budget": Decimal128(250)])
        db.create(Todo.Project.self, value: ["name": "Empty"])
    }
    return test
}

extension Results where Element == Todo.Task {
    var names: [String] { map(\.name) }
}

extension Results where Element == Todo.Project {
    var names: [String] { map(\.name) }
}

@Suite struct TypedQueryTests {
    @Test(arguments: Storage.allCases)
    func comparisonsAndLogic(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let tasks = db.objects(Todo.Task.self)
        #expect(tasks.where { $0.priority == 10 }.names == ["Fix bug"])
        #expect(tasks.where { $0.priority != 10 }.names == ["Write docs", "Review", "Zoë's café"])
        #expect(tasks.where { $0.priority > 5 }.names == ["Write docs", "Fix bug"])
        #expect(tasks.where { $0.priority >= 5 }.count == 3)
        #expect(tasks.where { $0.priority < 5 }.names == ["Zoë's café"])
        #expect(tasks.where { $0.priority <= 5 }.names == ["Review", "Zoë's café"])
        #expect(tasks.where { $0.isComplete }.names == ["Write docs", "Zoë's café"], "a bool property is a predicate")
        #expect(tasks.where { !$0.isComplete }.names == ["Fix bug", "Review"])
        #expect(tasks.where { $0.isComplete && $0.priority > 5 }.names == ["Write docs"])
        #expect(tasks.where { $0.priority == 1 || $0.priority == 10 }.names == ["Fix bug", "Zoë's café"])
        #expect(tasks.where { !($0.priority > 1 && $0.priority < 10) }.names == ["Fix bug", "Zoë's café"])
        #expect(tasks.where { $0.isComplete == false && ($0.priority == 5 || $0.assignee == "Jo") }.count == 2)
        #expect(tasks.where { $0.assignee == nil }.names == ["Review"])
        #expect(tasks.where { $0.assignee != nil }.count == 3)
        #expect(tasks.where { $0.priority.in([1, 5, 7]) }.names == ["Review", "Zoë's café"])
        #expect(tasks.where { $0.priority.contains(5...9) }.names == ["Write docs", "Review"])
        #expect(tasks.where { $0.priority.contains(5..<9) }.names == ["Review"])
        #expect(tasks.where { $0.estimate.contains(1.0...2.0) }.names == ["Write docs"])
        #expect(tasks.where { $0.estimate.contains(1.5..<4.0) }.names == ["Write docs"])
        #expect(tasks.where { $0.due < Date(timeIntervalSince1970: 2000) }.names == ["Write docs"])
        #expect(tasks.where { $0.due.contains(Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 9000)) }.count == 2)
        #expect(tasks.where { $0.progressMinutes > $0.priority }.names == ["Write docs", "Review", "Zoë's café"],
                "two properties compared")
        #expect(tasks.where { $0.name > "S" }.names == ["Write docs", "Zoë's café"], "strings are ordered")
    }

    @Test(arguments: Storage.allCases)
    func stringOperators(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let tasks = db.objects(Todo.Task.self)
        #expect(tasks.where { $0.name.starts(with: "Fix") }.names == ["Fix bug"])
        #expect(tasks.where { $0.name.starts(with: "fix") }.isEmpty)
        #expect(tasks.where { $0.name.starts(with: "fix", options: .caseInsensitive) }.names == ["Fix bug"])
        #expect(tasks.where { $0.name.ends(with: "docs") }.names == ["Write docs"])
        #expect(tasks.where { $0.name.contains("e") }.names == ["Write docs", "Review"], "é is not e")
        #expect(tasks.where { $0.name.contains("CAFE", options: .caseInsensitive) }.isEmpty)
        #expect(tasks.where { $0.name.contains("CAFE", options: [.caseInsensitive, .diacriticInsensitive]) }.names == ["Zoë's café"])
        #expect(tasks.where { $0.name.contains("café", options: .diacriticInsensitive) }.count == 1)
        #expect(tasks.where { $0.name.contains("zoe", options: [.caseInsensitive, .diacriticInsensitive]) }.count == 1)
        #expect(tasks.where { $0.name.like("?ix*") }.names == ["Fix bug"])
        #expect(tasks.where { $0.name.like("*BUG", caseInsensitive: true) }.names == ["Fix bug"])
        #expect(tasks.where { $0.name.like("*BUG") }.isEmpty)
        #expect(tasks.where { $0.assignee.equals("ALI", options: .caseInsensitive) }.count == 2)
        #expect(tasks.where { $0.assignee.notEquals("ALI", options: .caseInsensitive) }.names == ["Fix bug", "Review"])
        #expect(tasks.where { $0.name.contains("'s") }.names == ["Zoë's café"], "quotes in constants are arguments, not text")
    }

    @Test(arguments: Storage.allCases)
    func linksCollectionsAndAggregates(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let projects = db.objects(Todo.Project.self)
        let tasks = db.objects(Todo.Task.self)
        #expect(projects.where { $0.lead.fullName == "Ali Baba" }.names == ["Docs"], "a path through a link, by its mapped name")
        #expect(projects.where { $0.lead.level > 2 }.names == ["Docs"])
        #expect(projects.where { $0.lead == nil }.names == ["Core", "Empty"])
        #expect(projects.where { $0.tasks.count == 0 }.names == ["Empty"])
        #expect(projects.where { $0.tasks.count > 2 }.names == ["Core"])
        #expect(projects.where { $0.tasks.priority > 9 }.names == ["Core"], "any task")
        #expect(projects.where { $0.tasks.assignee == "Ali" }.names == ["Docs"])
        #expect(projects.where { $0.tasks.name.starts(with: "Rev") }.names == ["Docs", "Core"])
        #expect(projects.where { $0.tasks.name.contains("BUG", options: .caseInsensitive) }.names == ["Core"])
        #expect(projects.where { $0.tasks.priority.max == 10 }.names == ["Core"])
        #expect(projects.where { $0.tasks.priority.min < 5 }.names == ["Core"])
        #expect(projects.where { $0.tasks.progressMinutes.sum == 70 }.names == ["Docs"])
        #expect(projects.where { $0.tasks.priority.avg > 6.5 }.names == ["Docs"])
        #expect(projects.where { $0.tasks.priority.contains(5...9) }.names == ["Docs"], "every task in the range")
        #expect(projects.where { $0.tasks.priority.containsAny(in: [1, 2]) }.names == ["Core"])
        #expect(projects.where { $0.budget > Decimal128(200) }.names == ["Core"])
        let review = try #require(tasks.where { $0.name == "Review" }.first)
        #expect(projects.where { $0.tasks.contains(review) }.names == ["Docs", "Core"])
        #expect(projects.where { ($0.tasks.priority >= 5 && $0.tasks.isComplete == false).count == 2 }.names == ["Core"],
                "a subquery counts the tasks matching both")
        #expect(projects.where { ($0.tasks.progressMinutes > 10).count >= 1 }.names == ["Docs", "Core"])
        // Backlinks, collections of values and maps.
        #expect(tasks.where { $0.projects.name == "Core" }.names == ["Fix bug", "Review", "Zoë's café"])
        #expect(tasks.where { $0.projects.count == 2 }.names == ["Review"])
        #expect(tasks.where { $0.labels.contains("urgent") }.names == ["Fix bug"])
        #expect(tasks.where { $0.labels.count == 0 }.names == ["Review", "Zoë's café"])
        #expect(tasks.where { $0.ratings.contains(5) }.names == ["Write docs", "Review"])
        #expect(tasks.where { $0.ratings > 4 }.names == ["Write docs", "Review"])
        #expect(tasks.where { $0.ratings.avg >= 4 }.names == ["Write docs", "Review"])
        #expect(tasks.where { $0.ratings.sum == 12 }.names == ["Review"])
        #expect(tasks.where { $0.ratings.min == 1 }.names == ["Fix bug"])
        #expect(tasks.where { $0.notes["a"] == 7 }.names == ["Fix bug"])
        #expect(tasks.where { $0.notes.keys == "b" }.names == ["Write docs"])
        #expect(tasks.where { $0.notes.values > 5 }.names == ["Fix bug"])
        #expect(tasks.where { $0.notes.count == 2 }.names == ["Write docs"])
    }

    @Test(arguments: Storage.allCases)
    func resultsFollowChangesAndSnapshots(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let urgent = db.objects(Todo.Task.self).where { $0.priority >= 9 }
        #expect(urgent.names == ["Write docs", "Fix bug"])
        try db.write {
            urgent[0].priority = 1
            #expect(urgent.names == ["Fix bug"], "a change in the write transaction moves the object out")
            db.create(Todo.Task.self, value: ["name": "New", "priority": 9])
            #expect(urgent.names == ["Fix bug", "New"])
            db.objects(Todo.Project.self)[2].tasks.append(urgent[1])
        }
        #expect(urgent.count == 2)
        let withTasks = db.objects(Todo.Project.self).where { $0.tasks.count > 0 }
        #expect(withTasks.names == ["Docs", "Core", "Empty"], "a list change is seen by queries over it")
        try db.write { db.delete(urgent[0]) }
        #expect(urgent.names == ["New"])
        guard storage != .inMemory else { return }
        let other = try Database(configuration: test.configuration)
        try other.write { other.create(Todo.Task.self, value: ["name": "Elsewhere", "priority": 20]) }
        #expect(urgent.names == ["New"], "the snapshot stays until refresh")
        db.refresh()
        #expect(urgent.names == ["New", "Elsewhere"])
    }

    @Test(arguments: Storage.allCases)
    func sortingAndDistinct(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let tasks = db.objects(Todo.Task.self)
        #expect(tasks.sorted(by: \.priority).names == ["Zoë's café", "Review", "Write docs", "Fix bug"])
        #expect(tasks.sorted(by: \.priority, ascending: false).names == ["Fix bug", "Write docs", "Review", "Zoë's café"])
        #expect(tasks.sorted(byKeyPath: "progressMinutes").names == ["Fix bug", "Zoë's café", "Review", "Write docs"])
        #expect(tasks.sorted(byKeyPath: "name", ascending: false).first?.name == "Zoë's café")
        #expect(tasks.sorted(by: [SortDescriptor(keyPath: "isComplete"), SortDescriptor(keyPath: "priority", ascending: false)]).names
                == ["Fix bug", "Review", "Write docs", "Zoë's café"])
        #expect(tasks.sorted(by: ["isComplete", SortDescriptor(keyPath: "name").reversed()]).names
                == ["Review", "Fix bug", "Zoë's café", "Write docs"])
        #expect(tasks.sorted(by: [Coffer.SortDescriptor]()).names == tasks.names)
        // Sorting again sorts by the new key first, the old order breaking ties.
        #expect(tasks.sorted(by: \.priority).sorted(by: \.isComplete).names == ["Review", "Fix bug", "Zoë's café", "Write docs"])
        // Filtering keeps the order.
        #expect(tasks.sorted(by: \.name).where { $0.priority > 1 }.names == ["Fix bug", "Review", "Write docs"])
        #expect(tasks.distinct(by: ["isComplete"]).names == ["Write docs", "Fix bug"])
        #expect(tasks.distinct(by: [\Todo.Task.isComplete, \Todo.Task.priority]).count == 4)
        #expect(tasks.distinct(by: [String]()).count == 4)
        let projects = db.objects(Todo.Project.self)
        #expect(projects.sorted(byKeyPath: "lead.fullName", ascending: false).names.first == "Docs",
                "a key path through a link, by its mapped name")
        #expect(projects.sorted(by: \.lead?.level, ascending: false).names.first == "Docs")
        #expect(projects.sorted(by: \.budget, ascending: false).names == ["Core", "Docs", "Empty"])
    }

    @Test(arguments: Storage.allCases)
    func aggregates(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let tasks = db.objects(Todo.Task.self)
        #expect(tasks.min(of: \.priority) == 1)
        #expect(tasks.max(of: \.priority) == 10)
        #expect(tasks.sum(of: \.progressMinutes) == 75)
        #expect(tasks.average(of: \.priority) == 6.25)
        #expect(tasks.max(of: \.due) == Date(timeIntervalSince1970: 5000))
        #expect(tasks.sum(of: \.estimate) == 5.5, "nil is ignored")
        let open = tasks.where { $0.isComplete == false }
        #expect(open.min(ofProperty: "priority") == 5)
        #expect(open.max(ofProperty: "progressMinutes") == 20)
        #expect(open.sum(ofProperty: "priority") == 15)
        #expect(open.sum(ofProperty: "priority") == 15.0, "an int sum read as a Double")
        #expect(open.average(ofProperty: "priority") == 7.5)
        let none = tasks.where { $0.priority > 100 }
        #expect(none.max(of: \.priority) == nil)
        #expect(none.sum(of: \.priority) == 0)
        #expect(none.average(of: \.priority) == nil)
        let budget: Decimal128 = db.objects(Todo.Project.self).sum(ofProperty: "budget")
        #expect(budget == Decimal128(350))
        #expect(db.objects(Todo.Member.self).max(ofProperty: "level") == 3, "a mapped property, by its Swift name")
        expectCofferError(.notFound, containing: "class 'Task' has no property 'nope'") {
            let _: Int? = try tasks.tryMin(ofProperty: "nope")
        }
        expectCofferError(.type, containing: "name") {
            let _: Int = try tasks.trySum(ofProperty: "name")
        }
        expectCofferError(.type, containing: "average", "Task.estimate", "not a Int") {
            let _: Int? = try tasks.tryAverage(ofProperty: "estimate")
        }
    }

    @Test(arguments: Storage.allCases)
    func queriesOverListsSetsAndBacklinks(storage: Storage) throws {
        let test = try todoDatabase(storage), db = test.db
        let core = try #require(db.objects(Todo.Project.self).where { $0.name == "Core" }.first)
        #expect(core.tasks.where { $0.priority > 1 }.names == ["Fix bug", "Review"], "in list order")
        #expect(core.tasks.filter("assignee BEGINSWITH[c] %@", "A").names == ["Zoë's café"])
        #expect(core.tasks.sorted(byKeyPath: "priority").names == ["Zoë's café", "Review", "Fix bug"])
        #expect(core.tasks.sorted(by: \.name, ascending: false).names == ["Zoë's café", "Review", "Fix bug"])
        #expect(core.tasks.where { $0.isComplete }.max(of: \.priority) == 1)
        let review = try #require(core.tasks.where { $0.name == "Review" }.first)
        #expect(review.projects.where { $0.name.starts(with: "D") }.names == ["Docs"])
        #expect(review.projects.filter("budget > 200").names == ["Core"])
        #expect(review.projects.sorted(byKeyPath: "name").names == ["Core", "Docs"])
        #expect(review.projects.sorted(by: \.budget, ascending: false).names == ["Core", "Docs"])
        let open = core.tasks.where { $0.isComplete == false }
        #expect(open.count == 2)
        try db.write {
            core.tasks.remove(at: 0)
            #expect(open.names == ["Review"], "results over a list follow it")
        }
        let bag = try db.write { db.create(Todo.Project.self, value: ["name": "Bag"]) }
        #expect(bag.tasks.where { $0.priority > 0 }.isEmpty)
    }
}
