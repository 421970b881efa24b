// Where the examples keep their files: a fresh folder per test, and, for the
// examples that open the default database, a child process (an exit test)
// whose default configuration points into such a folder, so that no other
// test of this process sees the default change.

import Coffer
import Foundation

/// A new folder under the temporary directory.
struct ExampleFolder {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("coffer-doc-examples-\(UUID().uuidString)", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// `name` inside the folder.
    func file(_ name: String) -> URL {
        url.appendingPathComponent(name)
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

enum DefaultDatabase {
    /// Points the default configuration at `default.coffer` in a new folder;
    /// only for the child process of an exit test.
    static func moveToNewFolder() {
        Database.Configuration.defaultConfiguration = Database.Configuration(fileURL: ExampleFolder().file("default.coffer"))
    }
}

/// Stops the child process of an exit test, failing it, unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String, line: Int = #line) {
    if !condition {
        FileHandle.standardError.write(Data("requirement failed at line \(line): \(message())\n".utf8))
        exit(1)
    }
}
