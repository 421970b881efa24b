// @ObservedDatabaseObject: Observation reports once per commit that changed
// the object (or deleted it) and never for another one; its bindings, and
// the list helpers on them, write the stored data in a transaction.

import Coffer
import Foundation
import Testing

/// A view model editing one person.
final class PersonEditor {
    @ObservedDatabaseObject var person: NotePerson

    init(_ person: NotePerson, keyPaths: [String]? = nil) {
        _person = ObservedDatabaseObject(wrappedValue: person, keyPaths: keyPaths)
    }
}

@Suite("observed database objects")
struct ObservedDatabaseObjectTests {
    let test: TestDatabase
    var db: Database { test.db }

    init() throws {
        test = try TestDatabase(.plain, noteTypes)
    }

    func addPerson(dogs: [String] = []) throws -> NotePerson {
        try db.write {
            db.create(NotePerson.self, value: ["name": "Ann", "dogs": dogs.map { ["name": $0] }])
        }
    }

    func names(_ person: NotePerson) -> [String] { person.dogs.map(\.name) }

    @Test func observationReportsOncePerRelevantCommitThenTheDeletion() throws {
        let ann = try addPerson()
        let editor = PersonEditor(ann, keyPaths: ["name"])
        // A view checks for a deleted object before reading it, as with Realm.
        let renders = ChangeCounter {
            let person = editor.person
            if !person.isInvalidated { _ = person.name }
        }
        db.refresh()
        #expect(renders.count == 0, "the initial state is no change")

        try db.write { ann.tags.insert("x") }
        db.refresh()
        #expect(renders.count == 0, "a property outside the key paths tells nothing")
        try db.write { db.create(NoteDog.self, value: ["name": "Rex"]) }
        db.refresh()
        #expect(renders.count == 0, "a commit to another class tells nothing")

        try db.write { ann.name = "Bea" }
        db.refresh()
        #expect(renders.count == 1)
        #expect(editor.person.name == "Bea")

        try db.write { db.delete(ann) }
        db.refresh()
        #expect(renders.count == 2, "the deletion is a change")
        #expect(editor.person.isInvalidated)
    }

    @Test func aBindingWritesThePropertyInATransaction() throws {
        let ann = try addPerson()
        let editor = PersonEditor(ann)
        let renders = ChangeCounter { _ = editor.person.name }
        let name = editor.$person.name
        #expect(name.wrappedValue == "Ann")
        name.wrappedValue = "Cleo"
        #expect(!db.isInWriteTransaction, "the write is committed")
        db.refresh()
        #expect(renders.count == 1)
        let stored = try Database(configuration: test.configuration)
        #expect(stored.objects(NotePerson.self).map(\.name) == ["Cleo"])
    }

    @Test func anUnmanagedObjectsBindingSetsItDirectly() {
        let loose = NotePerson(value: ["name": "Loose"])
        let editor = PersonEditor(loose)
        editor.$person.name.wrappedValue = "Free"
        editor.$person.dogs.append(NoteDog(value: ["name": "Rex"]))
        #expect(loose.name == "Free")
        #expect(loose.dogs.map(\.name) == ["Rex"])
        #expect(loose.database == nil)
    }

    @Test func listHelpersAppendRemoveAndMoveInTheDatabase() throws {
        let ann = try addPerson(dogs: ["A", "B", "C", "D", "E"])
        let editor = PersonEditor(ann)
        let renders = ChangeCounter { _ = editor.person.dogs.count }
        let dogs = editor.$person.dogs

        dogs.move(fromOffsets: IndexSet([0, 2]), toOffset: 4)
        db.refresh()
        #expect(names(ann) == ["B", "D", "A", "C", "E"])
        #expect(renders.count == 1, "one move is one write")

        dogs.move(fromOffsets: IndexSet([4]), toOffset: 0)
        db.refresh()
        #expect(names(ann) == ["E", "B", "D", "A", "C"])

        dogs.remove(atOffsets: IndexSet([1, 3]))
        db.refresh()
        #expect(names(ann) == ["E", "D", "C"])

        dogs.append(NoteDog(value: ["name": "F"]))
        db.refresh()
        #expect(renders.count == 4)
        let stored = try Database(configuration: test.configuration)
        #expect(stored.objects(NotePerson.self).first.map(names) == ["E", "D", "C", "F"])
    }
}
