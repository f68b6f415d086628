// Records dispatches. The encoder keeps its bindings in the form a kernel
// reads them (a pm_launch); each dispatch copies that record once, into the
// command buffer's arena, and the command buffer keeps every buffer
// bound alive until it completes. Nothing is allocated per dispatch
// but amortised growth. The mutable state sits behind a pointer: the hot path
// then has no dynamic exclusivity checks.
import CMetalCPU
import Foundation

public final class CPUComputeCommandEncoder: MTLComputeCommandEncoder, @unchecked Sendable {
    private struct State {
        var launch = pm_launch()
        var bound: UInt32 = 0 // bit i: [[buffer(i)]] is set
        var pipeline: CPUPipelineState?
        var encoded: [CPUDispatch] = []
        var retained: [any MTLBuffer] = [] // every buffer bound: kept alive until the command buffer completes
        var ended = false
    }

    private let commandBuffer: CPUCommandBuffer
    private let state = UnsafeMutablePointer<State>.allocate(capacity: 1)
    private let arena: Arena

    init(commandBuffer: CPUCommandBuffer) {
        self.commandBuffer = commandBuffer
        arena = commandBuffer.arena
        state.initialize(to: State())
        state.pointee.encoded.reserveCapacity(4)
        state.pointee.retained.reserveCapacity(8)
        state.pointee.launch.poison_threadgroup_memory = CPUDispatch.poison
    }

    deinit { state.deinitialize(count: 1).deallocate() }

    public func setComputePipelineState(_ pipeline: any MTLComputePipelineState) {
        state.pointee.pipeline = pipeline as? CPUPipelineState
    }

    public func setBuffer(_ buffer: (any MTLBuffer)?, offset: Int, index: Int) {
        guard (0..<Int(PM_MAX_BUFFERS)).contains(index) else { return fail("buffer index \(index) is out of range 0...30") }
        guard let buffer else {
            bind(index, address: nil, length: 0)
            state.pointee.bound &= ~(1 << UInt32(index))
            return
        }
        guard offset >= 0, offset <= buffer.length else {
            return fail("offset \(offset) is outside buffer \(index) of length \(buffer.length)")
        }
        state.pointee.retained.append(buffer)
        bind(index, address: buffer.contents() + offset, length: buffer.length - offset)
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
        withUnsafeMutableBytes(of: &state.pointee.launch.threadgroup_lengths) {
            $0.storeBytes(of: UInt32(length), toByteOffset: index * 4, as: UInt32.self)
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
        guard !state.pointee.ended else { return }
        state.pointee.ended = true
        commandBuffer.finishEncoding(state.pointee.encoded, retaining: state.pointee.retained)
        state.pointee.encoded = []
        state.pointee.retained = []
    }

    private func bind(_ index: Int, address: UnsafeMutableRawPointer?, length: Int) {
        state.pointee.bound |= 1 << UInt32(index)
        withUnsafeMutableBytes(of: &state.pointee.launch.buffers) {
            $0.storeBytes(of: address, toByteOffset: index * 8, as: UnsafeMutableRawPointer?.self)
        }
        withUnsafeMutableBytes(of: &state.pointee.launch.buffer_lengths) {
            $0.storeBytes(of: UInt64(length), toByteOffset: index * 8, as: UInt64.self)
        }
    }

    private func encode(grid: MTLSize, threadgroup: MTLSize, uniform: Bool) {
        guard let pipeline = state.pointee.pipeline else { return fail("dispatch without a compute pipeline state") }
        let launch = arena.allocate(MemoryLayout<pm_launch>.size).bindMemory(to: pm_launch.self, capacity: 1)
        launch.initialize(from: Self.launch(of: state), count: 1)
        do {
            state.pointee.encoded.append(try CPUDispatch(pipeline: pipeline, launch: launch, bound: state.pointee.bound,
                                                         size: grid, threadgroup: threadgroup, uniform: uniform))
        } catch {
            state.pointee.encoded.append(CPUDispatch(failure: error))
        }
    }

    private static let launchOffset = MemoryLayout<State>.offset(of: \State.launch)!
    private static func launch(of state: UnsafeMutablePointer<State>) -> UnsafePointer<pm_launch> {
        UnsafePointer((UnsafeRawPointer(state) + launchOffset).assumingMemoryBound(to: pm_launch.self))
    }

    /// Metal's validation layer would stop here; MetalCPU fails the command buffer.
    private func fail(_ message: String) {
        state.pointee.encoded.append(CPUDispatch(failure: MTLCommandBufferError(message: message)))
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
