// OpenSteps: the long part of an AsyncOpen on a thread of its own, telling
// when a seed copy, a migration and a compaction begin and end.

import Foundation

/// What the long part of an open tells the iterator.
enum OpenEvent: Sendable {
    case progress(OpenProgress)
    /// The file is ready: copied, migrated, compacted.
    case prepared
    case failed(Handoff<any Swift.Error>)
}

/// Runs the long steps of opening a configuration, reporting each step's
/// beginning and end.
final class OpenSteps: Sendable {
    private let continuation: AsyncStream<OpenEvent>.Continuation
    /// The step under way, ended when the next begins or the open ends.
    private let current = LockedValue<OpenProgress.Step?>(nil)

    private init(_ continuation: AsyncStream<OpenEvent>.Continuation) {
        self.continuation = continuation
    }

    /// Starts preparing `configuration`'s file on a thread of its own; the
    /// events come in the stream, `.prepared` or `.failed` last.
    static func start(_ configuration: Database.Configuration) -> AsyncStream<OpenEvent> {
        let (stream, continuation) = AsyncStream<OpenEvent>.makeStream()
        if configuration.inMemoryIdentifier != nil {
            continuation.yield(.prepared)
            continuation.finish()
            return stream
        }
        let steps = OpenSteps(continuation)
        Task.detached {
            steps.prepare(configuration)
        }
        return stream
    }

    private func prepare(_ configuration: Database.Configuration) {
        var watched = configuration
        if let seed = configuration.seedFilePath, let file = configuration.fileURL,
           FileManager.default.fileExists(atPath: seed.path), !FileManager.default.fileExists(atPath: file.path) {
            begin(.seedCopy)
        }
        if let migrate = configuration.migrationBlock {
            watched.migrationBlock = { [self] migration, oldVersion in
                begin(.migration)
                try migrate(migration, oldVersion)
            }
        }
        if let shouldCompact = configuration.shouldCompactOnLaunch {
            watched.shouldCompactOnLaunch = { [self] total, used in
                let compact = shouldCompact(total, used)
                if compact { begin(.compaction) }
                return compact
            }
        }
        do {
            try Database.performMigration(for: watched)
            endCurrent()
            continuation.yield(.prepared)
        } catch {
            continuation.yield(.failed(Handoff(value: error)))
        }
        continuation.finish()
    }

    private func begin(_ step: OpenProgress.Step) {
        endCurrent()
        current.withLock { $0 = step }
        continuation.yield(.progress(OpenProgress(step: step, fractionCompleted: 0)))
    }

    private func endCurrent() {
        if let step = current.withLock({ current in defer { current = nil }; return current }) {
            continuation.yield(.progress(OpenProgress(step: step, fractionCompleted: 1)))
        }
    }
}
