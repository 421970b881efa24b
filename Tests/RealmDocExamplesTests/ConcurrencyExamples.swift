// "Open a Realm with Swift concurrency features" and "Use Realm with Actors -
// Swift SDK", with Coffer's renames (Realm → Database):
// https://www.mongodb.com/docs/atlas/device-sdks/sdk/swift/realm-files/configure-and-open-a-realm/
// https://www.mongodb.com/docs/atlas/device-sdks/sdk/swift/use-realm-with-actors/
// A database isolated to the main actor, to a custom actor and to a global
// actor; asyncWrite creating, updating and deleting. The examples open the
// default database, so each runs in a child process (an exit test).

import Coffer
import Foundation
import Testing

actor RealmActor {
    // An implicitly-unwrapped optional is used here to let us pass `self` to
    // `Database(actor:)` within `init`
    var realm: Database!
    init() async throws {
        realm = try await Database(actor: self)
    }

    var count: Int {
        realm.objects(Todo.self).count
    }

    func createTodo(name: String, owner: String, status: String) async throws {
        try await realm.asyncWrite {
            realm.create(Todo.self, value: [
                "_id": ObjectId.generate(),
                "name": name,
                "owner": owner,
                "status": status
            ])
        }
    }

    func updateTodo(_id: ObjectId, name: String, owner: String, status: String) async throws {
        try await realm.asyncWrite {
            realm.create(Todo.self, value: [
                "_id": _id,
                "name": name,
                "owner": owner,
                "status": status
            ], update: .modified)
        }
    }

    func deleteTodo(todo: Todo) async throws {
        try await realm.asyncWrite {
            realm.delete(todo)
        }
    }

    func close() {
        realm = nil
    }
}

// A simple example of a custom global actor
@globalActor actor BackgroundActor: GlobalActor {
    static var shared = BackgroundActor()
}

enum ConcurrencyPage {
    @MainActor
    static func mainThreadFunction() async throws {
        // These are identical: the async init produces a
        // MainActor-isolated Realm if no actor is supplied
        let realm1 = try await Database()
        let realm2 = try await Database(actor: MainActor.shared)

        try await useTheRealm(realm: realm1)
        require(realm2.objects(Todo.self).count == 1, "the second main-actor database does not see the commit")
    }

    @MainActor
    static func useTheRealm(realm: Database) async throws {
        let todoItems = realm.objects(Todo.self)
        require(todoItems.count == 0, "not empty at first")
        try! realm.write {
            realm.create(Todo.self, value: [
                "name": "Go to see the elves",
                "owner": "Sam",
                "status": "In Progress"
            ])
        }
        await realm.asyncRefresh()
        require(todoItems.count == 1, "the todo was not written")
    }

    @MainActor
    static func mainThreadFunctionWithConfiguration() async throws {
        let username = "Galadriel"

        // Customize the default realm config
        var config = Database.Configuration.defaultConfiguration
        config.fileURL!.deleteLastPathComponent()
        config.fileURL!.appendPathComponent(username)
        config.fileURL!.appendPathExtension("realm")

        // Open an actor-isolated realm with a specific configuration
        let realm = try await Database(configuration: config, actor: MainActor.shared)

        try await useTheRealm(realm: realm)
        require(realm.configuration.fileURL?.lastPathComponent == "Galadriel.realm", "wrong file")
    }

    @BackgroundActor
    static func backgroundThreadFunction() async throws {
        // Explicitly specifying the actor is required for anything that is not MainActor
        let realm = try await Database(actor: BackgroundActor.shared)
        try await realm.asyncWrite {
            _ = realm.create(Todo.self, value: [
                "name": "Pledge fealty and service to Gondor",
                "owner": "Pippin",
                "status": "In Progress"
            ])
        }
        // Thread-confined Realms would sometimes throw an exception here, as we
        // may end up on a different thread after an `await`
        let todoCount = realm.objects(Todo.self).count
        require(todoCount == 1, "\(todoCount) todos")
    }

    static func todoId(named name: String, in actor: isolated RealmActor) -> ObjectId {
        actor.realm.objects(Todo.self).where {
            $0.name == name
        }.first!._id
    }

    static func status(of id: ObjectId, in actor: isolated RealmActor) -> String {
        actor.realm.object(ofType: Todo.self, forPrimaryKey: id)?.status ?? "deleted"
    }

    static func deleteTodo(_ id: ObjectId, in actor: isolated RealmActor) async throws {
        let todo = actor.realm.object(ofType: Todo.self, forPrimaryKey: id)!
        try await actor.deleteTodo(todo: todo)
    }

    static func createObject(in actor: isolated RealmActor) async throws {
        // Because this function is isolated to this actor, you can use
        // realm synchronously in this context without async/await keywords
        try actor.realm.write {
            actor.realm.create(Todo.self, value: [
                "name": "Keep it secret",
                "owner": "Frodo",
                "status": "In Progress"
            ])
        }
        let taskCount = actor.count
        require(taskCount == 1, "\(taskCount) tasks")
    }
}

@Suite struct ConcurrencyExamples {
    @Test func theAsyncInitializerOpensOnTheMainActor() async {
        await #expect(processExitsWith: .success) {
            DefaultDatabase.moveToNewFolder()
            try await ConcurrencyPage.mainThreadFunction()
        }
    }

    @Test func anActorIsolatedDatabaseWithAConfiguration() async {
        await #expect(processExitsWith: .success) {
            DefaultDatabase.moveToNewFolder()
            try await ConcurrencyPage.mainThreadFunctionWithConfiguration()
        }
    }

    @Test func aDatabaseOnAGlobalActor() async {
        await #expect(processExitsWith: .success) {
            DefaultDatabase.moveToNewFolder()
            try await ConcurrencyPage.backgroundThreadFunction()
        }
    }

    @Test func aCustomActorCreatesUpdatesAndDeletes() async {
        await #expect(processExitsWith: .success) {
            DefaultDatabase.moveToNewFolder()
            func createObject() async throws {
                // Because this function is not isolated to this actor,
                // you must await operations completed on the actor
                try await actor.createTodo(name: "Take the ring to Mount Doom", owner: "Frodo", status: "In Progress")
                let taskCount = await actor.count
                require(taskCount == 1, "\(taskCount) tasks")
            }

            let actor = try await RealmActor()

            try await createObject()

            // Objects are read where the database is isolated: in a function
            // isolated to the actor (the page reads them across the actor
            // boundary, which Swift 6 checking rejects for non-Sendable objects).
            let todoId = await ConcurrencyPage.todoId(named: "Take the ring to Mount Doom", in: actor)
            try await actor.updateTodo(_id: todoId, name: "Take the ring to Mount Doom", owner: "Frodo", status: "Completed")
            let status = await ConcurrencyPage.status(of: todoId, in: actor)
            require(status == "Completed", status)

            try await ConcurrencyPage.deleteTodo(todoId, in: actor)
            let updatedTodoCount = await actor.count
            require(updatedTodoCount == 0, "\(updatedTodoCount) left")
            await actor.close()
        }
    }

    @Test func anIsolatedFunctionUsesTheDatabaseSynchronously() async {
        await #expect(processExitsWith: .success) {
            DefaultDatabase.moveToNewFolder()
            let actor = try await RealmActor()

            try await ConcurrencyPage.createObject(in: actor)
            await actor.close()
        }
    }
}
