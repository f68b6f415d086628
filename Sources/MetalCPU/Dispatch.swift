// One encoded dispatch and how it runs: the kernel library's launcher runs a
// range of threadgroups (each group's threads as a loop, or as fibers); a
// dispatch with enough work is split into chunks of groups that run on every
// core through the worker pool (pool.c).
import CMetalCPU

struct CPUDispatch {
    private let pipeline: CPUPipelineState?
    private let launch: UnsafeMutablePointer<pm_launch>? // in the command buffer's arena
    private let groupCount: UInt64
    private let threadsPerGroup: UInt64
    private let failure: (any Error)?

    static let poison: UInt32 = Toolchain.environment("PYMETAL_POISON_THREADGROUP") == "0" ? 0 : 1

    init(failure: any Error) {
        self.failure = failure
        pipeline = nil
        launch = nil
        groupCount = 0
        threadsPerGroup = 0
    }

    /// `launch` holds the encoder's bindings, and gets this dispatch's geometry;
    /// `bound` has bit i set when [[buffer(i)]] is; `threadgroupMemory` is the
    /// sum of the threadgroup memory lengths set, each rounded up to 16 bytes.
    init(pipeline: CPUPipelineState, launch: UnsafeMutablePointer<pm_launch>, bound: UInt32, threadgroupMemory: Int, size: MTLSize, threadgroup: MTLSize, uniform: Bool) throws {
        self.pipeline = pipeline
        failure = nil
        let tg = (threadgroup.width, threadgroup.height, threadgroup.depth)
        let extent = (size.width, size.height, size.depth)
        func describe(_ v: (Int, Int, Int)) -> String { "[\(v.0), \(v.1), \(v.2)]" }
        guard tg.0 >= 1, tg.1 >= 1, tg.2 >= 1, extent.0 >= 0, extent.1 >= 0, extent.2 >= 0 else {
            throw MTLCommandBufferError(message: "kernel '\(pipeline.function.name)': invalid dispatch size \(describe(extent)) "
                + "with threadgroup \(describe(tg))")
        }
        let limit = Int(UInt32.max)
        guard tg.0 <= limit, tg.1 <= limit, tg.2 <= limit, extent.0 <= limit, extent.1 <= limit, extent.2 <= limit else {
            throw MTLCommandBufferError(message: "kernel '\(pipeline.function.name)': dispatch of \(describe(extent)) "
                + "with threadgroup \(describe(tg)) is too large")
        }
        let threads = Self.product(tg.0, tg.1, tg.2)
        guard threads <= pipeline.maxTotalThreadsPerThreadgroup else {
            throw MTLCommandBufferError(message: "kernel '\(pipeline.function.name)': threadgroup \(describe(tg)) has "
                + "\(threads) threads; the pipeline allows at most \(pipeline.maxTotalThreadsPerThreadgroup)")
        }
        // Per axis: groups, and threads in the grid (groups * threadgroup when uniform), each < 2^32.
        func axis(_ n: Int, _ t: Int) -> (groups: Int, grid: Int)? {
            let groups = uniform ? n : (n + t - 1) / t
            let grid = uniform ? n * t : n
            return groups <= 1 << 32 && grid <= limit ? (groups, grid) : nil
        }
        guard let x = axis(extent.0, tg.0), let y = axis(extent.1, tg.1), let z = axis(extent.2, tg.2),
              Self.product(x.groups, y.groups, z.groups) < 1 << 48 else {
            throw MTLCommandBufferError(message: "kernel '\(pipeline.function.name)': dispatch of \(describe(extent)) "
                + "with threadgroup \(describe(tg)) is too large")
        }
        let memory = pipeline.staticThreadgroupMemoryLength + threadgroupMemory
        guard memory <= Int(PM_MAX_THREADGROUP_MEMORY) else {
            throw MTLCommandBufferError(message: "kernel '\(pipeline.function.name)': \(memory) bytes of threadgroup memory "
                + "are over the \(PM_MAX_THREADGROUP_MEMORY)-byte limit per threadgroup")
        }
        try Self.check(launch: launch, bound: bound, against: pipeline.function.bindings, kernel: pipeline.function.name)

        self.launch = launch
        launch.pointee.threads_per_grid = (UInt32(x.grid), UInt32(y.grid), UInt32(z.grid))
        launch.pointee.threads_per_threadgroup = (UInt32(tg.0), UInt32(tg.1), UInt32(tg.2))
        launch.pointee.threadgroups_per_grid = (UInt32(x.groups), UInt32(y.groups), UInt32(z.groups))
        launch.pointee.uniform = uniform ? 1 : 0
        groupCount = UInt64(x.groups * y.groups * z.groups)
        threadsPerGroup = UInt64(threads)
    }

    /// a * b * c, or Int.max when that overflows (for non-negative factors).
    private static func product(_ a: Int, _ b: Int, _ c: Int) -> Int {
        let ab = a.multipliedReportingOverflow(by: b)
        let abc = ab.partialValue.multipliedReportingOverflow(by: c)
        return ab.overflow || abc.overflow ? Int.max : abc.partialValue
    }

    /// Refuses what would make the kernel read an unbound or too-small binding.
    private static func check(launch: UnsafeMutablePointer<pm_launch>, bound: UInt32, against expected: [pm_binding], kernel: String) throws {
        for binding in expected {
            let index = Int(binding.index)
            let needed = Int(binding.min_bytes)
            switch Int(binding.kind) {
            case Int(PM_BIND_BUFFER):
                guard bound & (1 << UInt32(index)) != 0 else {
                    throw MTLCommandBufferError(message: "kernel '\(kernel)' reads [[buffer(\(index))]] but nothing is bound at index \(index)")
                }
                let length = withUnsafeBytes(of: &launch.pointee.buffer_lengths) { Int($0.load(fromByteOffset: index * 8, as: UInt64.self)) }
                guard length >= needed else {
                    throw MTLCommandBufferError(message: "kernel '\(kernel)' reads \(needed) bytes from [[buffer(\(index))]] "
                        + "but only \(length) bytes are bound there")
                }
            case Int(PM_BIND_THREADGROUP):
                let length = withUnsafeBytes(of: &launch.pointee.threadgroup_lengths) { Int($0.load(fromByteOffset: index * 4, as: UInt32.self)) }
                guard length >= max(needed, 1) else {
                    throw MTLCommandBufferError(message: "kernel '\(kernel)' uses [[threadgroup(\(index))]] but its threadgroup "
                        + "memory length at index \(index) is \(length) bytes; set it "
                        + "(setThreadgroupMemoryLength / threadgroup_memory=) to at least \(max(needed, 1))")
                }
            default: break
            }
        }
    }

    /// A dispatch's work is its time on one core, in picoseconds: its threads times
    /// the pipeline's measured time per thread (its last runs: a reduction's
    /// thread sums thousands of elements, which its thread count does not show),
    /// or before its first run, a plain loop kernel's (about half a nanosecond) or
    /// a fiber kernel's (10-20x more).
    static func picosPerThread(measured: UInt64, fibers: Bool) -> UInt64 {
        measured > 0 ? measured : fibers ? 16 * 500 : 500
    }

    /// Work below which a dispatch runs on one core: splitting costs a few
    /// microseconds (publishing the job, the last chunk's wait). Each chunk also
    /// gets at least half this much, to repay its own start.
    static let splitPicos: UInt64 = 8_000_000

    /// Work from which a dispatch wakes sleeping workers. Below, a split job goes
    /// only to workers still spinning after their last job (back-to-back
    /// dispatches), and runs whole on the caller when all sleep: waking one costs
    /// a system call and its wake-up (tens of microseconds, far more on a loaded
    /// machine, where the caller then waits for the chunk the late worker took).
    static let wakePicos: UInt64 = 130_000_000

    /// How to run `groups` threadgroups of `threadsPerGroup` threads taking
    /// `picosPerThread` each: in how many chunks, and whether to wake sleeping workers.
    static func split(groups: UInt64, threadsPerGroup: UInt64, picosPerThread: UInt64) -> (chunks: UInt32, wake: Bool) {
        let (product, overflow) = (groups * threadsPerGroup).multipliedReportingOverflow(by: picosPerThread) // threads < 2^48
        let work = overflow ? UInt64.max : product
        guard groups > 1, work >= splitPicos, workers > 0 else { return (1, false) }
        // Several chunks per core balance uneven groups and a core taken by another process.
        let cores = UInt64(workers + 1)
        return (UInt32(min(groups, cores * 4, max(cores, work / (splitPicos / 2)))), work >= wakePicos)
    }

    /// The pool's threads, started by the first dispatch large enough to split.
    private static let workers = Int(pm_pool_workers())

    /// Runs the dispatch to completion as part of `job` (guard.c: a fault,
    /// timeout or interrupt ends it); returns the kernel's error, if any.
    func run(in job: OpaquePointer?) -> (any Error)? {
        if let failure { return failure }
        guard let pipeline, let launch, groupCount > 0 else { return nil }
        let desc = pipeline.function.desc
        let fibers = desc.mode != PM_KERNEL_LOOP
        let threads = groupCount * threadsPerGroup
        let plan = Self.split(groups: groupCount, threadsPerGroup: threadsPerGroup,
                              picosPerThread: Self.picosPerThread(measured: pipeline.picosPerThread.load(ordering: .relaxed), fibers: fibers))
        var status = pm_status()
        var alone: UInt64 = 0
        let failed = pm_pool_run(job, desc.run!, launch, groupCount, plan.chunks, plan.wake ? 1 : 0, &alone, &status)
        if alone > 0, failed == 0 { // the mean of the last measure and this one (one preempted run does not decide
            // alone; a failed run's time says nothing of the kernel's)
            let now = max(1, min(alone, UInt64.max / 1000 / 2) * 1000 / threads), last = pipeline.picosPerThread.load(ordering: .relaxed)
            pipeline.picosPerThread.store(last == 0 ? now : (last + now) / 2, ordering: .relaxed)
        }
        guard failed != 0 else { return nil }
        let message = withUnsafeBytes(of: &status.message) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        return MTLCommandBufferError(message: "kernel '\(pipeline.function.name)': \(message)")
    }
}
