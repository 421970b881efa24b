// Builds DOWNLOAD frames from changesets kept in their uploaded encoding, so
// the service copies history rows into a frame without decoding them.

/// A changeset of the server's history as stored: its encoding untouched.
public struct StoredChangeset: Sendable {
    public var serverVersion: UInt64
    public var origin: ClientID
    public var encoded: [UInt8]

    public init(serverVersion: UInt64, origin: ClientID, encoded: [UInt8]) {
        self.serverVersion = serverVersion
        self.origin = origin
        self.encoded = encoded
    }

    /// What the changeset adds to a DOWNLOAD frame: at most 10 bytes of
    /// server version, the origin, the changeset.
    public var frameBytes: Int { 10 + 16 + encoded.count }
}

public enum DownloadBatch {
    /// The encoding of a DOWNLOAD frame holding `changesets`, byte for byte what
    /// `Frame.download` encodes for them.
    public static func frame(latestServerVersion: UInt64, changesets: [StoredChangeset]) -> [UInt8] {
        var w = WireWriter()
        w.byte(5)
        w.varint(latestServerVersion)
        w.varint(changesets.count)
        for c in changesets {
            w.varint(c.serverVersion)
            w.raw(c.origin.bytes)
            w.raw(c.encoded)
        }
        return w.bytes
    }
}
