// A command queue with one open command buffer: dispatches are encoded into
// it and it is committed when the host needs results, when a batch is full,
// or on an explicit commit. Thread-safe.
#if canImport(Metal)
import Metal
#else
import MetalCPU
#endif

public struct Argument {
    public enum Value {
        case buffer(Buffer, offset: Int)
        case bytes(UnsafeRawPointer, length: Int) // copied when encoded
        case threadgroupMemory(length: Int)
    }
    public let index: Int
    public let value: Value
    /// A buffer argument's exact byte length from its offset (0: to the buffer's
    /// end; `empty`: none, an empty array), for the CPU backend's shader
    /// validation; Metal sees the whole buffer.
    public let length: Int
    public static let empty = -1
    public init(index: Int, _ value: Value, length: Int = 0) {
        self.index = index
        self.value = value
        self.length = length
    }
}

public final class Stream: @unchecked Sendable {
    /// Dispatches per command buffer before it is committed on its own.
    public static let batchSize = 64
    /// Metal's binding model: [[buffer(0...30)]]; setBytes takes 1...4096 bytes.
    public static let maxBindings = 31
    public static let maxBytes = 4096
    /// Threadgroup memory lengths are multiples of 16 bytes (setThreadgroupMemoryLength).
    static let threadgroupMemoryAlignment = 16

    /// One thread's command buffer being encoded. Each thread encodes into its
    /// own, so that a command that fails when it runs (which makes the rest of
    /// its command buffer not run, on Metal as on MetalCPU) takes down only
    /// work of the thread that encoded it, and is reported to that thread.
    private final class Open {
        let owner: UInt64
        let serial: UInt64 // which command buffer of the stream (an object's address can be reused once it is freed)
        let commandBuffer: any MTLCommandBuffer
        let encoder: any MTLComputeCommandEncoder
        var count = 0
        var boundIndices: UInt32 = 0 // bit i: [[buffer(i)]] was set by the last dispatch
        /// The buffers each dispatch binds and whether it may write them (dispatch i's are
        /// uses[ends[i - 1]..<ends[i]]): when the command buffer has run, failed work marks
        /// what it may have written, and other work passes its inputs' errors to its outputs.
        var uses: [(buffer: Buffer, access: BufferAccess)] = []
        var ends: [Int] = []
        init(owner: UInt64, serial: UInt64, commandBuffer: any MTLCommandBuffer, encoder: any MTLComputeCommandEncoder) {
            self.owner = owner
            self.serial = serial
            self.commandBuffer = commandBuffer
            self.encoder = encoder
            uses.reserveCapacity(Stream.batchSize * 3) // room for a batch of three-array kernels: no regrowth
            ends.reserveCapacity(Stream.batchSize)
        }
    }

    private let queue: any MTLCommandQueue
    private let device: Device
    private let lock = Lock()
    private var open: [Open] = []  // in the order they were made
    private var inFlight: [Open] = [] // committed, in order, until their results are sorted out
    /// Failed work not yet reported, by the thread that encoded it (and its command buffer's serial).
    private var failures: [UInt64: [(serial: UInt64, message: String)]] = [:]
    private var serials: UInt64 = 0
    private var lastGPUTime: Double = 0

    init(queue: any MTLCommandQueue, device: Device) {
        self.queue = queue
        self.device = device
        // Locks taken under this one register now, not at their first use under
        // it: registering takes ForkSafety's lock, which fork() holds while it takes this one.
        Buffer.registerForFork()
        ThreadID.registerForFork()
        Library.registerForFork()
        ForkSafety.register(.stream, before: { [weak self] in self?.lock.acquire() },
                            parent: { [weak self] in self?.lock.release() },
                            child: { [weak self] in self?.afterForkInChild() })
    }

    /// In a fork()'s child (the lock held since before it): the command buffers
    /// work stays usable (the backend fails the one that was running, whose
    /// writes the child has only in part: routing poisons what it may have written).
    private func afterForkInChild() {
        #if !canImport(Metal)
        for work in open + inFlight { CPUFork.repair(work.commandBuffer) }
        #endif
        lock.release()
    }

    public var gpuTime: Double { lock { lastGPUTime } }

    /// Encodes one dispatch: `size` counts threads (like dispatchThreads) or,
    /// with `byGroups`, threadgroups (like dispatchThreadgroups).
    public func dispatch(_ kernel: Kernel, arguments: [Argument], size: [Int], threadgroup: [Int]?, byGroups: Bool) throws {
        let extent = try Self.dimensions(size, "size")
        let group = try threadgroup.map { try Self.dimensions($0, "threadgroup") }
        try arguments.withUnsafeBufferPointer { arguments in
            try dispatch(kernel, arguments: arguments, size: Self.mtlSize(extent), threadgroup: group.map(Self.mtlSize), byGroups: byGroups)
        }
    }

    /// The same, for callers that have their arguments in memory already (the C ABI):
    /// each dimension of `size` and `threadgroup` is at least 1 and below 2^32.
    /// Everything that can be known before the work runs is checked here, so
    /// that the call that is wrong fails, not a later synchronisation.
    public func dispatch(_ kernel: Kernel, arguments: UnsafeBufferPointer<Argument>, size: MTLSize, threadgroup: MTLSize?,
                         byGroups: Bool) throws {
        let group = threadgroup ?? Self.mtlSize(Self.defaultThreadgroup(for: kernel, size: [size.width, size.height, size.depth],
                                                                            byGroups: byGroups))
        try check(kernel, size: size, threadgroup: group, byGroups: byGroups)
        let bound = try check(kernel, arguments)
        let access = kernel.bufferAccess
        try lock {
            let current = try openEncoder()
            let encoder = current.encoder
            encoder.setComputePipelineState(kernel.pipeline)
            for argument in arguments {
                switch argument.value {
                case let .buffer(buffer, offset):
                    encoder.setBuffer(buffer.buffer, offset: offset, index: argument.index)
                    #if !canImport(Metal)
                    if argument.length != 0 {
                        (encoder as? CPUComputeCommandEncoder)?.limitBufferLength(max(argument.length, 0), index: argument.index)
                    }
                    #endif
                    current.uses.append((buffer, access[argument.index]))
                    // Another thread's open work on this memory runs first: work runs in the order it was encoded.
                    if let previous = buffer.markUsed(by: self, in: current.commandBuffer), previous !== current.commandBuffer,
                       let other = open.firstIndex(where: { $0.commandBuffer === previous }) {
                        commitLocked(open[other])
                    }
                case let .bytes(pointer, length):
                    encoder.setBytes(pointer, length: length, index: argument.index)
                case let .threadgroupMemory(length):
                    encoder.setThreadgroupMemoryLength(Self.roundedThreadgroupLength(length), index: argument.index)
                }
            }
            // Encoder bindings persist between dispatches: unbind what this
            // dispatch did not set, so a missing argument is caught, not stale.
            var stale = current.boundIndices & ~bound
            while stale != 0 {
                encoder.setBuffer(nil, offset: 0, index: stale.trailingZeroBitCount)
                stale &= stale - 1
            }
            current.boundIndices = bound
            if byGroups {
                encoder.dispatchThreadgroups(size, threadsPerThreadgroup: group)
            } else {
                encoder.dispatchThreads(size, threadsPerThreadgroup: group)
            }
            current.count += 1
            current.ends.append(current.uses.count)
            if current.count >= Self.batchSize { commitLocked(current) }
        }
    }

    /// The grid and threadgroup against the kernel's limits (each dimension is
    /// 1...2^32-1 already: `dimensions` checked what callers gave).
    private func check(_ kernel: Kernel, size: MTLSize, threadgroup group: MTLSize, byGroups: Bool) throws {
        let threads = Self.product(group)
        guard threads <= kernel.maxThreads else {
            throw EngineError.invalid("threadgroup \([group.width, group.height, group.depth]) has "
                + "\(threads == Int.max ? "too many" : String(threads)) threads; kernel '\(kernel.name)' allows at most \(kernel.maxThreads)")
        }
        // Thread counts beyond 2^48 are no real dispatch (and would overflow 64-bit arithmetic).
        guard Self.product(size) <= (1 << 48) / (byGroups ? max(threads, 1) : 1) else {
            throw EngineError.invalid("a dispatch of \([size.width, size.height, size.depth]) \(byGroups ? "threadgroups" : "threads") "
                + "is too large (over 2^48 threads)")
        }
    }

    /// The arguments against Metal's limits and the kernel's parameters; returns the buffer indices bound.
    private func check(_ kernel: Kernel, _ arguments: UnsafeBufferPointer<Argument>) throws -> UInt32 {
        var memory = kernel.staticThreadgroupMemory
        var bound: UInt32 = 0, given: UInt32 = 0
        for argument in arguments {
            let index = argument.index
            guard (0..<Self.maxBindings).contains(index) else {
                throw EngineError.invalid("binding index \(index) is outside 0...\(Self.maxBindings - 1)")
            }
            let available: Int
            switch argument.value {
            case let .buffer(buffer, offset):
                guard offset >= 0, offset <= buffer.length else {
                    throw EngineError.invalid("offset \(offset) is outside the buffer at index \(index) (\(buffer.length) bytes)")
                }
                available = buffer.length - offset
            case let .bytes(_, length):
                guard length > 0, length <= Self.maxBytes else {
                    throw EngineError.invalid("argument \(index) has \(length) bytes; values passed by copy must be 1...\(Self.maxBytes) bytes (use a buffer for more)")
                }
                available = length
            case let .threadgroupMemory(length):
                guard length >= 0, length <= device.maxThreadgroupMemory else {
                    throw EngineError.invalid("threadgroup memory length \(length) at index \(index) is outside 0...\(device.maxThreadgroupMemory)")
                }
                memory += Self.roundedThreadgroupLength(length)
                if length > 0 { given |= 1 << UInt32(index) }
                continue
            }
            bound |= 1 << UInt32(index)
            let needed = kernel.minimumBytes[index]
            guard available >= needed else {
                throw EngineError.invalid("kernel '\(kernel.name)' reads \(needed) bytes from \(kernel.describe(.buffer, index)); "
                    + "the argument has \(available)")
            }
        }
        let missing = kernel.requiredBuffers & ~bound
        guard missing == 0 else {
            throw EngineError.invalid("kernel '\(kernel.name)' reads \(kernel.describe(.buffer, missing.trailingZeroBitCount)), "
                + "which this dispatch does not bind")
        }
        let unset = kernel.requiredThreadgroups & ~given
        guard unset == 0 else {
            throw EngineError.invalid("kernel '\(kernel.name)' uses \(kernel.describe(.threadgroup, unset.trailingZeroBitCount)), "
                + "which this dispatch gives no memory (setThreadgroupMemoryLength; threadgroup_memory= in Python)")
        }
        guard memory <= device.maxThreadgroupMemory else {
            throw EngineError.invalid("kernel '\(kernel.name)' would use \(memory) bytes of threadgroup memory; "
                + "the limit is \(device.maxThreadgroupMemory) bytes per threadgroup")
        }
        return bound
    }

    static func roundedThreadgroupLength(_ length: Int) -> Int {
        (length + threadgroupMemoryAlignment - 1) / threadgroupMemoryAlignment * threadgroupMemoryAlignment
    }

    /// Commits every thread's open work, in the order it was begun.
    public func commit() { lock { commitAllLocked() } }

    /// Commits `commandBuffer` if it is still being encoded.
    func commit(ifCurrent commandBuffer: any MTLCommandBuffer) {
        lock { if let found = open.first(where: { $0.commandBuffer === commandBuffer }) { commitLocked(found) } }
    }

    /// Commits and waits for everything committed so far (by any thread);
    /// reports failed work that this thread encoded (once); another thread's
    /// failures wait for that thread's next synchronisation. (Whoever reads a
    /// buffer that failed work may have written gets the error from the buffer.)
    public func synchronize() throws {
        let me = ThreadID.current
        waitAll()
        let mine = lock { failures.removeValue(forKey: me) ?? [] }
        if let first = mine.first {
            let more = mine.count > 1 ? " (and \(mine.count - 1) more failed command buffers of this thread)" : ""
            throw EngineError(.execution, first.message + more)
        }
    }

    /// Commits and waits for everything committed so far, reporting nothing:
    /// afterwards every buffer's error is up to date.
    public func wait() { waitAll() }

    /// Waits as `wait`, then reports the failure of the command buffer that
    /// holds this thread's latest dispatch (a synchronous call's own work),
    /// not this thread's older failures, which stay for `synchronize`.
    public func finish() throws {
        let me = ThreadID.current
        let latest = lock { (open.last { $0.owner == me } ?? inFlight.last { $0.owner == me })?.serial }
        waitAll()
        guard let latest else { return }
        let failure: String? = lock {
            guard let at = failures[me]?.firstIndex(where: { $0.serial == latest }) else { return nil }
            return failures[me]!.remove(at: at).message
        }
        if let failure { throw EngineError(.execution, failure) }
    }

    private func waitAll() {
        let committed: [any MTLCommandBuffer] = lock {
            commitAllLocked()
            return inFlight.map(\.commandBuffer)
        }
        // The last first: a queue runs in order, so the others have completed then (waited for
        // all the same, as Metal may report completion out of order).
        committed.last?.waitUntilCompleted()
        for commandBuffer in committed.dropLast() { commandBuffer.waitUntilCompleted() }
        lock {
            if let last = committed.last { lastGPUTime = last.gpuEndTime - last.gpuStartTime }
            routeFinishedLocked()
        }
    }

    private func openEncoder() throws -> Open {
        let me = ThreadID.current
        if let mine = open.last(where: { $0.owner == me }) { return mine }
        guard let commandBuffer = queue.makeCommandBuffer(),
              let encoder = commandBuffer.makeComputeCommandEncoder() else {
            throw EngineError(.outOfMemory, "cannot make a command buffer")
        }
        serials += 1
        let made = Open(owner: me, serial: serials, commandBuffer: commandBuffer, encoder: encoder)
        open.append(made)
        return made
    }

    private func commitLocked(_ work: Open) {
        guard let at = open.firstIndex(where: { $0 === work }) else { return }
        open.remove(at: at)
        work.encoder.endEncoding()
        work.commandBuffer.commit()
        // Keep failed or running ones for synchronize(); sort out finished ones now and then.
        if inFlight.count >= 16 { routeFinishedLocked() }
        inFlight.append(work)
    }

    private func commitAllLocked() {
        while let first = open.first { commitLocked(first) }
    }

    /// Sorts out finished command buffers, in the order they ran (an error passes
    /// from the work that made a buffer to the work that read it): failed work
    /// marks the buffers it may have written with its error, which also goes to
    /// the thread that encoded it; work that ran passes its inputs' errors to the
    /// buffers it wrote (none: a rewrite clears the error).
    private func routeFinishedLocked() {
        var finished = 0
        for entry in inFlight {
            let status = entry.commandBuffer.status
            guard status == .completed || status == .error else { break }
            finished += 1
            let ran = status == .error ? min(Self.failedCommand(entry.commandBuffer), entry.count) : entry.count
            // The work that ran, in order. Errors to pass on exist only if a buffer
            // has one (the count is read without its lock: a word).
            var start = 0
            if Buffer.poisonedCount.pointee != 0 {
                for end in entry.ends.prefix(ran) {
                    let uses = entry.uses[start..<end]
                    start = end
                    let inherited = uses.lazy.filter { $0.access == .readOnly }.compactMap { $0.buffer.error }.first
                    for use in uses where use.access == .readWrite { use.buffer.setError(inherited) }
                }
            } else {
                start = ran == 0 ? 0 : entry.ends[ran - 1]
            }
            guard status == .error else { continue }
            let message = entry.commandBuffer.error.map(describe) ?? "a command buffer failed"
            // A failed command stops its command buffer: say so, the work after it is this thread's.
            let rest = entry.count > 1 ? " (this thread's work encoded after it in the same batch of "
                + "\(entry.count) dispatches did not run)" : ""
            failures[entry.owner, default: []].append((entry.serial, message + rest))
            // The failed dispatch and those after it may have written what they bind writable.
            for use in entry.uses[start...] where use.access == .readWrite { use.buffer.setError(message + rest) }
        }
        inFlight.removeFirst(finished)
    }

    /// How many dispatches of a failed command buffer ran before the one that failed
    /// (Metal does not say: 0, all of its work may be wrong).
    private static func failedCommand(_ commandBuffer: any MTLCommandBuffer) -> Int {
        #if canImport(Metal)
        return 0
        #else
        return (commandBuffer as? CPUCommandBuffer)?.failedCommand ?? 0
        #endif
    }

    /// width * height * depth, or Int.max when that overflows (every dimension is at least 1).
    static func product(_ size: MTLSize) -> Int {
        let xy = size.width.multipliedReportingOverflow(by: size.height)
        let xyz = xy.partialValue.multipliedReportingOverflow(by: size.depth)
        return xy.overflow || xyz.overflow ? Int.max : xyz.partialValue
    }

    static func mtlSize(_ values: [Int]) -> MTLSize { MTLSize(width: values[0], height: values[1], depth: values[2]) }

    public static func dimensions(_ values: [Int], _ what: String) throws -> [Int] {
        guard (1...3).contains(values.count), values.allSatisfy({ $0 >= 1 && $0 <= Int(UInt32.max) }) else {
            throw EngineError.invalid("\(what) \(values) must have 1 to 3 dimensions, each at least 1")
        }
        return values + Array(repeating: 1, count: 3 - values.count)
    }

    /// The threadgroup used when the caller gives none: up to 256 threads (never
    /// more than the pipeline allows), 1-D grids along x, 2-D as 32 x 8, 3-D as
    /// 32 x 4 x 2; with a thread count (not groups) it is also clipped to the
    /// grid, so that small grids launch no idle threads.
    public static func defaultThreadgroup(for kernel: Kernel, size: [Int], byGroups: Bool = false) -> [Int] {
        let total = max(1, min(256, kernel.maxThreads))
        let width = max(1, min(kernel.executionWidth, total))
        let extent = size + Array(repeating: 1, count: max(0, 3 - size.count))
        let (gx, gy, gz) = byGroups ? (total, total, total) : (extent[0], extent[1], extent[2])
        if extent[1] == 1 && extent[2] == 1 { return [min(total, gx), 1, 1] }
        if extent[2] == 1 {
            let y = min(total / min(width, gx), gy)
            return [min(total / y, gx), y, 1]
        }
        let x = min(width, gx)
        let y = min(max(1, total / x / 2), gy)
        let z = min(max(1, total / (x * y)), gz)
        return [min(total / (y * z), gx), y, z]
    }
}
