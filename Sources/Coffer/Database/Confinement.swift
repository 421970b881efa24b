// Confinement: where a Database may be used — the thread that opened it, or
// the actor it was opened for — and the checks that enforce it.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Where a ``Database`` and its objects may be used.
enum Confinement {
    /// Opened synchronously: only on this thread.
    case thread(pthread_t)
    /// Opened with `Database(actor:)`: only while isolated to this actor, on
    /// whatever thread its executor runs. Held weakly so that an actor that keeps
    /// its database does not keep itself alive.
    case actor(WeakActor)
    /// A frozen database: on any thread, each read under its ``FrozenLock``.
    case frozen

    /// True where the database may be used; nil when only the actor's executor
    /// can tell, which it does by stopping the program. (Even the main actor's
    /// executor is not the main thread everywhere: on Linux, `dispatchMain()`
    /// hands the main queue to other threads.)
    var allowsCurrentThread: Bool? {
        switch self {
        case .thread(let owner):
            return pthread_equal(owner, pthread_self()) != 0
        case .actor(let weak):
            return weak.actor == nil ? false : nil
        case .frozen:
            return true
        }
    }

    var misuseMessage: String {
        switch self {
        case .thread:
            return "this Database was opened on another thread; a Database, its objects and its results can be used only on the thread that opened it"
        case .actor(let weak):
            let name = weak.actor.map { String(describing: type(of: $0)) } ?? "an actor that no longer exists"
            return "this Database is isolated to \(name) and was used outside it; a Database opened with Database(actor:), its objects and its results can be used only on that actor"
        case .frozen:
            return "a frozen Database may be read from any thread"
        }
    }
}

/// An actor held weakly by a ``Confinement``.
struct WeakActor {
    weak var actor: (any Actor)?
}
