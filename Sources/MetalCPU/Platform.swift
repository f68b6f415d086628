// The few OS calls MetalCPU needs, for glibc and Darwin alike.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CMetalCPU

enum Platform {
    /// Apple Silicon's page size: no-copy buffers must be aligned to it on a Mac,
    /// so MetalCPU refuses anything less here too.
    static let metalPageSize = 16384

    static var cpuCount: Int { Int(pm_host_cpu_count()) }

    static var physicalMemory: UInt64 {
        UInt64(max(0, sysconf(Int32(_SC_PHYS_PAGES)))) * UInt64(max(0, sysconf(Int32(_SC_PAGESIZE))))
    }

    /// The memory this process may use: physical memory, or less where its
    /// cgroup says so (a container, systemd's MemoryMax=, a CI runner). Past a
    /// cgroup's limit the kernel kills the process instead of failing an
    /// allocation, so MetalCPU sizes its limits from this. Read once.
    static let memoryLimit: UInt64 = min(physicalMemory, cgroupMemoryLimit() ?? .max)

    /// The lowest memory limit of this process's cgroups: cgroup v2's
    /// memory.max of its cgroup and every parent, v1's memory controller
    /// (hierarchical_memory_limit in memory.stat covers the parents). Nil where
    /// none is set. PYMETAL_CGROUP_ROOT (for tests) replaces /sys/fs/cgroup.
    static func cgroupMemoryLimit() -> UInt64? {
        #if os(Linux)
        let root = getenv("PYMETAL_CGROUP_ROOT").map { String(cString: $0) } ?? "/sys/fs/cgroup"
        var limits: [UInt64] = []
        for line in lines(of: "/proc/self/cgroup") {
            // hierarchy-ID:controllers:path
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = fields[2].split(separator: "/").map(String.init)
            if fields[0] == "0" && fields[1].isEmpty {
                for depth in (0...path.count).reversed() {
                    let folder = ([root] + path.prefix(depth)).joined(separator: "/")
                    if let limit = lines(of: folder + "/memory.max").first.flatMap({ UInt64($0) }) { limits.append(limit) }
                }
            } else if fields[1].split(separator: ",").contains("memory") {
                // Inside a container the controller's mount is often the process's own cgroup.
                for folder in [([root, "memory"] + path).joined(separator: "/"), root + "/memory"] {
                    let stat = lines(of: folder + "/memory.stat").first { $0.hasPrefix("hierarchical_memory_limit ") }
                    if let limit = stat.flatMap({ UInt64($0.dropFirst(26)) })
                        ?? lines(of: folder + "/memory.limit_in_bytes").first.flatMap({ UInt64($0) }) {
                        limits.append(limit)
                        break
                    }
                }
            }
        }
        return limits.min()
        #else
        return nil
        #endif
    }

    /// The lines of a (small) text file; none if it cannot be read.
    static func lines(of path: String) -> [String] {
        guard let file = fopen(path, "r") else { return [] }
        defer { fclose(file) }
        var result: [String] = []
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = String(cString: buffer)
            result.append(line.hasSuffix("\n") ? String(line.dropLast()) : line)
        }
        return result
    }

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
        return String(line[line.index(after: colon)...].trimmed)
    }

    /// The first /proc/cpuinfo line starting with one of `prefixes` (nil elsewhere).
    static func cpuInfo(_ prefixes: [String]) -> String? {
        #if os(Linux)
        return lines(of: "/proc/cpuinfo").first { line in prefixes.contains { line.hasPrefix($0) } }
        #else
        return nil
        #endif
    }
}

/// A mutex for short critical sections.
final class Lock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    /// In a fork()'s child: unlocked, whoever held it (that thread is not in the child).
    func reinitialize() { pthread_mutex_init(&mutex, nil) }
    @inline(__always) func callAsFunction<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}

/// A mutex with a condition variable: what Foundation's NSCondition is, on pthreads.
final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() { initialize() }

    /// In a fork()'s child: unlocked and with no waiters (their threads are not in the child).
    func initialize() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if os(Linux)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC) // timed waits immune to clock changes
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func signal() { pthread_cond_signal(condition) }
    func broadcast() { pthread_cond_broadcast(condition) }
    /// Waits (holding the lock) until signalled; may wake spuriously, as NSCondition.
    func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits (holding the lock) until signalled or `seconds` have passed.
    func wait(seconds: Double) {
        let nanoseconds = Int(seconds * 1e9)
        #if os(Linux)
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let total = deadline.tv_nsec + nanoseconds % 1_000_000_000
        deadline.tv_sec += nanoseconds / 1_000_000_000 + total / 1_000_000_000
        deadline.tv_nsec = total % 1_000_000_000
        pthread_cond_timedwait(condition, mutex, &deadline)
        #else
        var relative = timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
        pthread_cond_timedwait_relative_np(condition, mutex, &relative)
        #endif
    }
}

extension Platform {
    /// Runs `body` on a new detached thread (Foundation's Thread, on pthreads);
    /// false if the system refuses one.
    static func startThread(_ body: @escaping () -> Void) -> Bool {
        final class Body {
            let run: () -> Void
            init(_ run: @escaping () -> Void) { self.run = run }
        }
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let status = pthread_create(&thread, nil, { raw in
            let context: UnsafeMutableRawPointer? = raw  // optional on Linux, not on Darwin
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return false
        }
        #if canImport(Darwin)
        pthread_detach(thread!)
        #else
        pthread_detach(thread)
        #endif
        return true
    }
}

extension StringProtocol {
    /// Without leading and trailing whitespace (Foundation's trimmingCharacters(in:), from the standard library).
    var trimmed: SubSequence {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
