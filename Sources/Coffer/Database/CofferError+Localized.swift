// CofferError as a LocalizedError, so that `error.localizedDescription` (what
// Realm code prints) carries the C core's message on every platform.

import Foundation

extension CofferError: LocalizedError {
    /// The error's ``description``: its code's summary and the message naming
    /// the class, property, value or file at fault.
    public var errorDescription: String? { description }
}
