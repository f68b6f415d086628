// Records dispatches. The encoder keeps its bindings in the form a kernel
// reads them (a pm_launch); each dispatch copies that record once, into the
// command buffer's arena, and the command buffer keeps every buffer bound
// alive until it completes. Nothing is allocated per dispatch but amortised
// growth.
import CMetalCPU

public final class CPUComputeCommandEncoder: MTLComputeCommandEncoder, @unchecked Sendable {
    private let commandBuffer: CPUCommandBuffer
    private let arena: Arena
    private var launch = pm_launch()
    private var bound: UInt32 = 0           // bit i: [[buffer(i)]] is set
    private var narrowed: UInt32 = 0        // bit i: exactLengths[i] holds the exact length of [[buffer(i)]]
    private var exactLengths = pm_launch().buffer_lengths
    private var threadgroupMemory = 0       // the sum of the threadgroup lengths set, rounded as they are used
    private var pipeline: CPUPipelineState?
    private var encoded: [CPUDispatch] = []
    private var retained: [any MTLBuffer] = [] // every buffer bound
    private var ended = false

    init(commandBuffer: CPUCommandBuffer) {
        self.commandBuffer = commandBuffer
        arena = commandBuffer.arena
        encoded.reserveCapacity(4)
        retained.reserveCapacity(8)
        launch.poison_threadgroup_memory = CPUDispatch.poison
    }

    public func setComputePipelineState(_ pipeline: any MTLComputePipelineState) {
        self.pipeline = pipeline as? CPUPipelineState
    }

    public func setBuffer(_ buffer: (any MTLBuffer)?, offset: Int, index: Int) {
        guard (0..<Int(PM_MAX_BUFFERS)).contains(index) else { return fail("buffer index \(index) is out of range 0...30") }
        guard let buffer else {
            bind(index, address: nil, length: 0)
            bound &= ~(1 << UInt32(index))
            return
        }
        guard offset >= 0, offset <= buffer.length else {
            return fail("offset \(offset) is outside buffer \(index) of length \(buffer.length)")
        }
        retained.append(buffer)
        bind(index, address: buffer.contents() + offset, length: buffer.length - offset)
    }

    /// pymetal's CPU backend only (not Metal API): the exact byte length of
    /// the array bound at [[buffer(index)]] by setBuffer (buffers are rounded
    /// up to a size class). Shader validation checks accesses against it; the
    /// checks made when a dispatch is encoded use the whole buffer, as Metal.
    public func limitBufferLength(_ length: Int, index: Int) {
        guard (0..<Int(PM_MAX_BUFFERS)).contains(index), length >= 0 else { return }
        withUnsafeMutableBytes(of: &exactLengths) { $0.storeBytes(of: UInt64(length), toByteOffset: index * 8, as: UInt64.self) }
        narrowed |= 1 << UInt32(index)
    }

    public func setBytes(_ bytes: UnsafeRawPointer, length: Int, index: Int) {
        guard (0..<Int(PM_MAX_BUFFERS)).contains(index) else { return fail("buffer index \(index) is out of range 0...30") }
        guard length > 0, length <= 4096 else { return fail("setBytes length \(length) must be 1...4096 bytes") }
        let copy = arena.allocate(length) // 16-byte aligned, like every binding a kernel may read as a vector
        copy.copyMemory(from: bytes, byteCount: length)
        bind(index, address: copy, length: length)
    }

    public func setThreadgroupMemoryLength(_ length: Int, index: Int) {
        guard (0..<Int(PM_MAX_THREADGROUP_ARGS)).contains(index) else {
            return fail("threadgroup memory index \(index) is out of range 0...30")
        }
        guard length >= 0, length <= Int(PM_MAX_THREADGROUP_MEMORY) else {
            return fail("threadgroup memory length \(length) is over the \(PM_MAX_THREADGROUP_MEMORY)-byte limit")
        }
        withUnsafeMutableBytes(of: &launch.threadgroup_lengths) { lengths in
            let previous = Int(lengths.load(fromByteOffset: index * 4, as: UInt32.self))
            threadgroupMemory += (length + 15) / 16 * 16 - (previous + 15) / 16 * 16
            lengths.storeBytes(of: UInt32(length), toByteOffset: index * 4, as: UInt32.self)
        }
    }

    public func dispatchThreads(_ threadsPerGrid: MTLSize, threadsPerThreadgroup: MTLSize) {
        encode(grid: threadsPerGrid, threadgroup: threadsPerThreadgroup, uniform: false)
    }

    public func dispatchThreadgroups(_ threadgroupsPerGrid: MTLSize, threadsPerThreadgroup: MTLSize) {
        encode(grid: threadgroupsPerGrid, threadgroup: threadsPerThreadgroup, uniform: true)
    }

    public func memoryBarrier(scope: MTLBarrierScope) {
        // Dispatches of a serial encoder already run one after another.
    }

    public func endEncoding() {
        guard !ended else { return }
        ended = true
        commandBuffer.finishEncoding(encoded, retaining: retained)
        encoded = []
        retained = []
    }

    private func bind(_ index: Int, address: UnsafeMutableRawPointer?, length: Int) {
        bound |= 1 << UInt32(index)
        narrowed &= ~(1 << UInt32(index))
        withUnsafeMutableBytes(of: &launch.buffers) {
            $0.storeBytes(of: address, toByteOffset: index * 8, as: UnsafeMutableRawPointer?.self)
        }
        withUnsafeMutableBytes(of: &launch.buffer_lengths) {
            $0.storeBytes(of: UInt64(length), toByteOffset: index * 8, as: UInt64.self)
        }
    }

    private func encode(grid: MTLSize, threadgroup: MTLSize, uniform: Bool) {
        guard let pipeline else { return fail("dispatch without a compute pipeline state") }
        let record = arena.allocate(MemoryLayout<pm_launch>.size).bindMemory(to: pm_launch.self, capacity: 1)
        record.initialize(to: launch)
        do {
            encoded.append(try CPUDispatch(pipeline: pipeline, launch: record, bound: bound, threadgroupMemory: threadgroupMemory,
                                           size: grid, threadgroup: threadgroup, uniform: uniform))
            // Checked: the kernel (a validation build) sees the exact lengths.
            var bits = narrowed & bound
            while bits != 0 {
                let i = Int(bits.trailingZeroBitCount)
                bits &= bits - 1
                let exact = withUnsafeBytes(of: &exactLengths) { $0.load(fromByteOffset: i * 8, as: UInt64.self) }
                withUnsafeMutableBytes(of: &record.pointee.buffer_lengths) {
                    let whole = $0.load(fromByteOffset: i * 8, as: UInt64.self)
                    $0.storeBytes(of: min(whole, exact), toByteOffset: i * 8, as: UInt64.self)
                }
            }
        } catch {
            encoded.append(CPUDispatch(failure: error))
        }
    }

    /// Metal's validation layer would stop here; MetalCPU fails the command buffer.
    private func fail(_ message: String) {
        encoded.append(CPUDispatch(failure: MTLCommandBufferError(message: message)))
    }
}

/// Memory that lives as long as its command buffer (launch records, setBytes
/// data): 16-byte aligned pieces of blocks that never move, the first one
/// small (malloc's fastest size class), as most command buffers hold a few
/// dispatches; later ones larger.
final class Arena: @unchecked Sendable {
    private var last: UnsafeMutableRawPointer? // each block starts with a pointer to the one before
    private var next: UnsafeMutableRawPointer?
    private var left = 0
    private var blockSize = 1024

    func allocate(_ length: Int) -> UnsafeMutableRawPointer {
        let rounded = (length + 15) & ~15
        if rounded > left {
            let size = max(blockSize, rounded + 16)
            let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
            block.storeBytes(of: last, as: UnsafeMutableRawPointer?.self)
            last = block
            next = block + 16
            left = size - 16
            blockSize = min(blockSize * 2, 1 << 16)
        }
        let piece = next!
        next = piece + rounded
        left -= rounded
        return piece
    }

    deinit {
        while let block = last {
            last = block.load(as: UnsafeMutableRawPointer?.self)
            block.deallocate()
        }
    }
}
