// What the UI observation tests share: a counter of the changes Observation
// reports for what a closure reads, re-armed after each one.

import Foundation
import Observation

/// Counts how often Observation reports that something `read` reads
/// changed, tracking again after each report, so that two reports of one
/// commit count two.
///
/// `@unchecked Sendable`: Observation's `onChange` must be `@Sendable`, but
/// it runs synchronously on the thread making the change, which in these
/// tests is the test's own thread, the only one touching `count`.
final class ChangeCounter: @unchecked Sendable {
    private(set) var count = 0
    private let read: () -> Void

    init(_ read: @escaping () -> Void) {
        self.read = read
        arm()
    }

    private func arm() {
        withObservationTracking { read() } onChange: { [self] in
            count += 1
            arm()
        }
    }
}
