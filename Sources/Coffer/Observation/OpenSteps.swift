// OpenSteps: the long part of an AsyncOpen on a thread of its own, passing on
// the progress the C core reports and cancelling it when the stream ends early.

import Foundation

/// What the long part of an open tells the iterator.
enum OpenEvent: Sendable {
    case progress(OpenProgress)
    /// The file is ready: copied, migrated, compacted.
    case prepared
    case failed(Handoff<any Swift.Error>)
}

/// Runs the long steps of opening a configuration, passing on their progress.
final class OpenSteps: Sendable {
    private let continuation: AsyncStream<OpenEvent>.Continuation
    /// Set when nobody waits for the states any more (the task iterating them
    /// was cancelled): the open is then cancelled at the core's next report.
    private let cancelled = LockedValue(false)

    private init(_ continuation: AsyncStream<OpenEvent>.Continuation) {
        self.continuation = continuation
    }

    /// Starts preparing `configuration`'s file on a thread of its own; the
    /// events come in the stream, `.prepared` or `.failed` last.
    /// A synced configuration downloads first as `download` says; with
    /// `localOnTimeout`, a download that times out (the service cannot be
    /// reached) ends in `.prepared`: the local file opens.
    static func start(_ configuration: Database.Configuration, download: SyncDownload? = nil,
                      localOnTimeout: Bool = false) -> AsyncStream<OpenEvent> {
        let (stream, continuation) = AsyncStream<OpenEvent>.makeStream()
        if configuration.inMemoryIdentifier != nil {
            continuation.yield(.prepared)
            continuation.finish()
            return stream
        }
        let steps = OpenSteps(continuation)
        continuation.onTermination = { termination in
            if case .cancelled = termination {
                steps.cancelled.withLock { $0 = true }
            }
        }
        var download = configuration.syncConfiguration == nil ? nil : download
        download?.progress = { [steps] p in
            guard !steps.cancelled.withLock({ $0 }) else { return }
            steps.continuation.yield(.progress(OpenProgress(step: .download, fractionCompleted: p.progressEstimate)))
        }
        startThreadOfItsOwn(named: "Coffer open") { [download] in
            steps.prepare(configuration, download: download, localOnTimeout: localOnTimeout)
        }
        return stream
    }

    private func prepare(_ configuration: Database.Configuration, download: SyncDownload?, localOnTimeout: Bool) {
        do {
            try Database.prepare(configuration, download: download) { [self] progress in
                guard !cancelled.withLock({ $0 }) else { return false }
                continuation.yield(.progress(progress))
                return true
            }
            continuation.yield(.prepared)
        } catch let error as CofferError where localOnTimeout && error.code == .timeout {
            // The service was not reached in time: the file as it is.
            continuation.yield(.prepared)
        } catch {
            continuation.yield(.failed(Handoff(value: error)))
        }
        continuation.finish()
    }
}
