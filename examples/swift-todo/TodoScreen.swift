// The to-do list's screen: a view model holding the observed results, and a
// render loop that draws them again each time Observation says they changed.

import Coffer
import Foundation
import Observation

/// What the screen shows: the open to-dos, oldest first.
final class TodoScreen {
    @ObservedResults(TodoItem.self, where: { !$0.done }, sortDescriptor: SortDescriptor(keyPath: "created"))
    var todos

    private var renders = 0
    private let stopAfter: Int?

    /// A screen that exits after `stopAfter` renders (nil: never).
    init(configuration: Database.Configuration, stopAfter: Int?) {
        _todos = ObservedResults(TodoItem.self, configuration: configuration, where: { !$0.done },
                                 sortDescriptor: SortDescriptor(keyPath: "created"))
        self.stopAfter = stopAfter
    }

    /// Draws the list, tracking what it read, and draws it again on the
    /// main queue after the next commit that changed it.
    func render() {
        renders += 1
        let lines = withObservationTracking {
            todos.enumerated().map { "\($0.offset + 1). \($0.element.title)" }
        } onChange: { [self] in
            DispatchQueue.main.async { self.render() }
        }
        let screen = (["--- render \(renders): \(lines.count) to do"] + lines).joined(separator: "\n") + "\n"
        FileHandle.standardOutput.write(Data(screen.utf8))
        if let stopAfter, renders >= stopAfter { exit(0) }
    }
}

/// `TodoScreen` crosses to the main queue only to run there, where it was
/// made and its database is confined.
extension TodoScreen: @unchecked Sendable {}
