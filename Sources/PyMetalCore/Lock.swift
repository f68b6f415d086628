import Foundation

/// A mutex for short critical sections.
final class Lock: @unchecked Sendable {
    private let mutex = NSLock()
    @inline(__always) func callAsFunction<T>(_ body: () throws -> T) rethrows -> T {
        mutex.lock()
        defer { mutex.unlock() }
        return try body()
    }
}
