// User: a user logged in to a coffer-sync service, its tokens, refreshing and
// revoking them, and the configuration of a database it syncs.

import Foundation
internal import CCoffer

/// A user logged in through ``App/login(credentials:)``, as Realm's `User`.
///
/// Its access token goes in every connection of the databases it syncs, which
/// refresh it by themselves with the refresh token when the service reports it
/// expired. A `User` is `Sendable`; its tokens are read and refreshed under a lock.
public final class User: Sendable {
    /// The app the user logged in to.
    public let app: App
    /// The user's id on the service.
    public let id: String

    private struct Tokens {
        var access: String
        var accessExpiresAt: Date
        var refresh: String
        var loggedIn = true
    }

    private let tokens: LockedValue<Tokens>

    init(app: App, id: String, accessToken: String, accessTokenExpiresAt: Date, refreshToken: String) {
        self.app = app
        self.id = id
        tokens = LockedValue(Tokens(access: accessToken, accessExpiresAt: accessTokenExpiresAt, refresh: refreshToken))
    }

    /// The access token sent when a session connects.
    public var accessToken: String { tokens.withLock { $0.access } }
    /// When ``accessToken`` expires.
    public var accessTokenExpiresAt: Date { tokens.withLock { $0.accessExpiresAt } }
    /// The token that gets a new access token.
    public var refreshToken: String { tokens.withLock { $0.refresh } }
    /// False after ``logOut()``.
    public var isLoggedIn: Bool { tokens.withLock { $0.loggedIn } }

    /// A configuration of a database syncing `partitionValue` as this user
    /// with the app's ``App/syncURL``: a thin layer over ``SyncConfiguration``.
    ///
    /// Its file is `<partition>.coffer` in the folder `coffer-sync/<app id>/<user id>`
    /// next to the default file (created here when missing); set
    /// ``Database/Configuration/fileURL`` for another. Add ``Database/Configuration/objectTypes``
    /// as for any configuration.
    public func configuration(partitionValue: String) -> Database.Configuration {
        let folder = Database.Configuration.defaultFileURL.deletingLastPathComponent()
            .appendingPathComponent("coffer-sync").appendingPathComponent(Self.fileName(app.id))
            .appendingPathComponent(Self.fileName(id))
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return Database.Configuration(
            fileURL: folder.appendingPathComponent(Self.fileName(partitionValue) + ".coffer"),
            sync: SyncConfiguration(url: app.syncURL, partitionValue: partitionValue, user: self))
    }

    /// A configuration of a flexible-sync database (docs/SYNC.md, "Flexible
    /// sync") as this user, as Realm's: the file holds the objects its
    /// ``Database/subscriptions`` select (and the service's rules allow).
    /// `initialSubscriptions` fills the subscriptions when the file is first
    /// opened (at every open with `rerunOnOpen`). Its file is
    /// `flexible.coffer` in the folder of ``configuration(partitionValue:)``.
    ///
    /// ```swift
    /// var config = user.flexibleSyncConfiguration { subs in
    ///     subs.append(QuerySubscription<Dog>(name: "dogs") { $0.age > 2 })
    /// }
    /// config.objectTypes = [Dog.self]
    /// let db = try Database(configuration: config)
    /// try await db.subscriptions.waitForCompletion()
    /// ```
    public func flexibleSyncConfiguration(initialSubscriptions: (@Sendable (MutableSubscriptionSet) -> Void)? = nil,
                                          rerunOnOpen: Bool = false) -> Database.Configuration {
        var config = configuration(partitionValue: SyncConfiguration.flexibleSyncDataSet)
        config.syncConfiguration?.isFlexibleSync = true
        config.syncConfiguration?.initialSubscriptions = initialSubscriptions
        config.syncConfiguration?.rerunInitialSubscriptionsOnOpen = rerunOnOpen
        return config
    }

    /// `name` with every character but letters, digits, `-` and `_` percent-encoded.
    private static func fileName(_ name: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_")
        let encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
        return encoded.isEmpty ? "%" : encoded
    }

    /// Gets a new access token with the refresh token.
    ///
    /// - Throws: ``AuthError`` `.invalidRefreshToken` (HTTP 401) once the
    ///   refresh token was revoked (``logOut()``) or expired; `.unreachable`.
    public func refreshAccessToken() async throws {
        let path = "/auth/v1/refresh"
        let answer = try await AuthHTTP.post(app.baseURL, path, ["refreshToken": refreshToken])
        try store(refreshed: answer, path)
    }

    /// Revokes the refresh token on the service: sessions of this user stop
    /// once the access token expires, and it leaves ``App/currentUser``.
    ///
    /// - Throws: ``AuthError`` when the service cannot be reached or refuses.
    public func logOut() async throws {
        _ = try await AuthHTTP.post(app.baseURL, "/auth/v1/logout", ["refreshToken": refreshToken])
        tokens.withLock { $0.loggedIn = false }
    }

    private func store(refreshed answer: [String: Any], _ path: String) throws(AuthError) {
        let access = try AuthHTTP.string(answer, "accessToken", path)
        let expires = try AuthHTTP.date(answer, "accessTokenExpiresAt", path)
        tokens.withLock {
            $0.access = access
            $0.accessExpiresAt = expires
        }
    }

    /// The token callback of a session (`coffer_sync_token_fn`), on its sync
    /// thread: the access token, refreshed first when the service said it
    /// expired or when it has. A refused refresh (the user logged out) stops the
    /// session; a service that cannot be reached is retried with backoff.
    func supplySessionToken(refresh: Bool, into buffer: UnsafeMutablePointer<CChar>, size: Int) -> coffer_status {
        var token = accessToken
        if refresh || accessTokenExpiresAt <= Date() {
            let path = "/auth/v1/refresh"
            do throws(AuthError) {
                try store(refreshed: try AuthHTTP.postBlocking(app.baseURL, path, ["refreshToken": refreshToken]), path)
                token = accessToken
            } catch {
                return error.httpStatus == 0 || error.httpStatus >= 500 ? COFFER_ERR_IO : COFFER_ERR_MISUSE
            }
        }
        let bytes = Array(token.utf8)
        guard bytes.count < size else { return COFFER_ERR_MISUSE }
        for (index, byte) in bytes.enumerated() {
            buffer[index] = CChar(bitPattern: byte)
        }
        buffer[bytes.count] = 0
        return COFFER_OK
    }
}
