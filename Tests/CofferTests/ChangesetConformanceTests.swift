// The change-notification conformance suite (Tests/conformance/changesets.json,
// format in Tests/conformance/README.md) run through the Swift observers: one
// test case per conformance case, named by its id. Each opens an in-memory
// database with its fixture's classes and objects, applies the case's setup in
// one committed write, registers the observer (results of a query, a list
// property, or an object) on the database's thread, refreshes for the initial
// call, applies the case's write as one write transaction, refreshes again and
// compares exactly what the callback was told.
//
// The cases restate facts asserted by realm-core's object-store tests
// (https://github.com/realm/realm-core, commit f8752e18: test/object-store/
// results.cpp, list.cpp, object.cpp, transaction_log_parsing.cpp and
// primitive_list.cpp), licensed under the Apache License 2.0; each case cites
// its file and section in `source`.
//
// As Realm Swift, the Swift API reports deletions, insertions and
// modifications (old indices) and folds a list's moves into deletions and
// insertions, so `modifications_new` and `moves` are not compared (the C and
// Python suites compare them). A list of objects seen through a query or sort
// ("list_results") is observed as Results of the list, and a list of values
// seen sorted or distinct as its `sorted(ascending:)` or `distinct()`.

import Coffer
import Foundation
import Testing

/// The suite, read once.
enum ChangesetSuite {
    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../conformance/changesets.json").standardized

    nonisolated(unsafe) static let json: [String: Any] = {
        let data = try! Data(contentsOf: url)
        return try! JSONSerialization.jsonObject(with: data) as! [String: Any]
    }()

    static var cases: [[String: Any]] { json["cases"] as! [[String: Any]] }
    static var fixtures: [String: [String: Any]] { json["fixtures"] as! [String: [String: Any]] }

    static var caseIds: [String] { cases.map { $0["id"] as! String } }

    static func `case`(_ id: String) -> [String: Any] {
        cases.first { $0["id"] as? String == id }!
    }

}

@Suite("changeset conformance")
struct ChangesetConformanceTests {
    @Test func theSuiteIsComplete() {
        #expect(ChangesetSuite.cases.count == 97)
    }

    @Test(arguments: ChangesetSuite.caseIds)
    func conformanceCase(_ id: String) throws {
        let testCase = ChangesetSuite.case(id)
        let runner = try ChangesetRunner(testCase)
        try runner.run()
    }
}

/// Runs one case.
final class ChangesetRunner {
    let testCase: [String: Any]
    let fixtureName: String
    let schema: [[String: Any]]
    let db: Database
    private var collectionCalls: [ObservedIndices] = []
    private var objectCalls: [String] = []

    init(_ testCase: [String: Any]) throws {
        self.testCase = testCase
        let fixtureName = testCase["fixture"] as! String
        self.fixtureName = fixtureName
        let fixture = ChangesetSuite.fixtures[fixtureName]!
        schema = fixture["schema"] as! [[String: Any]]
        var config = Database.Configuration()
        config.inMemoryIdentifier = "changesets-\(testCase["id"]!)-\(UUID().uuidString)"
        config.objectTypes = schema.map { changesetClass(fixtureName, $0["name"] as! String) }
        db = try Database(configuration: config)
        try db.write {
            for object in fixture["objects"] as! [[String: Any]] {
                create(object["type"] as! String, object["value"] as! [String: Any])
            }
        }
    }

    func run() throws {
        if let setup = testCase["setup"] as? [[String: Any]] {
            try db.write { setup.forEach(apply) }
        }
        let token = observe()
        defer { token.invalidate() }
        db.refresh()
        let observe = testCase["observe"] as! [String: Any]
        if observe["kind"] as! String != "object" {
            try #require(collectionCalls.count == 1 && collectionCalls[0].isInitial, "initial call: \(collectionCalls)")
            collectionCalls.removeAll()
        }
        try db.write { (testCase["write"] as! [[String: Any]]).forEach(apply) }
        db.refresh()
        let expected = testCase["expected"] as! [String: Any]
        if expected["no_notification"] as? Bool == true {
            #expect(collectionCalls.isEmpty && objectCalls.isEmpty, "\(collectionCalls) \(objectCalls)")
        } else if observe["kind"] as! String == "object" {
            let want = expected["deleted"] as? Bool == true
                ? "deleted" : (expected["changed_properties"] as! [String]).sorted().joined(separator: ",")
            #expect(objectCalls == [want])
        } else {
            let want = ObservedIndices(deletions: expected["deletions"] as! [Int], insertions: expected["insertions"] as! [Int],
                                       modifications: expected["modifications"] as! [Int])
            #expect(collectionCalls == [want])
        }
    }

    // MARK: Observers

    private func observe() -> NotificationToken {
        let observe = testCase["observe"] as! [String: Any]
        let keyPaths = testCase["keyPaths"] as? [String]
        let type = changesetClass(fixtureName, observe["type"] as! String)
        switch observe["kind"] as! String {
        case "results":
            return observeResults(type, observe, keyPaths)
        case "list_results" where fixtureName == "intlist":
            let holder = find(type, observe["pk"] as! Int) as! CSIntlistHolder
            return valueView(holder.values, observe).observe { [unowned self] in collectionCalls.append(ObservedIndices($0)) }
        case "list_results":
            let owner = find(type, observe["pk"] as! Int) as! CSListOrigin
            let targets = owner.targets.filter(observe["query"] as? String ?? "TRUEPREDICATE")
            return observeResults(ordered(targets, observe), keyPaths)
        case "list":
            let owner = find(type, observe["pk"] as! Int)
            let list = owner.list(named: observe["property"] as! String)!
            return list.observeIndices(keyPaths: keyPaths) { [unowned self] in collectionCalls.append($0) }
        default:
            return observeObject(find(type, observe["pk"] as! Int), keyPaths)
        }
    }

    private func observeResults<T: ChangesetModel>(_ type: T.Type, _ observe: [String: Any], _ keyPaths: [String]?) -> NotificationToken {
        let results = db.objects(type).filter(observe["query"] as? String ?? "TRUEPREDICATE")
        return observeResults(ordered(results, observe), keyPaths)
    }

    /// `results` with the case's descriptors applied in order.
    private func ordered<T: ChangesetModel>(_ results: Results<T>, _ observe: [String: Any]) -> Results<T> {
        var results = results
        for descriptor in observe["descriptors"] as? [[String: Any]] ?? [] {
            if let sort = descriptor["sort"] as? [[String: Any]] {
                results = results.sorted(by: sort.map { SortDescriptor(keyPath: $0["property"] as! String, ascending: $0["ascending"] as! Bool) })
            } else if let distinct = descriptor["distinct"] as? [String] {
                results = results.distinct(by: distinct)
            } else if let limit = descriptor["limit"] as? Int {
                results = results.filter("TRUEPREDICATE LIMIT(\(limit))")
            }
        }
        return results
    }

    /// A list of values seen through the case's descriptors: a sort of
    /// `self` and a distinct of `self`, in order.
    private func valueView(_ list: List<Int>, _ observe: [String: Any]) -> ValueResults<Int> {
        var view: ValueResults<Int>?
        for descriptor in observe["descriptors"] as! [[String: Any]] {
            if let sort = descriptor["sort"] as? [[String: Any]] {
                let ascending = sort[0]["ascending"] as! Bool
                view = view?.sorted(ascending: ascending) ?? list.sorted(ascending: ascending)
            } else if descriptor["distinct"] != nil {
                precondition(view == nil, "a distinct after a sort")
                view = list.distinct()
            }
        }
        return view!
    }

    private func observeResults<T: ChangesetModel>(_ results: Results<T>, _ keyPaths: [String]?) -> NotificationToken {
        results.observe(keyPaths: keyPaths) { [unowned self] in collectionCalls.append(ObservedIndices($0)) }
    }

    private func observeObject<T: ChangesetModel>(_ object: T, _ keyPaths: [String]?) -> NotificationToken {
        object.observe(keyPaths: keyPaths) { [unowned self] change in
            switch change {
            case .change(_, let properties): objectCalls.append(properties.map(\.name).sorted().joined(separator: ","))
            case .deleted: objectCalls.append("deleted")
            case .error(let error): objectCalls.append("error \(error)")
            }
        }
    }

    // MARK: Writes

    private func property(_ className: String, _ name: String) -> [String: Any] {
        let cls = schema.first { $0["name"] as? String == className }!
        return (cls["properties"] as! [[String: Any]]).first { $0["name"] as? String == name }!
    }

    /// A property's (or list element's) value from its JSON form: links are
    /// given by the target's primary key.
    private func element(_ prop: [String: Any], _ value: Any?) -> Any? {
        guard let value, !(value is NSNull) else { return nil }
        let kind = prop["type"] as! String
        guard kind == "object" || (kind == "list" && prop["objectType"] as? String != "int"),
              let target = prop["objectType"] as? String else { return value }
        return find(changesetClass(fixtureName, target), value as! Int)
    }

    private func find<T: ChangesetModel>(_ type: T.Type, _ pk: Int) -> T {
        guard let object = db.object(ofType: type, forPrimaryKey: pk) else { fatalError("no \(type) \(pk)") }
        return object
    }

    private func create(_ className: String, _ value: [String: Any]) {
        var values: [String: Any] = [:]
        for (name, given) in value {
            let prop = property(className, name)
            if prop["type"] as! String == "list" {
                values[name] = (given as! [Any]).map { element(prop, $0)! }
            } else if let converted = element(prop, given) {
                values[name] = converted
            }
        }
        create(changesetClass(fixtureName, className), values)
    }

    private func create<T: ChangesetModel>(_ type: T.Type, _ values: [String: Any]) {
        db.create(type, value: values)
    }

    private func apply(_ op: [String: Any]) {
        let name = op["op"] as! String
        let className = op["type"] as! String
        let type = changesetClass(fixtureName, className)
        switch name {
        case "create":
            create(className, op["value"] as! [String: Any])
        case "set":
            let prop = property(className, op["property"] as! String)
            find(type, op["pk"] as! Int).setValue(element(prop, op["value"]), forKey: op["property"] as! String)
        case "delete":
            db.delete(find(type, op["pk"] as! Int))
        case "delete_all":
            deleteAll(type)
        default:
            applyListOp(op, type)
        }
    }

    private func deleteAll<T: ChangesetModel>(_ type: T.Type) {
        db.delete(db.objects(type))
    }

    private func applyListOp(_ op: [String: Any], _ type: any ChangesetModel.Type) {
        let prop = property(op["type"] as! String, op["property"] as! String)
        let list = find(type, op["pk"] as! Int).list(named: op["property"] as! String)!
        let value = element(prop, op["value"])
        switch op["op"] as! String {
        case "list_insert": list.insertElement(value!, at: op["index"] as! Int)
        case "list_append": list.insertElement(value!, at: list.elementCount)
        case "list_erase": list.removeElement(at: op["index"] as! Int)
        case "list_set": list.setElement(value!, at: op["index"] as! Int)
        case "list_move": list.moveElement(from: op["from"] as! Int, to: op["to"] as! Int)
        case "list_swap": list.swapElements(op["index1"] as! Int, op["index2"] as! Int)
        case "list_clear": list.removeAllElements()
        default: Issue.record("unknown operation \(op["op"]!)")
        }
    }
}
