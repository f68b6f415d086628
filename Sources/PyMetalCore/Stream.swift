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
    public init(index: Int, _ value: Value) {
        self.index = index
        self.value = value
    }
}

public final class Stream: @unchecked Sendable {
    /// Dispatches per command buffer before it is committed on its own.
    public static let batchSize = 64
    static let maxBindings = 31
    static let maxBytes = 4096

    private let queue: any MTLCommandQueue
    private let device: Device
    private let lock = Lock()
    private var open: (commandBuffer: any MTLCommandBuffer, encoder: any MTLComputeCommandEncoder)?
    private var encodedCount = 0
    private var boundIndices: UInt32 = 0 // bit i: [[buffer(i)]] was set by the last dispatch
    private var inFlight: [any MTLCommandBuffer] = []
    private var lastGPUTime: Double = 0

    init(queue: any MTLCommandQueue, device: Device) {
        self.queue = queue
        self.device = device
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
    public func dispatch(_ kernel: Kernel, arguments: UnsafeBufferPointer<Argument>, size: MTLSize, threadgroup: MTLSize?,
                         byGroups: Bool) throws {
        let group = threadgroup ?? Self.mtlSize(Self.defaultThreadgroup(for: kernel, size: [size.width, size.height, size.depth],
                                                                        byGroups: byGroups))
        let threads = Self.product(group)
        // Thread counts beyond 2^48 are no real dispatch (and would overflow 64-bit arithmetic).
        guard Self.product(size) <= (1 << 48) / (byGroups ? min(threads, 1 << 48) : 1) else {
            throw EngineError.invalid("a dispatch of \([size.width, size.height, size.depth]) \(byGroups ? "threadgroups" : "threads") "
                + "is too large (over 2^48 threads)")
        }
        guard threads <= kernel.maxThreads else {
            throw EngineError.invalid("threadgroup \([group.width, group.height, group.depth]) has \(threads) threads; "
                + "kernel '\(kernel.name)' allows at most \(kernel.maxThreads)")
        }
        var memory = kernel.staticThreadgroupMemory
        for argument in arguments {
            guard (0..<Self.maxBindings).contains(argument.index) else {
                throw EngineError.invalid("binding index \(argument.index) is outside 0...\(Self.maxBindings - 1)")
            }
            switch argument.value {
            case let .buffer(buffer, offset):
                guard offset >= 0, offset <= buffer.length else {
                    throw EngineError.invalid("offset \(offset) is outside the buffer at index \(argument.index) (\(buffer.length) bytes)")
                }
            case let .bytes(_, length):
                guard length > 0, length <= Self.maxBytes else {
                    throw EngineError.invalid("argument \(argument.index) has \(length) bytes; values passed by copy must be 1...\(Self.maxBytes) bytes (use a buffer for more)")
                }
            case let .threadgroupMemory(length):
                guard length >= 0 else { throw EngineError.invalid("negative threadgroup memory length") }
                memory += (length + 15) / 16 * 16
            }
        }
        guard memory <= device.maxThreadgroupMemory else {
            throw EngineError.invalid("kernel '\(kernel.name)' would use \(memory) bytes of threadgroup memory; "
                + "the limit is \(device.maxThreadgroupMemory) bytes per threadgroup")
        }
        try lock {
            let (commandBuffer, encoder) = try openEncoder()
            encoder.setComputePipelineState(kernel.pipeline)
            var bound: UInt32 = 0
            for argument in arguments {
                switch argument.value {
                case let .buffer(buffer, offset):
                    encoder.setBuffer(buffer.buffer, offset: offset, index: argument.index)
                    buffer.markUsed(by: self, in: commandBuffer)
                    bound |= 1 << UInt32(argument.index)
                case let .bytes(pointer, length):
                    encoder.setBytes(pointer, length: length, index: argument.index)
                    bound |= 1 << UInt32(argument.index)
                case let .threadgroupMemory(length):
                    encoder.setThreadgroupMemoryLength((length + 15) / 16 * 16, index: argument.index)
                }
            }
            // Encoder bindings persist between dispatches: unbind what this
            // dispatch did not set, so a missing argument is caught, not stale.
            var stale = boundIndices & ~bound
            while stale != 0 {
                encoder.setBuffer(nil, offset: 0, index: stale.trailingZeroBitCount)
                stale &= stale - 1
            }
            boundIndices = bound
            if byGroups {
                encoder.dispatchThreadgroups(size, threadsPerThreadgroup: group)
            } else {
                encoder.dispatchThreads(size, threadsPerThreadgroup: group)
            }
            encodedCount += 1
            if encodedCount >= Self.batchSize { commitLocked() }
        }
    }

    public func commit() { lock { commitLocked() } }

    /// Commits `commandBuffer` if it is still the one being encoded.
    func commit(ifCurrent commandBuffer: any MTLCommandBuffer) {
        lock { if let open, open.commandBuffer === commandBuffer { commitLocked() } }
    }

    /// Commits and waits for everything committed so far (by any thread);
    /// reports the first failed command buffer, once, to one of the waiters.
    public func synchronize() throws {
        let last: (any MTLCommandBuffer)? = lock {
            commitLocked()
            return inFlight.last
        }
        guard let last else { return }
        last.waitUntilCompleted() // a queue runs in order: all before it are done too
        let failed: (any MTLCommandBuffer)? = lock {
            lastGPUTime = last.gpuEndTime - last.gpuStartTime
            guard let end = inFlight.lastIndex(where: { $0 === last }) else { return nil } // another waiter took them
            let failed = inFlight[...end].first { $0.status == .error }
            if end + 1 == inFlight.count { inFlight.removeAll(keepingCapacity: true) } else { inFlight.removeFirst(end + 1) }
            return failed
        }
        if let failed {
            throw EngineError(.execution, failed.error.map(describe) ?? "a command buffer failed")
        }
    }

    private func openEncoder() throws -> (any MTLCommandBuffer, any MTLComputeCommandEncoder) {
        if let open { return open }
        guard let commandBuffer = queue.makeCommandBuffer(),
              let encoder = commandBuffer.makeComputeCommandEncoder() else {
            throw EngineError(.outOfMemory, "cannot make a command buffer")
        }
        open = (commandBuffer, encoder)
        boundIndices = 0
        return (commandBuffer, encoder)
    }

    private func commitLocked() {
        guard let (commandBuffer, encoder) = open else { return }
        encoder.endEncoding()
        commandBuffer.commit()
        open = nil
        encodedCount = 0
        // Keep failed or running ones for synchronize(); forget finished ones now and then.
        if inFlight.count >= 16 { inFlight.removeAll { $0.status == .completed } }
        inFlight.append(commandBuffer)
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
