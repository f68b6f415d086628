// The few OS calls MetalCPU needs, for glibc and Darwin alike.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

enum Platform {
    /// Apple Silicon's page size: no-copy buffers must be aligned to it on a Mac,
    /// so MetalCPU refuses anything less here too.
    static let metalPageSize = 16384

    static var cpuCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    static var physicalMemory: UInt64 { ProcessInfo.processInfo.physicalMemory }

    /// Seconds on a monotonic clock (stands in for the GPU's timestamps).
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// Large buffers are backed by huge pages where the kernel offers them (as
    /// NumPy does for its arrays): GPU-style strided access patterns, which a GPU
    /// coalesces, otherwise spend their time in TLB misses on a CPU.
    static func alignedAllocate(_ length: Int, alignment: Int) -> UnsafeMutableRawPointer? {
        let hugePage = 2 << 20
        let huge = length >= 2 * hugePage
        var pointer: UnsafeMutableRawPointer?
        guard posix_memalign(&pointer, huge ? max(alignment, hugePage) : alignment, length) == 0 else { return nil }
        #if os(Linux)
        if huge, let pointer { _ = madvise(pointer, length, 14 /* MADV_HUGEPAGE */) }
        #endif
        return pointer
    }

    static func cpuName() -> String {
        guard let line = cpuInfo(["model name"]), let colon = line.firstIndex(of: ":") else { return "CPU" }
        return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }

    /// The first /proc/cpuinfo line starting with one of `prefixes` (nil elsewhere).
    static func cpuInfo(_ prefixes: [String]) -> String? {
        #if os(Linux)
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = info.split(separator: "\n").first(where: { line in prefixes.contains { line.hasPrefix($0) } }) {
            return String(line)
        }
        #endif
        return nil
    }
}

/// A mutex for short critical sections.
final class Lock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    @inline(__always) func callAsFunction<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}
