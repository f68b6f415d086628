// Shader logging: kernels' os_log messages, through Metal's API (macOS 15:
// MTLLogState; the same API in MetalCPU on Linux). Every stream's command queue
// gets a log state whose handler queues each message here, where the C ABI
// (pm_kernel_log_next) takes them for Python's logging. Attaching the log
// state costs nothing measurable (docs: shader logging); what costs is a
// library compiled with logging (Device.compile(logging: true)).
#if canImport(Metal)
import Metal
#else
import MetalCPU
#endif

public enum KernelLog {
    public struct Record {
        public let level: Int // MTLLogLevel's raw value
        public let subsystem, category, message: String
    }

    /// Bytes of messages a log state holds for one command buffer (Metal drops the ones past it).
    static let bufferSize = 1 << 20
    /// Messages waiting for Python at most: past it the oldest are dropped, and the next one says how many.
    static let capacity = 65536

    private static let lock: Lock = { let lock = Lock(); ForkSafety.registerLeaf(lock); return lock }()
    nonisolated(unsafe) private static var records: [Record] = []
    nonisolated(unsafe) private static var head = 0 // records[head...] wait
    nonisolated(unsafe) private static var dropped = 0

    /// A command queue whose command buffers' messages come here; nil before macOS 15 (no shader logging).
    static func makeQueue(_ device: any MTLDevice) -> (any MTLCommandQueue)? {
        guard #available(macOS 15.0, *) else { return nil }
        let descriptor = MTLLogStateDescriptor()
        descriptor.level = .debug
        descriptor.bufferSize = bufferSize
        guard let state = try? device.makeLogState(descriptor: descriptor) else { return nil }
        // Metal calls it on a thread of its own: push takes the lock.
        state.addLogHandler { subsystem, category, level, message in
            push(Record(level: level.rawValue, subsystem: subsystem ?? "", category: category ?? "", message: message))
        }
        let queue = MTLCommandQueueDescriptor()
        queue.logState = state
        return device.makeCommandQueue(descriptor: queue)
    }

    static func push(_ record: Record) {
        lock {
            if records.count - head == capacity {
                head += 1
                dropped += 1
            }
            if head > capacity { // drop the taken ones now and then, not on every take
                records.removeFirst(head)
                head = 0
            }
            records.append(record)
        }
    }

    /// The oldest message not taken yet (its text says how many were dropped before it, if any).
    public static func next() -> Record? {
        lock {
            guard head < records.count else {
                records.removeAll(keepingCapacity: false)
                head = 0
                return nil
            }
            var record = records[head]
            head += 1
            if dropped > 0 {
                record = Record(level: record.level, subsystem: record.subsystem, category: record.category, message:
                    "(\(dropped) earlier messages were dropped: more than \(capacity) were waiting) \(record.message)")
                dropped = 0
            }
            return record
        }
    }
}
