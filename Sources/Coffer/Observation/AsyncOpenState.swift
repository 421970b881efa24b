// AsyncOpenState and OpenProgress: the states a long open goes through, as
// Realm's AsyncOpenState.

import Foundation

/// A state of a database being opened by ``AsyncOpen``, as Realm's
/// `AsyncOpenState`.
public enum AsyncOpenState {
    /// The open has begun; nothing is known yet.
    case connecting
    /// Waiting for a user to log in: for synchronized databases, which are
    /// not there yet; a local open never reports it.
    case waitingForUser
    /// How far a long step of the open is (see ``OpenProgress``).
    case progress(OpenProgress)
    /// The database, opened isolated to the actor iterating the states (or
    /// confined to its thread when it is isolated to none).
    case open(Database)
    /// The open failed with this error (a ``CofferError``, or the error the
    /// migration block threw).
    case error(any Swift.Error)
}

/// How far one step of an open is: a seed file's copy, the compact-on-launch
/// check, a compaction or a migration.
///
/// Each step that runs is reported first with `fractionCompleted` 0 and last
/// with 1; in between the fraction only grows, about once per percent at most.
/// A seed copy and a compaction count bytes; a migration counts the objects
/// the file had before it, as ``Migration/enumerateObjects(ofType:_:)``
/// visits them.
public struct OpenProgress: Sendable, Equatable, CustomStringConvertible {
    /// A step of an open that can take long, in the order they run.
    public enum Step: String, Sendable {
        /// Copying ``Database/Configuration/seedFilePath`` to the file.
        case seedCopy
        /// Measuring the file and asking ``Database/Configuration/shouldCompactOnLaunch``.
        case compactionCheck
        /// Compacting the file, as ``Database/Configuration/shouldCompactOnLaunch`` asked.
        case compaction
        /// Running ``Database/Configuration/migrationBlock``.
        case migration
        /// Downloading the service's state before a synced database opens
        /// (counts changeset bytes, see ``SyncSession/Progress``).
        case download
    }

    /// The step.
    public let step: Step
    /// How much of it is done, from 0 to 1.
    public let fractionCompleted: Double

    /// `seedCopy 0.0`, `migration 1.0`.
    public var description: String { "\(step.rawValue) \(fractionCompleted)" }
}

/// Told each report of an open's progress, on the opening thread; false
/// cancels the open (`CofferError.Code.cancelled`, the file left as it was).
typealias OpenProgressHandler = (OpenProgress) -> Bool
