// Shader logging (Metal 3.2, macOS 15): Apple's API for it, with Apple's names.
// A library compiled with MTLCompileOptions.enableLogging logs (its os_log calls
// do nothing otherwise); a log state made by makeLogState(descriptor:) and
// attached to a command queue (MTLCommandQueueDescriptor.logState) receives the
// messages of the kernels its command buffers run, and hands each to the
// handlers added with addLogHandler. Here a command buffer's messages go to its
// log state's buffer while it runs (kernel_log.c) and to the handlers, in the
// order they were logged, on the thread that ran it, before it completes.
import CMetalCPU

public enum MTLLogLevel: Int, Sendable {
    case undefined = 0, debug, info, notice, error, fault
}

public final class MTLLogStateDescriptor: @unchecked Sendable {
    /// The lowest level stored: messages below it are not (Apple's default: debug).
    public var level: MTLLogLevel = .debug
    /// Bytes of messages held (1 KiB...1 GiB; Apple's default: 1 MB); past it, messages are dropped.
    /// Here a message takes its text, subsystem and category with their NULs, from when it is
    /// logged until its command buffer has run; Metal's encoding of a message differs.
    public var bufferSize: Int = 1 << 20
    public init() {}
}

public struct MTLLogStateError: Error, CustomStringConvertible {
    public enum Code: UInt, Sendable { case invalidSize = 1, invalid = 2 }
    public let code: Code
    public let message: String
    public var description: String { message }
}

public typealias MTLLogHandler = @Sendable (String?, String?, MTLLogLevel, String) -> Void

public protocol MTLLogState: AnyObject, Sendable {
    /// Apple: (subsystem, category, level, message); os_log_default's subsystem and category are nil.
    func addLogHandler(_ block: @escaping @Sendable (String?, String?, MTLLogLevel, String) -> Void)
}

public final class MTLCommandQueueDescriptor: @unchecked Sendable {
    public var maxCommandBufferCount: Int = 64
    public var logState: (any MTLLogState)?
    public init() {}
}

public final class CPULogState: MTLLogState, @unchecked Sendable {
    let buffer: OpaquePointer // pm_log_buffer
    private let lock = CPUFork.leaf(Lock())
    private var handlers: [MTLLogHandler] = []
    // One delivery at a time, so that messages reach the handlers in order (made
    // unlocked in a fork's child, where the thread delivering may be missing).
    private let delivering = CPUFork.leaf(Lock())
    private var dropped: UInt64 = 0
    /// Messages dropped so far because the buffer was full (MetalCPU's own count; Metal reports none).
    public var droppedMessages: UInt64 { lock { dropped } }

    init(_ descriptor: MTLLogStateDescriptor) throws {
        guard (1024...(1 << 30)).contains(descriptor.bufferSize) else {
            throw MTLLogStateError(code: .invalidSize, message: "log state bufferSize \(descriptor.bufferSize) is "
                + "outside 1024...1073741824 bytes")
        }
        let level = descriptor.level == .undefined ? MTLLogLevel.debug : descriptor.level
        guard let buffer = pm_log_buffer_create(UInt64(descriptor.bufferSize), UInt32(level.rawValue)) else {
            throw MTLLogStateError(code: .invalid, message: "cannot allocate a log state: out of memory")
        }
        self.buffer = buffer
    }

    deinit { pm_log_buffer_destroy(buffer) }

    public func addLogHandler(_ block: @escaping @Sendable (String?, String?, MTLLogLevel, String) -> Void) {
        lock { handlers.append(block) }
    }

    /// Hands the messages held to the handlers (called by a command buffer that has run).
    /// Without handlers, Metal sends them to the unified log; here they are dropped.
    func deliver() {
        guard pm_log_buffer_pending(buffer) != 0 else { return } // most command buffers log nothing
        delivering {
            var lost: UInt64 = 0
            let list = pm_log_buffer_take(buffer, &lost)
            defer { pm_log_records_free(list) }
            let handlers: [MTLLogHandler] = lock {
                dropped += lost
                return self.handlers
            }
            func text(_ s: UnsafePointer<CChar>) -> String? { s.pointee == 0 ? nil : String(cString: s) }
            var record: UnsafeMutablePointer<pm_log_record>? = list
            while let r = record {
                let level = MTLLogLevel(rawValue: Int(r.pointee.level)) ?? .notice
                let message = String(cString: r.pointee.message)
                for handler in handlers {
                    handler(text(r.pointee.subsystem), text(r.pointee.category), level, message)
                }
                record = r.pointee.next
            }
        }
    }
}
