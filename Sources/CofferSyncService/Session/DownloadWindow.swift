// Counts the DOWNLOAD bytes a client has not acknowledged yet, so the service
// sends at most WireLimits.windowBytes ahead of the client (or one frame, if a
// single frame is larger) and a slow client holds it to a bounded buffer.
import CofferSyncProtocol

actor DownloadWindow {
    private var pending: [(lastVersion: UInt64, bytes: Int)] = []
    private(set) var unackedBytes = 0
    /// The highest server version a client may acknowledge: what it had at
    /// HELLO, or what was sent since.
    private(set) var highestSent: UInt64

    init(start: UInt64) {
        highestSent = start
    }

    func sent(lastVersion: UInt64, bytes: Int) {
        pending.append((lastVersion, bytes))
        unackedBytes += bytes
        highestSent = max(highestSent, lastVersion)
    }

    /// Releases the frames up to `version`; false if it acknowledges more than
    /// was sent.
    func acknowledge(_ version: UInt64) -> Bool {
        guard version <= highestSent else { return false }
        while let first = pending.first, first.lastVersion <= version {
            unackedBytes -= first.bytes
            pending.removeFirst()
        }
        return true
    }

    /// Whether a frame of `bytes` may be sent now.
    func admits(_ bytes: Int) -> Bool {
        unackedBytes == 0 || unackedBytes + bytes <= WireLimits.windowBytes
    }
}

/// Admits at most `limit` sessions at once on this instance.
actor SessionLimiter {
    private let limit: Int
    private var active = 0

    init(limit: Int) {
        self.limit = limit
    }

    func enter() -> Bool {
        guard active < limit else { return false }
        active += 1
        return true
    }

    func leave() {
        active -= 1
    }
}
