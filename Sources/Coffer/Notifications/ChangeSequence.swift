// ChangeSequence: the AsyncSequence of changes (`changes`) or frozen values
// (`values`) of an observed object or collection.

/// The changes, or the frozen values, of an observed database value as an
/// `AsyncSequence`, for `for await` loops:
///
/// ```swift
/// for await change in dogs.changes {
///     if case .update(let dogs, _, let insertions, _) = change { print(dogs.count, insertions) }
/// }
/// for await snapshot in dogs.values {   // frozen Results, one per change
///     print(snapshot.count)
/// }
/// ```
///
/// Observing begins when the sequence is made and ends when the task
/// iterating it is cancelled or stops iterating (the observer's token is
/// then invalidated). Values in it are frozen at the version of their change
/// (see ``Database/freeze()``), so they can be read on any thread; a change
/// seen while the loop was busy waits for it, none is lost.
public struct ChangeSequence<Element>: AsyncSequence {
    let stream: AsyncStream<Handoff<Element>>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator())
    }

    /// Gives the changes in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Handoff<Element>>.AsyncIterator

        /// The next change; nil once observing ended.
        public mutating func next() async -> Element? {
            await base.next()?.value
        }
    }
}
