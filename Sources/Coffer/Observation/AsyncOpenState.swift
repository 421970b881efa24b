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
    /// A step of the open began or ended (see ``OpenProgress``).
    case progress(OpenProgress)
    /// The database, opened isolated to the actor iterating the states (or
    /// confined to its thread when it is isolated to none).
    case open(Database)
    /// The open failed with this error (a ``CofferError``, or the error the
    /// migration block threw).
    case error(any Swift.Error)
}

/// How far one step of an open is: a seed file's copy, a migration or a
/// compaction.
///
/// The core reports no progress inside these steps, so each is reported when
/// it begins (`fractionCompleted` 0) and when it ends (1).
public struct OpenProgress: Sendable, Equatable, CustomStringConvertible {
    /// A step of an open that can take long.
    public enum Step: String, Sendable {
        /// Copying ``Database/Configuration/seedFilePath`` to the file.
        case seedCopy
        /// Running ``Database/Configuration/migrationBlock``.
        case migration
        /// Compacting the file, as ``Database/Configuration/shouldCompactOnLaunch`` asked.
        case compaction
    }

    /// The step.
    public let step: Step
    /// How much of it is done, from 0 to 1.
    public let fractionCompleted: Double

    /// `seedCopy 0.0`, `migration 1.0`.
    public var description: String { "\(step.rawValue) \(fractionCompleted)" }
}
