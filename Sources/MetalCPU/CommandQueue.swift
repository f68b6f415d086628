// Command queues run committed command buffers in order, asynchronously.
// A thread that waits for a command buffer runs the queue's work itself
// instead of sleeping while a background thread does it: that keeps a
// synchronous small dispatch in the microseconds, with no other thread woken.
// Work that nobody waits for is run by the background runner (below) once it
// has been pending for a tick.
import CMetalCPU

/// What stops running kernels (guard.c): a time limit per dispatch, as a GPU's
/// watchdog has, and cancelling all work.
public enum CPUKernelControl {
    /// Seconds one dispatch may run before its command buffer fails as timed
    /// out (0: no limit); initially PYMETAL_KERNEL_TIMEOUT, else 30.
    public static var timeout: Double { pm_host_kernel_timeout() }

    /// Returns false for a value that is not a finite number of seconds >= 0.
    public static func setTimeout(_ seconds: Double) -> Bool { pm_host_set_kernel_timeout(seconds) == 0 }

    /// Stops every running and committed command buffer: they fail as interrupted.
    public static func cancelAll() { pm_host_cancel_all() }
}

/// fork(): the child has only the thread that forked, none of the threads that
/// run work (the background runner, waiters draining a queue, the worker pool).
/// The caller (PyMetalCore's ForkSafety) takes its own locks first, then calls
/// `prepare`, which takes the runner's and the queues' locks (the order they
/// nest), and `parent` or `child` after the fork. In the child, the command
/// buffer that was running fails ("running when the process forked": its
/// writes are only partly in the child's memory); committed work that had not
/// started runs in the child when waited for; new work starts a new runner.
public enum CPUFork {
    private static let lock = Condition()
    nonisolated(unsafe) private static var queues: [Weak] = []
    private struct Weak { weak var queue: CPUCommandQueue? }

    static func register(_ queue: CPUCommandQueue) {
        lock.lock()
        queues.removeAll { $0.queue == nil }
        queues.append(Weak(queue: queue))
        lock.unlock()
    }

    public static func prepare() {
        lock.lock()
        BackgroundRunner.shared.condition.lock()
        for entry in queues { entry.queue?.lock.lock() }
    }

    public static func parent() {
        for entry in queues.reversed() { entry.queue?.lock.unlock() }
        BackgroundRunner.shared.condition.unlock()
        lock.unlock()
    }

    public static func child() {
        for entry in queues { entry.queue?.afterForkInChild() }
        BackgroundRunner.shared.afterForkInChild()
        leavesLock.reinitialize()
        for leaf in leaves { leaf.reinitialize() }
        lock.initialize()
    }

    /// Locks held only for a few instructions of their own (a cache's lookup or
    /// insert; no other lock is taken under them): not taken before fork(), which
    /// would order them among the others, but made unlocked in the child, where
    /// the thread that may have held one does not exist.
    nonisolated(unsafe) private static var leaves: [Lock] = []
    private static let leavesLock = Lock()

    static func leaf(_ lock: Lock) -> Lock {
        leavesLock { leaves.append(lock) }
        return lock
    }

    /// A command buffer the caller holds, in the child: its lock may have been
    /// held by a thread the child does not have.
    public static func repair(_ commandBuffer: any MTLCommandBuffer) {
        (commandBuffer as? CPUCommandBuffer)?.lock.reinitialize()
    }
}

public final class CPUCommandQueue: MTLCommandQueue, @unchecked Sendable {
    let device: CPUDevice
    fileprivate let lock = Condition()
    private var pending: [CPUCommandBuffer] = []
    private var running = false    // a thread is executing pending work
    private var executing: CPUCommandBuffer? // the one it runs
    private var committed: UInt64 = 0 // command buffers committed so far: their sequence numbers
    private var seenHead: UInt64 = 0  // the head's sequence number at the background runner's last tick
    private var watched = false       // in the background runner's list
    let logState: CPULogState?        // MTLCommandQueueDescriptor.logState: its command buffers' os_log messages

    init(device: CPUDevice, logState: CPULogState? = nil) {
        self.device = device
        self.logState = logState
        CPUFork.register(self)
    }

    /// In a fork()'s child, with the lock taken before the fork: no thread runs
    /// the queue's work any more; the command buffer that was running fails.
    fileprivate func afterForkInChild() {
        executing?.failAfterFork()
        for buffer in pending { buffer.lock.reinitialize() }
        executing = nil
        running = false
        watched = false // the runner's list is empty in the child: the next commit adds the queue
        seenHead = 0
        lock.initialize()
    }

    public func makeCommandBuffer() -> (any MTLCommandBuffer)? { CPUCommandBuffer(queue: self) }

    func enqueue(_ buffer: CPUCommandBuffer) {
        lock.lock()
        committed += 1
        buffer.sequence = committed
        pending.append(buffer)
        let watch = !watched
        watched = true
        lock.unlock()
        if watch { BackgroundRunner.shared.watch(self) }
    }

    /// Runs pending command buffers in order on this thread (which owns
    /// `running`) until the queue is empty or `target` has finished.
    private func drain(until target: CPUCommandBuffer?) {
        lock.lock()
        while !pending.isEmpty && !(target?.isFinished ?? false) {
            let next = pending.removeFirst()
            executing = next
            lock.unlock()
            next.execute()
            lock.lock()
            executing = nil
            lock.broadcast()
        }
        running = false
        lock.broadcast()
        lock.unlock()
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

    /// The background runner's tick: runs the pending work if its head was
    /// already pending at the previous tick and nobody has started it since.
    /// Returns false when the queue has nothing left for the runner to watch.
    fileprivate func tick() -> Bool {
        lock.lock()
        guard !running, let head = pending.first?.sequence else {
            let busy = running
            lock.unlock()
            return busy
        }
        guard head == seenHead else {
            seenHead = head
            lock.unlock()
            return true
        }
        running = true
        lock.unlock()
        drain(until: nil)
        return true
    }

    /// Stops the runner's watch if the queue has nothing pending (called under the
    /// runner's lock, so that a commit that finds the queue unwatched re-adds it after this).
    fileprivate func unwatchIfIdle() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard pending.isEmpty && !running else { return false }
        watched = false
        return true
    }
}

/// One thread for the whole process that runs committed work nobody waits
/// for. It ticks every `interval` while some queue has work, and sleeps
/// without a timeout when none has: no thread wakes up when nothing is queued.
/// A commit of a watched queue costs nothing here; a queue is added (and the
/// runner, if asleep, signalled) when it gets work after being idle.
final class BackgroundRunner: @unchecked Sendable {
    static let shared = BackgroundRunner()
    /// Committed work waits one to two ticks before the runner takes it, unless a waiter runs it first.
    static let interval = 0.0005

    fileprivate let condition = Condition()
    private var queues: [CPUCommandQueue] = [] // strong: committed work runs even if its queue is dropped
    private var asleep = false
    private var started = false

    func watch(_ queue: CPUCommandQueue) {
        condition.lock()
        defer { condition.unlock() }
        queues.append(queue)
        if asleep {
            asleep = false
            condition.signal()
        } else if !started {
            // Without the thread (the system refused one), work still runs when waited for; retried at the next watch.
            started = Platform.startThread { [unowned self] in
                pm_host_name_thread("MetalCPU runner")
                self.loop()
            }
        }
    }

    /// In a fork()'s child (the lock taken before the fork): the runner thread is
    /// not there; the next watch starts one.
    fileprivate func afterForkInChild() {
        queues = []
        asleep = false
        started = false
        condition.initialize()
    }

    private func loop() {
        condition.lock()
        while true {
            if queues.isEmpty {
                asleep = true
                while asleep { condition.wait() }
                continue
            }
            condition.wait(seconds: Self.interval)
            let watched = queues
            condition.unlock()
            var idle: [CPUCommandQueue] = []
            for queue in watched where !queue.tick() { idle.append(queue) }
            condition.lock()
            // Drop queues that are still idle now: a commit since the tick keeps its queue watched.
            for queue in idle where queue.unwatchIfIdle() { queues.removeAll { $0 === queue } }
        }
    }
}

public final class CPUCommandBuffer: MTLCommandBuffer, @unchecked Sendable {
    private let queue: CPUCommandQueue
    fileprivate let lock = Lock()
    private var commands: [CPUDispatch] = []
    private var retained: [any MTLBuffer] = []
    let arena = Arena() // its dispatches' launch records and setBytes data, for all its encoders
    private var handlers: [MTLCommandBufferHandler] = []
    private var state: MTLCommandBufferStatus = .notEnqueued
    private var failure: (any Error)?
    private var failedAt = 0 // the dispatch that failed: the ones before it ran
    private var started: Double = 0
    private var ended: Double = 0
    private var encoderOpen = false
    var sequence: UInt64 = 0 // set by the queue when committed
    private var generation: UInt64 = 0 // pm_interrupt_generation() at commit: an interrupt since cancels it

    init(queue: CPUCommandQueue) { self.queue = queue }

    public var status: MTLCommandBufferStatus { lock { state } }
    public var error: (any Error)? { lock { failure } }
    /// How many of its dispatches ran before the one that failed (pymetal's own query; Metal has none).
    public var failedCommand: Int { lock { failedAt } }
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

    func finishEncoding(_ encoded: [CPUDispatch], retaining buffers: [any MTLBuffer]) {
        lock {
            if commands.isEmpty { commands = encoded } else { commands.append(contentsOf: encoded) }
            if retained.isEmpty { retained = buffers } else { retained.append(contentsOf: buffers) }
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
            generation = pm_interrupt_generation()
            return true
        }
        if ok { queue.enqueue(self) }
    }

    public func waitUntilCompleted() {
        guard lock({ state != .notEnqueued }) else { return }
        pm_waiting(1) // Ctrl-C now stops the work (guard.c)
        queue.wait(for: self)
        pm_waiting(-1)
    }

    /// In a fork()'s child: it was running on a thread the child does not have,
    /// and its writes are in the child's memory only in part.
    fileprivate func failAfterFork() {
        lock.reinitialize()
        lock {
            commands = []
            retained = []
            handlers = []
            failure = MTLCommandBufferError(message: "this command buffer was running when the process forked: "
                + "this process (the child) has only part of its results; run the work again in the child")
            failedAt = 0
            state = .error
        }
    }

    /// Runs every dispatch in order (dispatches in a serial encoder see each
    /// other's writes), then releases what the commands used.
    func execute() {
        let (work, committedGeneration): ([CPUDispatch], UInt64) = lock {
            state = .scheduled
            started = Platform.now()
            return (commands, generation)
        }
        var failed: (any Error)?
        var index = 0
        let job = pm_job_begin(committedGeneration) // watched for its timeout until pm_job_end
        let logState = queue.logState
        if let logState { pm_job_set_log_buffer(job, logState.buffer) }
        for command in work {
            pm_job_next_dispatch(job)
            if let error = command.run(in: job) { failed = error; break }
            index += 1
        }
        pm_job_end(job)
        logState?.deliver() // before it completes: whoever waits for it finds its messages delivered
        let done: [MTLCommandBufferHandler] = lock {
            ended = Platform.now()
            commands = []
            retained = []
            failure = failed
            failedAt = index
            state = failed == nil ? .completed : .error
            let list = handlers
            handlers = []
            return list
        }
        for handler in done { handler(self) }
    }
}
