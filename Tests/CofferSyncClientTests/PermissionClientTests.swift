// A sync configuration's error handler against a `coffer-sync serve` with
// permission rules: a write the rules refuse is reverted in the file that
// made it and reported as a compensating write naming the class and primary
// key, while the session goes on and the other client never sees it.
import Coffer
import CofferSyncTestSupport
import Foundation
import Testing

/// The errors a handler was told of, from the sync thread.
final class ReportedErrors: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [SyncError] = []

    func append(_ error: SyncError) { lock.withLock { errors.append(error) } }
    var all: [SyncError] { lock.withLock { errors } }
}

@Suite("Swift sync client permissions")
struct PermissionClientTests {
    /// Anonymous users; notes whose text is "forbidden" may not be written.
    static func service() async throws -> ServiceProcess {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-client-rules-\(UUID()).json")
        let settings = """
            {"auth": {"anonymous": true},
             "rules": {"classes": {"SyncNote": {"read": true, "write": "text != 'forbidden'"}}}}
            """
        try Data(settings.utf8).write(to: config)
        return try await ServiceProcess.start(postgres: postgres, config: config.path,
                                              environment: ["COFFER_SYNC_SIGNING_SECRET": String(repeating: "s", count: 40)])
    }

    @Test("a refused write is reverted and reported to the error handler as a compensating write")
    func compensatingWrite() async throws {
        let service = try await Self.service()
        defer { service.stop() }
        let app = App(baseURL: URL(string: service.httpURL)!)
        let partition = freshPartition()
        let reported = ReportedErrors()
        var config = AuthClientTests.configuration(try await app.login(credentials: .anonymous), partition)
        config.syncConfiguration?.errorHandler = { error in reported.append(error) }
        #expect(config.syncConfiguration?.errorHandler != nil)
        let writer = try await Replica(configuration: config)
        let reader = try await Replica(configuration: AuthClientTests.configuration(
            try await app.login(credentials: .anonymous), partition))

        try await writer.add("ok", "allowed")
        try await writer.add("f", "forbidden")
        let session = try await syncSession(of: writer)
        try await session.wait(for: .upload, timeout: patience)
        try await eventually { !reported.all.isEmpty }
        let error = try #require(reported.all.first)
        #expect(error.serviceCode == .compensatingWrite, "\(error)")
        #expect(!error.isFatal)
        #expect(error.className == "SyncNote")
        #expect(error.primaryKey == .string("f"))
        #expect(error.message.contains("text != 'forbidden'"), "\(error)")
        #expect(try await notes(of: writer, once: ["ok": "allowed"]) == ["ok": "allowed"])
        #expect(try await notes(of: reader, once: ["ok": "allowed"]) == ["ok": "allowed"])
        #expect(session.state == .active)
        #expect(reported.all.count == 1)
    }
}
