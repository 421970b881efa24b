// The classes of the fixtures of ../shared/conformance/changesets.json (see
// ChangesetConformanceTests.swift), one Swift class per fixture class, named
// after both; and how the driver reaches their list properties by name.

import Coffer

/// A class of a changeset fixture.
protocol ChangesetModel: Object {
    /// The live list property `name`, which `value(forKey:)` gives as a copy.
    func list(named name: String) -> (any ChangesetList)?
}

extension ChangesetModel {
    func list(named name: String) -> (any ChangesetList)? { nil }
}

/// The list operations of the fixtures on a list of any element type;
/// elements come as the driver resolved them (objects for links).
protocol ChangesetList {
    func insertElement(_ element: Any, at index: Int)
    func setElement(_ element: Any, at index: Int)
    func removeElement(at index: Int)
    func moveElement(from: Int, to: Int)
    func swapElements(_ i: Int, _ j: Int)
    func removeAllElements()
    var elementCount: Int { get }
    /// Observes the list; `block` gets the indices of each change.
    func observeIndices(keyPaths: [String]?, _ block: @escaping (ObservedIndices) -> Void) -> NotificationToken
}

/// What a collection observer was told, as Realm Swift tells it.
struct ObservedIndices: Equatable, CustomStringConvertible {
    var isInitial = false
    var deletions: [Int] = []
    var insertions: [Int] = []
    var modifications: [Int] = []
    var error: String?

    init<C>(_ change: CollectionChange<C>) {
        switch change {
        case .initial:
            isInitial = true
        case .update(_, let deletions, let insertions, let modifications):
            (self.deletions, self.insertions, self.modifications) = (deletions, insertions, modifications)
        case .error(let error):
            self.error = "\(error)"
        }
    }

    init(deletions: [Int], insertions: [Int], modifications: [Int]) {
        (self.deletions, self.insertions, self.modifications) = (deletions, insertions, modifications)
    }

    var description: String {
        if isInitial { return "initial" }
        if let error { return "error \(error)" }
        return "deletions \(deletions) insertions \(insertions) modifications \(modifications)"
    }
}

extension List: ChangesetList {
    func insertElement(_ element: Any, at index: Int) { insert(element as! Element, at: index) }
    func setElement(_ element: Any, at index: Int) { self[index] = element as! Element }
    func removeElement(at index: Int) { remove(at: index) }
    func moveElement(from: Int, to: Int) { move(from: from, to: to) }
    func swapElements(_ i: Int, _ j: Int) { swapAt(i, j) }
    func removeAllElements() { removeAll() }
    var elementCount: Int { count }
    func observeIndices(keyPaths: [String]?, _ block: @escaping (ObservedIndices) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths) { block(ObservedIndices($0)) }
    }
}

// Fixture "results" (results.cpp 'notifications: results').

final class CSResultsItem: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var link: CSResultsTarget?
    @Persisted var secondLink: CSResultsSecondTarget?
    @Persisted var targets: List<CSResultsTarget>
    func list(named name: String) -> (any ChangesetList)? { name == "targets" ? targets : nil }
}

final class CSResultsTarget: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var value2 = 0
    @Persisted var link: CSResultsLeaf?
    @Persisted(originProperty: "link") var items: LinkingObjects<CSResultsItem>
}

final class CSResultsLeaf: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var value2 = 0
}

final class CSResultsSecondTarget: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var value2 = 0
}

final class CSResultsOther: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
}

final class CSResultsLinkingItem: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var item: CSResultsItem?
}

// Fixture "limit" (results.cpp 'results: limit').

final class CSLimitObj: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
}

// Fixture "pk" (results.cpp 'notifications: objects with PK recreated').

final class CSPkIntPk: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
}

// Fixture "list" (list.cpp 'list').

final class CSListOrigin: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var targets: List<CSListTarget>
    func list(named name: String) -> (any ChangesetList)? { name == "targets" ? targets : nil }
}

final class CSListTarget: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var value2 = 0
}

final class CSListOtherOrigin: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var targets: List<CSListOtherTarget>
    func list(named name: String) -> (any ChangesetList)? { name == "targets" ? targets : nil }
}

final class CSListOtherTarget: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
}

// Fixture "intlist" (primitive_list.cpp).

final class CSIntlistHolder: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var values: List<Int>
    func list(named name: String) -> (any ChangesetList)? { name == "values" ? values : nil }
}

// Fixture "object" (object.cpp 'add_notification_callback()').

final class CSObjectTarget: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value1 = 0
    @Persisted var value2 = 0
    @Persisted(originProperty: "link") var origins: LinkingObjects<CSObjectOrigin>
}

final class CSObjectOrigin: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var link: CSObjectTarget?
    @Persisted var children: List<CSObjectOrigin>
    func list(named name: String) -> (any ChangesetList)? { name == "children" ? children : nil }
}

// Fixture "chain" (object.cpp 'callbacks on objects with link depth > 4').

final class CSChainNode: Object, ChangesetModel {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var children: List<CSChainNode>
    func list(named name: String) -> (any ChangesetList)? { name == "children" ? children : nil }
}

/// The Swift class of fixture `fixture`'s class `name`.
func changesetClass(_ fixture: String, _ name: String) -> any ChangesetModel.Type {
    let classes: [String: [String: any ChangesetModel.Type]] = [
        "results": ["Item": CSResultsItem.self, "Target": CSResultsTarget.self, "Leaf": CSResultsLeaf.self,
                    "SecondTarget": CSResultsSecondTarget.self, "Other": CSResultsOther.self,
                    "LinkingItem": CSResultsLinkingItem.self],
        "limit": ["Obj": CSLimitObj.self],
        "pk": ["IntPk": CSPkIntPk.self],
        "list": ["Origin": CSListOrigin.self, "Target": CSListTarget.self, "OtherOrigin": CSListOtherOrigin.self,
                 "OtherTarget": CSListOtherTarget.self],
        "intlist": ["Holder": CSIntlistHolder.self],
        "object": ["Target": CSObjectTarget.self, "Origin": CSObjectOrigin.self],
        "chain": ["Node": CSChainNode.self],
    ]
    guard let type = classes[fixture]?[name] else { fatalError("no class \(name) in fixture \(fixture)") }
    return type
}
