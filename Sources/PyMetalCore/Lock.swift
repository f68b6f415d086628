#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if !canImport(Metal)
import MetalCPU
#endif

/// A mutex for short critical sections (also used by the C ABI layer): a bare
/// pthread mutex, as several are taken on every dispatch.
public final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    public init() { pthread_mutex_init(mutex, nil) }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    @inline(__always) public func callAsFunction<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Taken before fork() and released after it (ForkSafety), not around a closure.
    public func acquire() { pthread_mutex_lock(mutex) }
    public func release() { pthread_mutex_unlock(mutex) }
    /// In a fork()'s child: unlocked, whoever held it (that thread is not in the child).
    public func reinitialize() { pthread_mutex_init(mutex, nil) }
}

/// fork(): the child has only the thread that called it. Every lock another
/// thread may hold at that moment is taken before the fork, in the order code
/// nests them (`Rank`), and released after it in both processes, so that none
/// is copied held and what they guard is consistent; then the child repairs
/// what it lacks (the threads that ran work: see CPUFork on the CPU backend).
public enum ForkSafety {
    /// Outer locks first: a stream's lock is held while it commits to the
    /// backend's queue, marks buffers and draws thread numbers.
    public enum Rank: Int { case handles, stream, backend, buffers, threads }

    private struct Entry {
        let rank: Rank
        let before: () -> Void
        let parent: () -> Void
        let child: () -> Void
    }

    nonisolated(unsafe) private static var entries: [Entry] = []
    private static let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        return mutex
    }()

    /// Adds handlers (a lock is taken in `before`, released in `parent` and,
    /// after any repair, in `child`); the first registration installs them with pthread_atfork.
    public static func register(_ rank: Rank, before: @escaping () -> Void, parent: @escaping () -> Void,
                                child: @escaping () -> Void) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if entries.isEmpty {
            pthread_atfork({ ForkSafety.prepare() }, { ForkSafety.afterInParent() }, { ForkSafety.afterInChild() })
            #if !canImport(Metal)
            entries.append(Entry(rank: .backend, before: CPUFork.prepare, parent: CPUFork.parent, child: CPUFork.child))
            #endif
        }
        entries.append(Entry(rank: rank, before: before, parent: parent, child: child))
        entries.sort { $0.rank.rawValue < $1.rank.rawValue } // stable: equal ranks in registration order
    }

    /// A lock with nothing to repair.
    public static func register(_ rank: Rank, _ lock: Lock) {
        register(rank, before: lock.acquire, parent: lock.release, child: lock.release)
    }

    /// A lock whose state a fork cannot leave half-changed for the child (a cache
    /// lookup or insert; a default device cached only once it is made): not taken
    /// before the fork (so its place among the others does not matter), made
    /// unlocked in the child.
    public static func registerLeaf(_ lock: Lock) {
        register(.threads, before: {}, parent: {}, child: lock.reinitialize)
    }

    private static func prepare() {
        pthread_mutex_lock(mutex)
        for entry in entries { entry.before() }
    }

    private static func afterInParent() {
        for entry in entries.reversed() { entry.parent() }
        pthread_mutex_unlock(mutex)
    }

    /// True in a fork()'s child. Metal has no support for a forked child: the C
    /// ABI refuses every call there (the CPU backend makes its threads again).
    nonisolated(unsafe) public private(set) static var isChild = false

    private static func afterInChild() {
        isChild = true
        for entry in entries.reversed() { entry.child() }
        pthread_mutex_unlock(mutex)
    }
}

/// A number for the calling thread, unique for the life of the process
/// (pthread ids are reused when threads end): who encoded a command buffer,
/// so that its failure is reported to that thread.
public enum ThreadID {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
    private static let lock: Lock = {
        let lock = Lock()
        ForkSafety.register(.threads, lock)
        return lock
    }()
    nonisolated(unsafe) private static var next: UInt64 = 1

    static func registerForFork() { _ = lock }

    public static var current: UInt64 {
        if let value = pthread_getspecific(key) { return UInt64(UInt(bitPattern: value)) }
        let id = lock { () -> UInt64 in
            defer { next += 1 }
            return next
        }
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: UInt(id)))
        return id
    }
}
