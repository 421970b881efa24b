// Logging in to a `coffer-sync serve` that authenticates its clients, and
// syncing as the user: anonymous and email/password logins, a wrong password,
// registering an email twice, and a logged-out user.
import Coffer
import CofferSyncTestSupport
import Foundation
import Testing

@Suite("Swift sync client authentication")
struct AuthClientTests {
    /// A service allowing anonymous and email/password logins, whose access
    /// tokens live `lifetime` seconds.
    static func service(lifetime: Int = 1800) async throws -> ServiceProcess {
        let postgres = try await PrivatePostgres.shared.freshDatabase()
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-sync-client-auth-\(UUID()).json")
        let auth = "{\"auth\": {\"anonymous\": true, \"emailPassword\": true, \"accessTokenLifetime\": \(lifetime)}}"
        try Data(auth.utf8).write(to: config)
        return try await ServiceProcess.start(postgres: postgres, config: config.path,
                                              environment: ["COFFER_SYNC_SIGNING_SECRET": String(repeating: "s", count: 40)])
    }

    static func app(_ service: ServiceProcess) -> App {
        App(baseURL: URL(string: service.httpURL)!)
    }

    /// `user.configuration(partitionValue:)` in a folder of its own, with the note class.
    static func configuration(_ user: User, _ partition: String) -> Database.Configuration {
        var config = user.configuration(partitionValue: partition)
        config.fileURL = Replica.newFileURL()
        config.objectTypes = [SyncNote.self]
        return config
    }

    @Test("anonymous users sync a partition through user.configuration(partitionValue:)")
    func anonymous() async throws {
        let service = try await Self.service()
        defer { service.stop() }
        let app = Self.app(service)
        let first = try await app.login(credentials: .anonymous)
        let second = try await app.login(credentials: .anonymous)
        #expect(first.id != second.id)
        #expect(app.currentUser === second)
        let partition = freshPartition()
        let config = first.configuration(partitionValue: partition)
        #expect(config.syncConfiguration?.user === first)
        #expect(config.syncConfiguration?.url.absoluteString == service.url)
        #expect(config.syncConfiguration?.partitionValue == partition)

        let writer = try await Replica(configuration: Self.configuration(first, partition))
        let reader = try await Replica(configuration: Self.configuration(second, partition))
        try await writer.add("n", "anonymous")
        try await syncSession(of: writer).wait(for: .upload, timeout: patience)
        #expect(try await notes(of: reader, once: ["n": "anonymous"]) == ["n": "anonymous"])
    }

    @Test("an email/password user registers, logs in, syncs and logs out")
    func emailPassword() async throws {
        let service = try await Self.service()
        defer { service.stop() }
        let app = Self.app(service)
        try await app.emailPasswordAuth.registerUser(email: "ada@example.com", password: "secret1")
        let user = try await app.login(credentials: .emailPassword(email: "ada@example.com", password: "secret1"))
        #expect(user.isLoggedIn)
        #expect(!user.id.isEmpty)
        let partition = freshPartition()
        let writer = try await Replica(configuration: Self.configuration(user, partition))
        let reader = try await Replica(configuration: Self.configuration(user, partition))
        try await writer.add("e", "email")
        try await syncSession(of: writer).wait(for: .upload, timeout: patience)
        #expect(try await notes(of: reader, once: ["e": "email"]) == ["e": "email"])

        try await user.refreshAccessToken()
        #expect(!user.accessToken.isEmpty)
        try await user.logOut()
        #expect(!user.isLoggedIn)
        #expect(app.currentUser == nil)
        do {
            try await user.refreshAccessToken()
            Issue.record("a logged-out user's refresh token still works")
        } catch let error as AuthError {
            #expect(error.code == .invalidRefreshToken, "\(error)")
        }
    }

    @Test("a session refreshes its user's expired access token by itself and syncs on")
    func expiredTokenRefreshed() async throws {
        let service = try await Self.service(lifetime: 1)
        defer { service.stop() }
        let user = try await Self.app(service).login(credentials: .anonymous)
        let first = user.accessToken
        let partition = freshPartition()
        let writer = try await Replica(configuration: Self.configuration(user, partition))
        let session = try await syncSession(of: writer)
        try await session.wait(for: .download, timeout: patience)
        session.pause()
        try await eventually { session.state == .paused }
        // The next connection's token has expired: the session gets a fresh one.
        try await eventually { user.accessTokenExpiresAt.addingTimeInterval(1) < Date() }
        try await writer.add("r", "after the refresh")
        session.resume()
        try await session.wait(for: .upload, timeout: patience)
        #expect(user.accessToken != first)
        let reader = try await Replica(configuration: Self.configuration(user, partition))
        #expect(try await notes(of: reader, once: ["r": "after the refresh"]) == ["r": "after the refresh"])
    }

    @Test("a wrong password is refused as invalid credentials, saying so")
    func wrongPassword() async throws {
        let service = try await Self.service()
        defer { service.stop() }
        let app = Self.app(service)
        try await app.emailPasswordAuth.registerUser(email: "bob@example.com", password: "secret1")
        do {
            _ = try await app.login(credentials: .emailPassword(email: "bob@example.com", password: "wrong-one"))
            Issue.record("a wrong password logged in")
        } catch let error as AuthError {
            #expect(error.code == .invalidCredentials)
            #expect(error.httpStatus == 401)
            #expect(error.message.contains("password is wrong"), "\(error)")
        }
        #expect(app.currentUser == nil)
        do {
            try await app.emailPasswordAuth.registerUser(email: "bob@example.com", password: "secret2")
            Issue.record("an email registered twice")
        } catch let error as AuthError {
            #expect(error.code == .emailTaken, "\(error)")
            #expect(error.httpStatus == 409)
        }
    }

    @Test("a service that cannot be reached gives .unreachable naming it")
    func unreachable() async throws {
        let service = try await Self.service()
        let app = Self.app(service)
        service.kill()
        do {
            _ = try await app.login(credentials: .anonymous)
            Issue.record("logged in to a stopped service")
        } catch let error as AuthError {
            #expect(error.code == .unreachable)
            #expect(error.httpStatus == 0)
            #expect(error.message.contains(service.httpURL), "\(error)")
        }
    }

    @Test("a session without a token is refused by the service: inactive, with the AUTH error")
    func refusedWithoutUser() async throws {
        let service = try await Self.service()
        defer { service.stop() }
        let replica = try await Replica(sync: SyncConfiguration(url: URL(string: service.url)!, partitionValue: freshPartition()))
        let session = try await syncSession(of: replica)
        do {
            try await session.wait(for: .download, timeout: patience)
            Issue.record("a session without a token downloaded")
        } catch let error as CofferError {
            #expect(error.code == .misuse, "\(error)")
        }
        #expect(session.state == .inactive)
        let last = try #require(session.lastError)
        #expect(last.serviceCode == .auth, "\(last)")
        #expect(last.isFatal)
    }
}
