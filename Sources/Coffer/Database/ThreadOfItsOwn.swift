// ThreadOfItsOwn: blocking work (copying, migrating, compacting a file) run
// on a new thread, so that it never holds a thread of Swift's cooperative
// pool, which has only as many threads as the machine has cores.

import Foundation

/// Starts `body` on a new thread named `name` and returns at once.
func startThreadOfItsOwn(named name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.name = name
    thread.start()
}

/// Runs `body` on a new thread named `name` and returns what it returns or
/// throws, suspending the caller meanwhile.
func onThreadOfItsOwn<T: Sendable>(named name: String,
                                   _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        startThreadOfItsOwn(named: name) {
            continuation.resume(with: Result { try body() })
        }
    }
}
