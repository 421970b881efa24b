// The files this process has open, so that deleting files never removes one in
// use.

/// The files that ``Database`` instances of this process have open, so that
/// `deleteFiles(for:)` and `deleteDatabaseIfMigrationNeeded` never delete one in use.
enum OpenFiles {
    private static let counts = LockedValue<[String: Int]>([:])

    static func register(_ path: String) -> String {
        counts.withLock { $0[path, default: 0] += 1 }
        return path
    }

    static func unregister(_ path: String) {
        counts.withLock { counts in
            if let count = counts[path], count > 1 {
                counts[path] = count - 1
            } else {
                counts[path] = nil
            }
        }
    }

    static func isOpen(_ path: String) -> Bool {
        counts.withLock { $0[path] != nil }
    }
}
