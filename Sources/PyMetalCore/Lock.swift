import Foundation

/// A mutex for short critical sections (also used by the C ABI layer).
public final class Lock: @unchecked Sendable {
    private let mutex = NSLock()
    public init() {}
    @inline(__always) public func callAsFunction<T>(_ body: () throws -> T) rethrows -> T {
        mutex.lock()
        defer { mutex.unlock() }
        return try body()
    }
}
