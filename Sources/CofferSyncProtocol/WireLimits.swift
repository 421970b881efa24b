// The sizes protocol version 1 fixes (docs/SYNC.md, "Wire protocol"): the
// frame size a batch aims for, the largest frame anyone accepts, the window
// of unacknowledged bytes, and how deep values nest.

/// Limits of protocol version 1.
public enum WireLimits {
    /// The protocol version this codec speaks.
    public static let protocolVersion: UInt64 = 2
    /// The oldest protocol version a service still serves (version 1 lacks
    /// COMPENSATING_WRITE: such a client is not told which write was refused).
    public static let oldestProtocolVersion: UInt64 = 1
    /// The protocol version of flexible-sync clients (query subscriptions):
    /// version 2 and a SUBSCRIBE frame right after HELLO.
    public static let flexibleProtocolVersion: UInt64 = 3
    /// The protocol version of partition-based clients told how much is left
    /// to download: version 2 and a PROGRESS frame before each DOWNLOAD frame.
    public static let progressProtocolVersion: UInt64 = 4
    /// A batch (UPLOAD or DOWNLOAD) holds changesets up to this many bytes; a
    /// single changeset larger than this travels alone in its own frame.
    public static let batchBytes = 1 << 20
    /// No frame may be larger than this (a changeset too large for it is refused).
    public static let maxFrameBytes = 64 << 20
    /// At most this many bytes of batches are sent and not yet acknowledged
    /// (or one frame, if a single frame is larger).
    public static let windowBytes = 4 << 20
    /// Values (embedded objects, nested lists and maps) nest at most this deep,
    /// as COFFER_MAX_NESTING in the core.
    public static let maxNesting = 100
}
