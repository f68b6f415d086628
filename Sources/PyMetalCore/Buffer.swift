// Shared CPU/GPU memory: allocated by the engine, or caller memory wrapped
// without copying.
#if canImport(Metal)
import Metal
#else
import MetalCPU
#endif

public final class Buffer: @unchecked Sendable {
    public let buffer: any MTLBuffer
    /// Caller memory: releasing the buffer must wait for work that still uses it.
    public let isWrapped: Bool
    /// Bytes the caller asked for (Metal buffers are at least one byte long).
    public let length: Int
    private let lock = Lock()
    private var lastUse: (stream: Stream, commandBuffer: any MTLCommandBuffer)?

    init(_ buffer: any MTLBuffer, length: Int, isWrapped: Bool) {
        self.buffer = buffer
        self.length = length
        self.isWrapped = isWrapped
    }

    public var contents: UnsafeMutableRawPointer { buffer.contents() }

    /// Records the command buffer that uses the buffer now; returns the one that used it before (on this stream).
    func markUsed(by stream: Stream, in commandBuffer: any MTLCommandBuffer) -> (any MTLCommandBuffer)? {
        lock {
            let previous = lastUse?.stream === stream ? lastUse?.commandBuffer : nil
            if previous !== commandBuffer { lastUse = (stream, commandBuffer) }
            return previous
        }
    }

    /// Waits until no encoded or running work uses this buffer.
    public func waitUntilUnused() {
        guard let use = lock({ lastUse }) else { return }
        use.stream.commit(ifCurrent: use.commandBuffer)
        use.commandBuffer.waitUntilCompleted()
        lock { if let current = lastUse, current.commandBuffer === use.commandBuffer { lastUse = nil } }
    }
}
