// FrozenLock: the recursive lock that serializes every read of a frozen
// Database, so that its objects, results and collections can be read from any
// thread or task at once.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A recursive lock that knows which thread holds it.
///
/// A frozen database reads one pinned C read transaction, which (with its
/// object handles and results) may be used by one thread at a time, and
/// caches handles and compiled queries in Swift state: every read takes this
/// lock first. Recursive because reads nest (a result's element reads a
/// property that reads a link). `@unchecked Sendable` because its state is a
/// pthread mutex and an owner that is written only while the mutex is held.
final class FrozenLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// The holding thread; written only under `mutex`.
    private var owner: pthread_t?
    private var depth = 0

    init() {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() {
        pthread_mutex_lock(mutex)
        owner = pthread_self()
        depth += 1
    }

    func unlock() {
        depth -= 1
        if depth == 0 { owner = nil }
        pthread_mutex_unlock(mutex)
    }

    /// True if the calling thread holds the lock. Reading `owner` without the
    /// lock is safe for this question only through the lock itself: a
    /// recursive trylock succeeds at once for the holder.
    var isHeldByCurrentThread: Bool {
        guard pthread_mutex_trylock(mutex) == 0 else { return false }
        defer { pthread_mutex_unlock(mutex) }
        return depth > 0 && owner.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }
}
