// Command queues run committed command buffers in order, asynchronously.
// A thread that waits for a command buffer runs the queue's work itself
// instead of sleeping while a background thread does it: that keeps a
// synchronous small dispatch in the microseconds.
import Foundation

public final class CPUCommandQueue: MTLCommandQueue, @unchecked Sendable {
    let device: CPUDevice
    private let lock = NSCondition()
    private var pending: [CPUCommandBuffer] = []
    private var running = false   // a thread is executing pending work
    private var scheduled = false // a background run is on its way

    init(device: CPUDevice) { self.device = device }

    public func makeCommandBuffer() -> (any MTLCommandBuffer)? { CPUCommandBuffer(queue: self) }

    func enqueue(_ buffer: CPUCommandBuffer) {
        lock.lock()
        pending.append(buffer)
        let kick = !running && !scheduled
        if kick { scheduled = true }
        lock.unlock()
        if kick { scheduleBackgroundRun() }
    }

    /// Work runs in the background a moment after it is committed; a caller
    /// that commits and then waits (the common synchronous case) usually gets
    /// there first and runs it on its own thread, without a thread handoff.
    private func scheduleBackgroundRun() {
        DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(50)) {
            self.lock.lock()
            self.scheduled = false
            guard !self.running, !self.pending.isEmpty else { self.lock.unlock(); return }
            self.running = true
            self.lock.unlock()
            self.drain(until: nil)
        }
    }

    /// Runs pending command buffers in order on this thread (which owns
    /// `running`) until the queue is empty or `target` has finished.
    private func drain(until target: CPUCommandBuffer?) {
        while true {
            lock.lock()
            if pending.isEmpty || (target?.isFinished ?? false) {
                running = false
                let kick = !pending.isEmpty && !scheduled
                if kick { scheduled = true }
                lock.broadcast()
                lock.unlock()
                if kick { scheduleBackgroundRun() }
                return
            }
            let next = pending.removeFirst()
            lock.unlock()
            next.execute()
            lock.lock()
            lock.broadcast()
            lock.unlock()
        }
    }

    func wait(for buffer: CPUCommandBuffer) {
        lock.lock()
        while !buffer.isFinished {
            if !running {
                running = true
                lock.unlock()
                drain(until: buffer)
                lock.lock()
            } else {
                lock.wait()
            }
        }
        lock.unlock()
    }
}

public final class CPUCommandBuffer: MTLCommandBuffer, @unchecked Sendable {
    private let queue: CPUCommandQueue
    private let lock = Lock()
    private var commands: [CPUDispatch] = []
    private var handlers: [MTLCommandBufferHandler] = []
    private var state: MTLCommandBufferStatus = .notEnqueued
    private var failure: (any Error)?
    private var started: Double = 0
    private var ended: Double = 0
    private var encoderOpen = false

    init(queue: CPUCommandQueue) { self.queue = queue }

    public var status: MTLCommandBufferStatus { lock { state } }
    public var error: (any Error)? { lock { failure } }
    public var gpuStartTime: CFTimeInterval { lock { started } }
    public var gpuEndTime: CFTimeInterval { lock { ended } }
    var isFinished: Bool { lock { state == .completed || state == .error } }

    public func makeComputeCommandEncoder() -> (any MTLComputeCommandEncoder)? {
        makeComputeCommandEncoder(dispatchType: .serial)
    }

    public func makeComputeCommandEncoder(dispatchType: MTLDispatchType) -> (any MTLComputeCommandEncoder)? {
        lock {
            guard state == .notEnqueued, !encoderOpen else { return nil }
            encoderOpen = true
            return CPUComputeCommandEncoder(commandBuffer: self)
        }
    }

    func finishEncoding(_ encoded: [CPUDispatch]) {
        lock {
            commands.append(contentsOf: encoded)
            encoderOpen = false
        }
    }

    public func addCompletedHandler(_ block: @escaping MTLCommandBufferHandler) {
        lock { handlers.append(block) }
    }

    public func commit() {
        let ok: Bool = lock {
            guard state == .notEnqueued else { return false }
            state = .committed
            return true
        }
        if ok { queue.enqueue(self) }
    }

    public func waitUntilCompleted() {
        guard lock({ state != .notEnqueued }) else { return }
        queue.wait(for: self)
    }

    /// Runs every dispatch in order (dispatches in a serial encoder see each
    /// other's writes), then releases what the commands retained.
    func execute() {
        let work: [CPUDispatch] = lock {
            state = .scheduled
            started = Platform.now()
            return commands
        }
        var failed: (any Error)?
        for command in work {
            if let error = command.run() { failed = error; break }
        }
        let done: [MTLCommandBufferHandler] = lock {
            ended = Platform.now()
            commands = []
            failure = failed
            state = failed == nil ? .completed : .error
            let list = handlers
            handlers = []
            return list
        }
        for handler in done { handler(self) }
    }
}
