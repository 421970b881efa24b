// AsyncOpen: a database opened without blocking, as the states it goes
// through (Realm's @AsyncOpen and @AutoOpen): connecting, each long step's
// progress, then the database or the error.

import Foundation

/// A database opened without blocking the caller, as an async sequence of
/// the states the open goes through, as Realm's `@AsyncOpen`:
/// ``AsyncOpenState/connecting``, then ``AsyncOpenState/progress(_:)`` as a
/// seed copy, the compact-on-launch check, a compaction and a migration go
/// from 0 to 1, then ``AsyncOpenState/open(_:)`` or
/// ``AsyncOpenState/error(_:)``, the last.
///
/// ```swift
/// @MainActor func load() async {
///     for await state in AsyncOpen(configuration: config) {
///         switch state {
///         case .connecting, .waitingForUser: showSpinner()
///         case .progress(let progress): showProgress(progress.step, progress.fractionCompleted)
///         case .open(let db): show(db.objects(Todo.self))
///         case .error(let error): showError(error)
///         }
///     }
/// }
/// ```
///
/// The long steps run on a thread of their own, as
/// ``Database/asyncOpen(configuration:isolation:)``; the database is then
/// opened isolated to the actor iterating the states (confined to its
/// thread when it is isolated to none: use it there only within one
/// synchronous stretch). The C core reports each step's progress from the
/// thread doing it (see ``OpenProgress``). Cancelling the task iterating
/// the states ends the sequence and cancels the open at the core's next
/// report: the file is left as it was (a seed copy is removed, a migration
/// rolled back). An in-memory configuration is opened directly. Without a
/// configuration, ``DatabaseEnvironment/configuration`` (SwiftUI's
/// `\.databaseConfiguration`) or the default one is opened.
public struct AsyncOpen: AsyncSequence, Sendable {
    public typealias Element = AsyncOpenState
    public typealias Failure = Never

    /// What is opened.
    public let configuration: Database.Configuration
    /// How long a synced configuration's download may take (nil: as long as it takes).
    public let timeout: Duration?
    /// Whether a download that times out opens the local file (``AutoOpen``).
    let localOnTimeout: Bool

    /// The states of opening `configuration`; nil for the environment's. A
    /// synced configuration waits for its user to log in
    /// (``AsyncOpenState/waitingForUser``), then downloads everything the
    /// service has (``OpenProgress/Step/download``) before it opens; a
    /// download that takes longer than `timeout` is the error
    /// ``CofferError`` `.timeout`.
    public init(configuration: Database.Configuration? = nil, timeout: Duration? = nil) {
        self.init(configuration: configuration, timeout: timeout, localOnTimeout: false)
    }

    init(configuration: Database.Configuration?, timeout: Duration?, localOnTimeout: Bool) {
        self.configuration = DatabaseEnvironment.resolve(configuration)
        self.timeout = timeout
        self.localOnTimeout = localOnTimeout
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(configuration: configuration, timeout: timeout, localOnTimeout: localOnTimeout)
    }

    /// Gives the states in order; the open starts with the first call.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = AsyncOpenState
        public typealias Failure = Never

        private let configuration: Database.Configuration
        private let timeout: Duration?
        private let localOnTimeout: Bool
        private var events: AsyncStream<OpenEvent>.Iterator?
        private var finished = false
        private var connectingTold = false
        private var waitingTold = false

        init(configuration: Database.Configuration, timeout: Duration? = nil, localOnTimeout: Bool = false) {
            self.configuration = configuration
            self.timeout = timeout
            self.localOnTimeout = localOnTimeout
        }

        /// The next state, the database opened isolated to `actor`.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> AsyncOpenState? {
            if finished { return nil }
            guard connectingTold else {
                connectingTold = true
                return .connecting
            }
            guard events != nil else {
                // A synced configuration's user logs in first.
                if let user = configuration.syncConfiguration?.user, !user.isLoggedIn {
                    if !waitingTold {
                        waitingTold = true
                        return .waitingForUser
                    }
                    while !user.isLoggedIn {
                        if (try? await Task.sleep(for: .milliseconds(50))) == nil {
                            finished = true
                            return nil
                        }
                    }
                }
                events = OpenSteps.start(configuration, download: SyncDownload(behavior: .always, timeout: timeout),
                                         localOnTimeout: localOnTimeout).makeAsyncIterator()
                return await next(isolation: actor)
            }
            guard let event = await events?.next(isolation: actor) else {
                finished = true
                return nil
            }
            switch event {
            case .progress(let progress):
                return .progress(progress)
            case .failed(let error):
                finished = true
                return .error(error.value)
            case .prepared:
                finished = true
                do {
                    return .open(try await Database(configuration: configuration, isolation: actor))
                } catch {
                    return .error(error)
                }
            }
        }

        public mutating func next() async -> AsyncOpenState? {
            await next(isolation: nil)
        }
    }
}

/// Realm's `@AutoOpen`: ``AsyncOpen``, except that when the service cannot be
/// reached (or the download does not finish) within `timeout`, it opens the
/// local file as it is instead of failing.
public struct AutoOpen: AsyncSequence, Sendable {
    public typealias Element = AsyncOpenState
    public typealias Failure = Never

    private let open: AsyncOpen

    /// The states of opening `configuration` (nil for the environment's),
    /// the local file once `timeout` passes without the service's state.
    public init(configuration: Database.Configuration? = nil, timeout: Duration = .seconds(30)) {
        open = AsyncOpen(configuration: configuration, timeout: timeout, localOnTimeout: true)
    }

    /// What is opened.
    public var configuration: Database.Configuration { open.configuration }

    public func makeAsyncIterator() -> AsyncOpen.Iterator {
        open.makeAsyncIterator()
    }
}
