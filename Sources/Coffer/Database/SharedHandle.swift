// SharedHandle: the C handle of an open database file, shared by the live
// Database that opened it and the frozen and thawed databases made from it,
// and closed when the last of them goes away.

internal import CCoffer

/// The C handle of an open file and its place in ``OpenFiles``.
///
/// A `coffer_db` may be used from several threads at once, each with its own
/// transactions, so the live ``Database`` that opened it and the frozen
/// databases made from it share one handle: closing it would end their pinned
/// read transactions. `@unchecked Sendable` because its state is immutable and
/// the C handle is safe to use from several threads.
final class SharedHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    private let openFilePath: String?
    /// The sync user whose token callback the handle's session calls: kept
    /// until the handle is closed, which stops the session.
    private let syncUser: User?
    /// The sync error handler's box, which the session's error callback reaches.
    private let syncErrorBox: SyncErrorBox?

    init(_ pointer: OpaquePointer, path: String?, syncUser: User? = nil, syncErrorBox: SyncErrorBox? = nil) {
        self.pointer = pointer
        self.openFilePath = path.map(OpenFiles.register)
        self.syncUser = syncUser
        self.syncErrorBox = syncErrorBox
    }

    deinit {
        coffer_close(pointer)
        if let openFilePath {
            OpenFiles.unregister(openFilePath)
        }
    }
}
