#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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
    private static let lock = Lock()
    nonisolated(unsafe) private static var next: UInt64 = 1

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
