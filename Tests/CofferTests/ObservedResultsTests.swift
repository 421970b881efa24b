// @ObservedResults and @ObservedSectionedResults: Observation reports once
// per commit that changed the results and never for another one (a commit
// to another class, a property outside the key paths); the write helpers
// change the stored data; sections group and regroup.

import Coffer
import Foundation
import Testing

/// A view model as an app would write one.
final class DogListModel {
    @ObservedResults(NoteDog.self) var dogs
    @ObservedResults(NoteDog.self) var young: Results<NoteDog>
    @ObservedSectionedResults(NoteDog.self, sectionKeyPath: \.age) var byAge

    init(_ configuration: Database.Configuration) {
        _dogs = ObservedResults(NoteDog.self, configuration: configuration, keyPaths: ["name"],
                                sortDescriptor: SortDescriptor(keyPath: "name"))
        _young = ObservedResults(NoteDog.self, configuration: configuration, where: { $0.age < 3 }, filter: "name != 'Zed'")
        _byAge = ObservedSectionedResults(NoteDog.self, sectionKeyPath: \.age, configuration: configuration,
                                          sortDescriptors: [SortDescriptor(keyPath: "age"), SortDescriptor(keyPath: "name")])
    }
}

@Suite("observed results")
struct ObservedResultsTests {
    let test: TestDatabase
    var db: Database { test.db }

    init() throws {
        test = try TestDatabase(.plain, noteTypes)
    }

    @discardableResult
    func addDog(_ name: String, age: Int = 1) throws -> NoteDog {
        try db.write { db.create(NoteDog.self, value: ["name": name, "age": age]) }
    }

    @Test func observationReportsOncePerRelevantCommitAndNeverForAnother() throws {
        let rex = try addDog("Rex")
        let model = DogListModel(test.configuration)
        let renders = ChangeCounter { _ = model.dogs.map(\.name) }
        let other = model.$dogs.database
        other.refresh()
        #expect(renders.count == 0, "the initial state is no change")
        #expect(model.dogs.map(\.name) == ["Rex"])

        try addDog("Ace")
        other.refresh()
        #expect(renders.count == 1)
        #expect(model.dogs.map(\.name) == ["Ace", "Rex"])

        try db.write { db.create(NotePerson.self, value: ["name": "Ann"]) }
        other.refresh()
        #expect(renders.count == 1, "a commit to another class tells nothing")

        try db.write { rex.age = 8 }
        other.refresh()
        #expect(renders.count == 1, "a property outside the key paths tells nothing")

        try db.write { rex.name = "Max" }
        other.refresh()
        #expect(renders.count == 2)
        #expect(model.dogs.map(\.name) == ["Ace", "Max"])

        try db.write { db.delete(rex) }
        other.refresh()
        #expect(renders.count == 3)
        #expect(model.dogs.map(\.name) == ["Ace"])
    }

    @Test func whereAndFilterChooseTheObjectsAndWhichCommitsCount() throws {
        let model = DogListModel(test.configuration)
        let renders = ChangeCounter { _ = model.young.count }
        let other = model.$young.database
        other.refresh()
        try addDog("Old", age: 9)
        other.refresh()
        #expect(renders.count == 0, "an object outside the query tells nothing")
        try addDog("Zed", age: 1)
        other.refresh()
        #expect(renders.count == 0, "nor one the string filter leaves out")
        try addDog("Pup", age: 1)
        other.refresh()
        #expect(renders.count == 1)
        #expect(model.young.map(\.name) == ["Pup"])
    }

    @Test func aCommitBeforeTheFirstCallIsReportedOnce() throws {
        let model = DogListModel(test.configuration)
        let renders = ChangeCounter { _ = model.dogs.count }
        // The core may fold this commit into the observer's first call, or
        // report it after: either way it is one change.
        try addDog("Rex")
        model.$dogs.database.refresh()
        #expect(renders.count == 1)
        #expect(model.dogs.map(\.name) == ["Rex"])
    }

    @Test func appendAndRemoveWriteToTheDatabase() throws {
        let model = DogListModel(test.configuration)
        let renders = ChangeCounter { _ = model.dogs.count }
        let own = model.$dogs.database
        for (name, age) in [("Bo", 4), ("Ace", 2), ("Cy", 5)] {
            model.$dogs.append(NoteDog(value: ["name": name, "age": age]))
            own.refresh()
        }
        db.refresh()
        #expect(db.objects(NoteDog.self).sorted(by: \.name).map(\.name) == ["Ace", "Bo", "Cy"])
        #expect(renders.count == 3, "one report per write")

        model.$dogs.remove(atOffsets: IndexSet([0, 2]))
        own.refresh()
        db.refresh()
        #expect(db.objects(NoteDog.self).map(\.name) == ["Bo"])
        #expect(renders.count == 4, "the offsets are removed in one write")

        model.$dogs.remove(model.dogs[0])
        own.refresh()
        db.refresh()
        #expect(db.objects(NoteDog.self).isEmpty)
        #expect(renders.count == 5)
        #expect(model.dogs.isEmpty)
    }

    @Test func sectionsGroupByTheKeyAndRegroupAfterACommit() throws {
        for (name, age) in [("Cy", 2), ("Ace", 1), ("Bo", 2), ("Di", 3)] { try addDog(name, age: age) }
        let model = DogListModel(test.configuration)
        let sections = { model.byAge.map { "\($0.key): \($0.map(\.name).joined(separator: " "))" } }
        let renders = ChangeCounter { _ = sections() }
        #expect(sections() == ["1: Ace", "2: Bo Cy", "3: Di"])
        #expect(model.byAge.allKeys == [1, 2, 3])

        let di = db.objects(NoteDog.self).where { $0.name == "Di" }.first!
        try db.write { di.age = 1 }
        model.$byAge.database.refresh()
        #expect(renders.count == 1)
        #expect(sections() == ["1: Ace Di", "2: Bo Cy"])

        model.$byAge.append(NoteDog(value: ["name": "Eve", "age": 7]))
        model.$byAge.database.refresh()
        #expect(renders.count == 2)
        #expect(sections() == ["1: Ace Di", "2: Bo Cy", "7: Eve"])
    }

    @Test func theEnvironmentGivesTheConfigurationWhenNoneIsGiven() throws {
        try addDog("Rex")
        // Made in the environment, read outside it, as a view model is.
        let dogs = DatabaseEnvironment.$configuration.withValue(test.configuration) {
            ObservedResults(NoteDog.self)
        }
        #expect(dogs.wrappedValue.map(\.name) == ["Rex"])
        #expect(dogs.database.configuration.fileURL == test.configuration.fileURL)
    }
}
