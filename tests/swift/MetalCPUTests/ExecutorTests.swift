import CMetalCPU
import Foundation
import XCTest
@testable import MetalCPU

/// The executor: splitting a dispatch over the worker pool, command buffers
/// from several threads, work nobody waits for, and idle threads sleeping.
final class ExecutorTests: XCTestCase {
    let h = Harness()

    static let source = """
    #include <metal_stdlib>
    kernel void add(device const float* a [[buffer(0)]], device const float* b [[buffer(1)]],
                    device float* o [[buffer(2)]], uint i [[thread_position_in_grid]]) {
        o[i] = a[i] + b[i];
    }
    // Fibers: a barrier; each thread writes its group's sum of (lid + 1) plus its global id.
    kernel void sums(device uint* o [[buffer(0)]], uint lid [[thread_position_in_threadgroup]],
                     uint gid [[thread_position_in_grid]], uint n [[threads_per_threadgroup]]) {
        threadgroup atomic_uint total;
        if (lid == 0) atomic_store_explicit(&total, 0u, memory_order_relaxed);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        atomic_fetch_add_explicit(&total, lid + 1, memory_order_relaxed);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        o[gid] = atomic_load_explicit(&total, memory_order_relaxed) * 100000u + gid;
    }
    // One thread of one group skips the barrier: the runtime reports it.
    kernel void diverge(device uint* o [[buffer(0)]], uint lid [[thread_position_in_threadgroup]],
                        uint group [[threadgroup_position_in_grid]]) {
        // group 37's second simdgroup waits at another barrier than its first: a deadlock on a
        // GPU, an error in every mode (a thread that returns early counts as arrived)
        if (group == 37 && lid >= 32) { threadgroup_barrier(mem_flags::mem_none); o[group] = 2; return; }
        threadgroup_barrier(mem_flags::mem_none);
        o[group] = 1;
    }
    """

    func testSplitMatchesAroundTheThresholds() throws {
        let library = try h.library(Self.source)
        let add = try h.device.makeComputePipelineState(function: XCTUnwrap(library.makeFunction(name: "add")))
        let loop = Int(CPUDispatch.splitPicos / CPUDispatch.picosPerThread(measured: 0, fibers: false))
        // Around the threshold, non-uniform last groups, and large enough for every chunk count.
        for n in [loop - 1, loop, loop + 1, 2 * loop - 1, 64 * 1024 + 3, 1_000_003] {
            let a = (0..<n).map { Float($0 % 1000) * 0.5 }
            let b = (0..<n).map { Float($0 % 777) }
            let out = h.buffer(count: n * 4)
            for group in [256, 100, 1024] {
                memset(out.contents(), 0xFF, n * 4)
                let done = h.run(add, buffers: [h.buffer(a), h.buffer(b), out], grid: MTLSize(width: n, height: 1, depth: 1),
                                 group: MTLSize(width: group, height: 1, depth: 1))
                XCTAssertEqual(done.status, .completed, "\(String(describing: done.error))")
                let result = read(out, as: Float.self, count: n)
                let wrong = (0..<n).first { result[$0] != a[$0] + b[$0] }
                XCTAssertNil(wrong, "n \(n), threadgroup \(group): first wrong element \(wrong ?? -1)")
            }
        }
    }

    func testSplitOfFiberKernels() throws {
        let library = try h.library(Self.source)
        let sums = try h.device.makeComputePipelineState(function: XCTUnwrap(library.makeFunction(name: "sums")))
        let threshold = Int(CPUDispatch.splitPicos / CPUDispatch.picosPerThread(measured: 0, fibers: true))
        for (groups, size) in [(threshold / 64 - 1, 64), (threshold / 64, 64), (threshold / 64 + 1, 64), (37, 100), (300, 96)] {
            let out = h.buffer(count: groups * size * 4)
            let done = h.run(sums, buffers: [out], grid: MTLSize(width: groups, height: 1, depth: 1),
                             group: MTLSize(width: size, height: 1, depth: 1), uniform: true)
            XCTAssertEqual(done.status, .completed, "\(String(describing: done.error))")
            let result = read(out, as: UInt32.self, count: groups * size)
            let total = UInt32(size * (size + 1) / 2)
            XCTAssertNil((0..<groups * size).first { result[$0] != total * 100000 + UInt32($0) }, "\(groups) groups of \(size)")
        }
    }

    func testChunkCounts() {
        let loop = CPUDispatch.picosPerThread(measured: 0, fibers: false), fiber = CPUDispatch.picosPerThread(measured: 0, fibers: true)
        let threads = CPUDispatch.splitPicos / loop
        XCTAssertEqual(CPUDispatch.split(groups: threads / 256 - 1, threadsPerGroup: 256, picosPerThread: loop).chunks, 1)
        XCTAssertEqual(CPUDispatch.split(groups: 1, threadsPerGroup: 1024, picosPerThread: fiber).chunks, 1, "one group cannot be split")
        let many = CPUDispatch.split(groups: 1_000_000, threadsPerGroup: 1, picosPerThread: loop)
        XCTAssertEqual(many.chunks > 1, pm_pool_workers() > 0)
        XCTAssertEqual(many.wake, pm_pool_workers() > 0, "a million loop threads wake the workers")
        for groups: UInt64 in [2, 3, 64, 4097, 1 << 20] {
            let chunks = CPUDispatch.split(groups: groups, threadsPerGroup: 1024, picosPerThread: fiber).chunks
            XCTAssertTrue(chunks >= 1 && UInt64(chunks) <= groups, "\(chunks) chunks of \(groups) groups")
        }
        // Few threads that each take long (a reduction's): split and wake, as their time says.
        let heavy = CPUDispatch.split(groups: 4, threadsPerGroup: 256, picosPerThread: 2_000_000)
        XCTAssertEqual(heavy.chunks > 1, pm_pool_workers() > 0)
        XCTAssertEqual(heavy.wake, pm_pool_workers() > 0)
        XCTAssertFalse(CPUDispatch.split(groups: 4, threadsPerGroup: 256, picosPerThread: loop).wake)
        // No overflow at the largest dispatch and cost
        XCTAssertLessThanOrEqual(UInt64(CPUDispatch.split(groups: 1 << 40, threadsPerGroup: 1024, picosPerThread: .max).chunks), 1 << 40)
    }

    /// Each run measures its pipeline's time per thread on one core, which decides the next split.
    func testPipelineCostIsMeasured() throws {
        let library = try h.library(Self.source)
        let add = try h.device.makeComputePipelineState(function: XCTUnwrap(library.makeFunction(name: "add")))
        guard let pipeline = add as? CPUPipelineState else { return XCTFail("not a CPU pipeline") }
        XCTAssertEqual(pipeline.picosPerThread.load(ordering: .relaxed), 0, "not yet run")
        let n = 4096
        let done = h.run(add, buffers: [h.buffer(count: n * 4), h.buffer(count: n * 4), h.buffer(count: n * 4)],
                         grid: MTLSize(width: n, height: 1, depth: 1), group: MTLSize(width: 256, height: 1, depth: 1))
        XCTAssertEqual(done.status, .completed)
        XCTAssertGreaterThan(pipeline.picosPerThread.load(ordering: .relaxed), 0)
    }

    func testErrorInOneChunkIsReported() throws {
        let library = try h.library(Self.source)
        let diverge = try h.device.makeComputePipelineState(function: XCTUnwrap(library.makeFunction(name: "diverge")))
        let out = h.buffer(count: 64 * 4)
        XCTAssertGreaterThan(CPUDispatch.split(groups: 64, threadsPerGroup: 64,
                                              picosPerThread: CPUDispatch.picosPerThread(measured: 0, fibers: true)).chunks, 1,
                             "the dispatch is split")
        let done = h.run(diverge, buffers: [out], grid: MTLSize(width: 64, height: 1, depth: 1),
                         group: MTLSize(width: 64, height: 1, depth: 1), uniform: true)
        XCTAssertEqual(done.status, .error)
        let message = "\(done.error.map { "\($0)" } ?? "")"
        XCTAssertTrue(message.contains("diverge") && message.contains("37"), message)
    }

    /// Command buffers committed from several threads to one queue run in commit order.
    func testCommandBuffersFromSeveralThreadsRunInOrder() throws {
        let add = try h.pipeline(Self.source, "add")
        let n = 40_000 // split over the pool
        let a = h.buffer([Float](repeating: 1, count: n)), b = h.buffer([Float](repeating: 2, count: n))
        final class Log: @unchecked Sendable {
            let lock = NSLock()
            var committed: [Int] = [], completed: [Int] = []
        }
        let log = Log()
        let threads = 4, perThread = 25
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            var mine: [any MTLCommandBuffer] = []
            for k in 0..<perThread {
                let id = t * 1000 + k
                let out = self.h.buffer(count: n * 4)
                let commandBuffer = self.h.queue.makeCommandBuffer()!
                let encoder = commandBuffer.makeComputeCommandEncoder()!
                encoder.setComputePipelineState(add)
                for (index, buffer) in [a, b, out].enumerated() { encoder.setBuffer(buffer, offset: 0, index: index) }
                encoder.dispatchThreads(MTLSize(width: n, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: 256, height: 1, depth: 1))
                encoder.endEncoding()
                commandBuffer.addCompletedHandler { _ in
                    XCTAssertEqual(read(out, as: Float.self, count: n).first { $0 != 3 }, nil)
                    log.lock.lock(); log.completed.append(id); log.lock.unlock()
                }
                log.lock.lock(); log.committed.append(id); commandBuffer.commit(); log.lock.unlock()
                mine.append(commandBuffer)
                if k % 3 == 0 { commandBuffer.waitUntilCompleted() } // waiters and the background runner both run work
            }
            for commandBuffer in mine {
                commandBuffer.waitUntilCompleted()
                XCTAssertEqual(commandBuffer.status, .completed)
            }
        }
        XCTAssertEqual(log.completed, log.committed)
    }

    /// Work that nobody waits for still runs (the background runner), and its handler is called.
    func testCommittedWorkRunsWithoutAWaiter() throws {
        let add = try h.pipeline(Self.source, "add")
        let out = h.buffer(count: 4 * 4)
        let done = expectation(description: "completed without waitUntilCompleted")
        let commandBuffer = h.queue.makeCommandBuffer()!
        let encoder = commandBuffer.makeComputeCommandEncoder()!
        encoder.setComputePipelineState(add)
        for (index, buffer) in [h.buffer([Float](repeating: 1, count: 4)), h.buffer([Float](repeating: 2, count: 4)), out].enumerated() {
            encoder.setBuffer(buffer, offset: 0, index: index)
        }
        encoder.dispatchThreads(MTLSize(width: 4, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: 4, height: 1, depth: 1))
        encoder.endEncoding()
        commandBuffer.addCompletedHandler { buffer in
            XCTAssertEqual(buffer.status, .completed)
            done.fulfill()
        }
        commandBuffer.commit()
        wait(for: [done], timeout: 10)
        XCTAssertEqual(read(out, as: Float.self, count: 4), [3, 3, 3, 3])
    }

    /// After the work is done, the pool's workers and the background runner
    /// sleep: half a second of idling costs (almost) no CPU time.
    func testIdleThreadsSleep() throws {
        let add = try h.pipeline(Self.source, "add")
        let n = 1 << 20
        let buffers = [h.buffer(count: n * 4), h.buffer(count: n * 4), h.buffer(count: n * 4)]
        h.run(add, buffers: buffers, grid: MTLSize(width: n, height: 1, depth: 1), group: MTLSize(width: 256, height: 1, depth: 1))
        try testCommittedWorkRunsWithoutAWaiter() // the background runner has run too
        usleep(100_000) // the workers' spin, the runner's and the watchdog's last ticks (guard.c) end well within this
        let before = Self.cpuTime()
        let wakeups = Self.metalCPUWakeups()
        usleep(500_000)
        let used = Self.cpuTime() - before
        XCTAssertLessThan(used, 0.02, "the process used \(used) s of CPU while idle")
        #if os(Linux)
        XCTAssertGreaterThan(wakeups.threads, 1, "the pool's workers and the runner are found by name")
        XCTAssertEqual(Self.metalCPUWakeups().switches, wakeups.switches, "a MetalCPU thread woke up while nothing was queued")
        #endif
    }

    /// MetalCPU's threads (named "MetalCPU ...") and their voluntary context switches so far.
    static func metalCPUWakeups() -> (threads: Int, switches: Int) {
        var threads = 0, switches = 0
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8), name.hasPrefix("MetalCPU"),
                  let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
                  let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) else { continue }
            threads += 1
            switches += count
        }
        return (threads, switches)
    }

    /// User + system CPU time of the whole process, in seconds.
    static func cpuTime() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) * 1e-6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
