// Records dispatches. Each dispatch snapshots the encoder's bindings and
// retains the buffers and pipeline it uses until its command buffer completes.
import CMetalCPU
import Foundation

public final class CPUComputeCommandEncoder: MTLComputeCommandEncoder, @unchecked Sendable {
    private let commandBuffer: CPUCommandBuffer
    private var pipeline: CPUPipelineState?
    private var bindings = Bindings()
    private var encoded: [CPUDispatch] = []
    private var ended = false

    init(commandBuffer: CPUCommandBuffer) { self.commandBuffer = commandBuffer }

    public func setComputePipelineState(_ state: any MTLComputePipelineState) {
        pipeline = state as? CPUPipelineState
    }

    public func setBuffer(_ buffer: (any MTLBuffer)?, offset: Int, index: Int) {
        guard (0..<Int(PM_MAX_BUFFERS)).contains(index) else { return fail("buffer index \(index) is out of range 0...30") }
        guard let buffer else { bindings.resources[index] = nil; return }
        guard offset >= 0, offset <= buffer.length else {
            return fail("offset \(offset) is outside buffer \(index) of length \(buffer.length)")
        }
        bindings.resources[index] = .buffer(buffer, offset: offset)
    }

    public func setBytes(_ bytes: UnsafeRawPointer, length: Int, index: Int) {
        guard (0..<Int(PM_MAX_BUFFERS)).contains(index) else { return fail("buffer index \(index) is out of range 0...30") }
        guard length > 0, length <= 4096 else { return fail("setBytes length \(length) must be 1...4096 bytes") }
        bindings.resources[index] = .bytes(Bytes(copying: bytes, length: length))
    }

    public func setThreadgroupMemoryLength(_ length: Int, index: Int) {
        guard (0..<Int(PM_MAX_THREADGROUP_ARGS)).contains(index) else {
            return fail("threadgroup memory index \(index) is out of range 0...30")
        }
        guard length >= 0, length <= Int(PM_MAX_THREADGROUP_MEMORY) else {
            return fail("threadgroup memory length \(length) is over the \(PM_MAX_THREADGROUP_MEMORY)-byte limit")
        }
        bindings.threadgroupLengths[index] = length
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
        commandBuffer.finishEncoding(encoded)
        encoded = []
    }

    private func encode(grid: MTLSize, threadgroup: MTLSize, uniform: Bool) {
        guard let pipeline else { return fail("dispatch without a compute pipeline state") }
        do {
            encoded.append(try CPUDispatch(pipeline: pipeline, bindings: bindings,
                                           size: grid, threadgroup: threadgroup, uniform: uniform))
        } catch {
            encoded.append(CPUDispatch(failure: error))
        }
    }

    /// Metal's validation layer would stop here; MetalCPU fails the command buffer.
    private func fail(_ message: String) {
        encoded.append(CPUDispatch(failure: MTLCommandBufferError(message: message)))
    }
}

/// setBytes data, owned by the dispatches that use it.
final class Bytes: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    let length: Int
    init(copying bytes: UnsafeRawPointer, length: Int) {
        // 16-byte aligned, like every buffer binding a kernel may read as a vector.
        pointer = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 16)
        pointer.copyMemory(from: bytes, byteCount: length)
        self.length = length
    }
    deinit { pointer.deallocate() }
}

enum Resource {
    case buffer(any MTLBuffer, offset: Int)
    case bytes(Bytes)

    var address: UnsafeMutableRawPointer {
        switch self {
        case let .buffer(buffer, offset): return buffer.contents() + offset
        case let .bytes(bytes): return bytes.pointer
        }
    }

    var length: Int {
        switch self {
        case let .buffer(buffer, offset): return buffer.length - offset
        case let .bytes(bytes): return bytes.length
        }
    }
}

struct Bindings {
    var resources = [Resource?](repeating: nil, count: Int(PM_MAX_BUFFERS))
    var threadgroupLengths = [Int](repeating: 0, count: Int(PM_MAX_THREADGROUP_ARGS))
}
