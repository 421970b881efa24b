// One synced database of a test, isolated to an actor so that it can be
// used across awaits; and the notes it stores.
import Coffer
import CofferSyncTestSupport
import Foundation

/// A note of a synced partition; synced classes need a primary key.
final class SyncNote: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var text = ""
}

/// A synced database of its own file, opened on this actor.
actor Replica {
    private var db: Database!
    let fileURL: URL

    /// Opens a new file in a folder of its own syncing as `sync` says.
    init(sync: SyncConfiguration?, fileURL: URL = Replica.newFileURL()) async throws {
        self.fileURL = fileURL
        try await open(Database.Configuration(fileURL: fileURL, objectTypes: [SyncNote.self], sync: sync))
    }

    /// Opens the file `config` names, as a Realm app opens
    /// `user.configuration(partitionValue:)`.
    init(configuration: Database.Configuration) async throws {
        fileURL = configuration.fileURL!
        try await open(configuration)
    }

    /// Opens the file `config` names once it has what the service has, as
    /// `downloadBeforeOpen` says.
    init(configuration: Database.Configuration, downloadBeforeOpen: Database.OpenBehavior,
         timeout: Duration? = nil) async throws {
        fileURL = configuration.fileURL!
        db = try await Database(configuration: configuration, downloadBeforeOpen: downloadBeforeOpen,
                                timeout: timeout, isolation: self)
    }

    private func open(_ config: Database.Configuration) async throws {
        db = try await Database(configuration: config, actor: self)
    }

    static func newFileURL() -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-client-\(UUID())")
        try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent("notes.coffer")
    }

    /// The session; nil for a database that does not sync.
    var session: SyncSession? { db.syncSession }

    func add(_ id: String, _ text: String) throws {
        try db.write {
            db.add(SyncNote(value: ["id": id, "text": text]))
        }
    }

    /// Adds `notes` (id → text) in one transaction: one commit, one large changeset.
    func add(_ notes: [String: String]) throws {
        try db.write {
            for (id, text) in notes {
                db.add(SyncNote(value: ["id": id, "text": text]))
            }
        }
    }

    /// Writes a copy of the file to `url` (a bundle, for a synced file).
    func writeCopy(to url: URL) throws {
        try db.writeCopy(configuration: Database.Configuration(fileURL: url))
    }

    /// The notes as the file has them now: id → text.
    func notes() throws -> [String: String] {
        try db.refresh()
        return Dictionary(uniqueKeysWithValues: db.objects(SyncNote.self).map { ($0.id, $0.text) })
    }
}

/// The sync session of a replica that syncs.
func syncSession(of replica: Replica) async throws -> SyncSession {
    guard let session = await replica.session else { throw TestFailure("the replica does not sync") }
    return session
}

/// The replica's notes once they are `expected`, or as they are after 200
/// downloads: a change the service pushes may still be on its way when a
/// wait for the download begins.
func notes(of replica: Replica, once expected: [String: String]) async throws -> [String: String] {
    var notes: [String: String] = [:]
    for _ in 0..<200 {
        try await syncSession(of: replica).wait(for: .download, timeout: patience)
        notes = try await replica.notes()
        if notes == expected { break }
    }
    return notes
}

/// A partition no other test uses.
func freshPartition(_ name: String = #function) -> String {
    "\(name.prefix { $0 != "(" })-\(UUID().uuidString.prefix(8))"
}

/// The generous limit of a wait that should succeed: the machine may be loaded.
let patience: Duration = .seconds(60)

/// Returns once `condition` holds, checking it every 20 ms for at most
/// ``patience``: for a state the session thread reaches in its own time.
func eventually(_ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now.advanced(by: patience)
    while !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("a condition did not hold within \(patience)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
