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
    /// One lock for every buffer's state (short sections; one lock is one to take around fork()).
    private static let state: Lock = {
        let lock = Lock()
        ForkSafety.register(.buffers, lock)
        return lock
    }()
    private var lock: Lock { Self.state }
    static func registerForFork() { _ = state }
    private var lastUse: (stream: Stream, commandBuffer: any MTLCommandBuffer)?
    /// The error of failed work that may have written this buffer: its contents
    /// are not what the work meant, so reading them must fail (Stream sets it).
    private var failure: String?

    /// How many live buffers have an error: readers ask a buffer only when this
    /// is not 0 (C and Python read the word without a lock; it changes under `state`).
    public static let poisonedCount: UnsafeMutablePointer<Int64> = {
        let count = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        count.initialize(to: 0)
        return count
    }()

    init(_ buffer: any MTLBuffer, length: Int, isWrapped: Bool) {
        self.buffer = buffer
        self.length = length
        self.isWrapped = isWrapped
    }

    deinit { if failure != nil { lock { Self.poisonedCount.pointee -= 1 } } }

    public var contents: UnsafeMutableRawPointer { buffer.contents() }

    /// The error of the failed work that may have written the buffer, nil if none.
    public var error: String? { lock { failure } }

    /// Marks the buffer as written by failed work (a message), or as rewritten (nil).
    public func setError(_ message: String?) {
        lock {
            Self.poisonedCount.pointee += Int64((message == nil ? 0 : 1) - (failure == nil ? 0 : 1))
            failure = message
        }
    }

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
