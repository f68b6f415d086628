// One encoded dispatch and how it runs: threadgroups are split into chunks
// that run in parallel on every core; within a chunk the kernel library's
// launcher runs each group's threads (as a loop, or as fibers).
import CMetalCPU
import Foundation

final class CPUDispatch: @unchecked Sendable {
    private let pipeline: CPUPipelineState?
    private let retained: [Resource] // kept alive until the command buffer completes
    private var launch = pm_launch()
    private let groupCount: UInt64
    private let threadsPerGroup: UInt64
    private let failure: (any Error)?

    static let poison: UInt32 = ProcessInfo.processInfo.environment["PYMETAL_POISON_THREADGROUP"] == "0" ? 0 : 1

    init(failure: any Error) {
        self.failure = failure
        pipeline = nil
        retained = []
        groupCount = 0
        threadsPerGroup = 0
    }

    init(pipeline: CPUPipelineState, bindings: Bindings, size: MTLSize, threadgroup: MTLSize, uniform: Bool) throws {
        self.pipeline = pipeline
        failure = nil
        let name = pipeline.function.name
        let tg = [threadgroup.width, threadgroup.height, threadgroup.depth]
        let extent = [size.width, size.height, size.depth]
        guard tg.allSatisfy({ $0 >= 1 }), extent.allSatisfy({ $0 >= 0 }) else {
            throw MTLCommandBufferError(message: "kernel '\(name)': invalid dispatch size \(extent) with threadgroup \(tg)")
        }
        let threads = tg.reduce(1, *)
        guard threads <= pipeline.maxTotalThreadsPerThreadgroup else {
            throw MTLCommandBufferError(message: "kernel '\(name)': threadgroup \(tg) has \(threads) threads; "
                + "the pipeline allows at most \(pipeline.maxTotalThreadsPerThreadgroup)")
        }
        let groups = uniform ? extent : zip(extent, tg).map { ($0 + $1 - 1) / $1 }
        let grid = zip(groups, tg).map { $0.multipliedReportingOverflow(by: $1) }
        let groupTotal = groups.reduce(UInt64(1)) { total, next in
            let product = total.multipliedReportingOverflow(by: UInt64(next))
            return product.overflow ? UInt64.max : product.partialValue
        }
        guard extent.allSatisfy({ $0 <= Int(UInt32.max) }), grid.allSatisfy({ !$0.overflow && $0.partialValue <= Int(UInt32.max) }),
              groups.allSatisfy({ $0 <= 1 << 32 }), groupTotal < 1 << 48 else {
            throw MTLCommandBufferError(message: "kernel '\(name)': dispatch of \(extent) with threadgroup \(tg) is too large")
        }
        let gridSize = uniform ? grid.map(\.partialValue) : extent
        var memory = pipeline.staticThreadgroupMemoryLength
        for length in bindings.threadgroupLengths { memory += (length + 15) / 16 * 16 }
        guard memory <= Int(PM_MAX_THREADGROUP_MEMORY) else {
            throw MTLCommandBufferError(message: "kernel '\(name)': \(memory) bytes of threadgroup memory "
                + "are over the \(PM_MAX_THREADGROUP_MEMORY)-byte limit per threadgroup")
        }
        try Self.check(bindings: bindings, against: pipeline.function.bindings, kernel: name)

        var retained: [Resource] = []
        withUnsafeMutableBytes(of: &launch.buffers) { raw in
            let slots = raw.bindMemory(to: UnsafeMutableRawPointer?.self)
            for (index, resource) in bindings.resources.enumerated() {
                guard let resource else { continue }
                slots[index] = resource.address
                retained.append(resource)
            }
        }
        withUnsafeMutableBytes(of: &launch.buffer_lengths) { raw in
            let slots = raw.bindMemory(to: UInt64.self)
            for (index, resource) in bindings.resources.enumerated() { slots[index] = UInt64(resource?.length ?? 0) }
        }
        withUnsafeMutableBytes(of: &launch.threadgroup_lengths) { raw in
            let slots = raw.bindMemory(to: UInt32.self)
            for (index, length) in bindings.threadgroupLengths.enumerated() { slots[index] = UInt32(length) }
        }
        launch.threads_per_grid = (UInt32(gridSize[0]), UInt32(gridSize[1]), UInt32(gridSize[2]))
        launch.threads_per_threadgroup = (UInt32(tg[0]), UInt32(tg[1]), UInt32(tg[2]))
        launch.threadgroups_per_grid = (UInt32(groups[0]), UInt32(groups[1]), UInt32(groups[2]))
        launch.uniform = uniform ? 1 : 0
        launch.poison_threadgroup_memory = Self.poison
        self.retained = retained
        groupCount = groupTotal
        threadsPerGroup = UInt64(threads)
    }

    /// Refuses what would make the kernel read an unbound or too-small binding.
    private static func check(bindings: Bindings, against expected: [pm_binding], kernel: String) throws {
        for binding in expected {
            let index = Int(binding.index)
            let needed = Int(binding.min_bytes)
            switch Int(binding.kind) {
            case Int(PM_BIND_BUFFER):
                guard let resource = bindings.resources[index] else {
                    throw MTLCommandBufferError(message: "kernel '\(kernel)' reads [[buffer(\(index))]] but nothing is bound at index \(index)")
                }
                guard resource.length >= needed else {
                    throw MTLCommandBufferError(message: "kernel '\(kernel)' reads \(needed) bytes from [[buffer(\(index))]] "
                        + "but only \(resource.length) bytes are bound there")
                }
            case Int(PM_BIND_THREADGROUP):
                guard bindings.threadgroupLengths[index] >= max(needed, 1) else {
                    throw MTLCommandBufferError(message: "kernel '\(kernel)' uses [[threadgroup(\(index))]] but its threadgroup "
                        + "memory length at index \(index) is \(bindings.threadgroupLengths[index]) bytes; set it "
                        + "(setThreadgroupMemoryLength / threadgroup_memory=) to at least \(max(needed, 1))")
                }
            default: break
            }
        }
    }

    /// Runs the dispatch to completion; returns the kernel's error, if any.
    func run() -> (any Error)? {
        if let failure { return failure }
        guard let pipeline, groupCount > 0 else { return nil }
        let run = pipeline.function.desc.run!
        let name = pipeline.function.name
        let total = groupCount
        let work = total * threadsPerGroup
        let chunks = (total == 1 || work < 8192) ? 1 : Int(min(total, UInt64(Platform.cpuCount * 8)))
        let errors = Lock()
        var firstError: String?
        withUnsafePointer(to: &launch) { launch in
            let body = { (chunk: Int) in
                let first = total * UInt64(chunk) / UInt64(chunks)
                let end = total * UInt64(chunk + 1) / UInt64(chunks)
                var status = pm_status()
                if run(launch, first, end, &status) != 0 {
                    let message = withUnsafeBytes(of: &status.message) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                    errors { if firstError == nil { firstError = message } }
                }
            }
            if chunks == 1 { body(0) } else { DispatchQueue.concurrentPerform(iterations: chunks, execute: body) }
        }
        if let firstError { return MTLCommandBufferError(message: "kernel '\(name)': \(firstError)") }
        return nil
    }
}
