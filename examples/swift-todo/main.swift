// swift-todo: a terminal to-do list that draws itself again whenever the
// file changes, from this process or another one.
//
//   swift-todo watch FILE [--renders N]   show the list, redraw on changes
//   swift-todo add FILE TITLE...          add a to-do
//   swift-todo done FILE TITLE            mark the first to-do of that title done

import Coffer
import Foundation

func configuration(_ path: String) -> Database.Configuration {
    Database.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [TodoItem.self])
}

func usage() -> Never {
    FileHandle.standardError.write(Data("usage: swift-todo watch FILE [--renders N] | add FILE TITLE... | done FILE TITLE\n".utf8))
    exit(2)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else { usage() }
let config = configuration(arguments[1])

do {
    switch arguments[0] {
    case "watch":
        var stopAfter: Int?
        if arguments.count == 4, arguments[2] == "--renders" { stopAfter = Int(arguments[3]) }
        let screen = TodoScreen(configuration: config, stopAfter: stopAfter)
        screen.render()
        // The database's observers run on the main thread's loop, where it
        // was opened (the main queue drains there while the loop runs).
        screen.$todos.database.setScheduler { work in DispatchQueue.main.async(execute: work) }
        while true { _ = RunLoop.main.run(mode: .default, before: .distantFuture) }
    case "add" where arguments.count >= 3:
        let db = try Database(configuration: config)
        try db.write {
            for title in arguments[2...] { db.add(TodoItem(value: ["title": title])) }
        }
    case "done" where arguments.count == 3:
        let db = try Database(configuration: config)
        guard let todo = db.objects(TodoItem.self).where({ $0.title == arguments[2] && !$0.done }).first else {
            FileHandle.standardError.write(Data("no open to-do \"\(arguments[2])\"\n".utf8))
            exit(1)
        }
        try db.write { todo.done = true }
    default:
        usage()
    }
} catch {
    FileHandle.standardError.write(Data("swift-todo: \(error)\n".utf8))
    exit(1)
}
