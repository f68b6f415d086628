// The CPU as a Metal device: shared memory is simply host memory.
import CMetalCPU
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

public final class CPUDevice: MTLDevice, @unchecked Sendable {
    public static let shared = CPUDevice()

    public let name = "CPU (\(Platform.cpuName()), MSL on \(Platform.cpuCount) cores)"
    public var hasUnifiedMemory: Bool { true }
    /// Also the most that all buffers made here may take together (see CPUBuffer):
    /// a process over its cgroup's limit is killed, so an allocation past it fails.
    public var recommendedMaxWorkingSetSize: UInt64 { Platform.memoryLimit / 4 * 3 }
    /// Bytes of the buffers made here that are alive (Metal's currentAllocatedSize).
    public var currentAllocatedSize: Int { Int(CPUBuffer.budget.used) }
    public var maxThreadsPerThreadgroup: MTLSize { MTLSize(width: 1024, height: 1024, depth: 1024) }
    public var maxThreadgroupMemoryLength: Int { Int(PM_MAX_THREADGROUP_MEMORY) }  // as Apple GPUs
    public var maxBufferLength: Int { Int(min(Platform.memoryLimit / 2, UInt64(Int32.max) * 16)) }

    public func makeCommandQueue() -> (any MTLCommandQueue)? { CPUCommandQueue(device: self) }

    /// A log state made elsewhere than here is not one MetalCPU can deliver to: refused (nil).
    public func makeCommandQueue(descriptor: MTLCommandQueueDescriptor) -> (any MTLCommandQueue)? {
        guard let logState = descriptor.logState else { return makeCommandQueue() }
        guard let state = logState as? CPULogState else { return nil }
        return CPUCommandQueue(device: self, logState: state)
    }

    public func makeLogState(descriptor: MTLLogStateDescriptor) throws -> any MTLLogState {
        try CPULogState(descriptor)
    }

    public func makeBuffer(length: Int, options: MTLResourceOptions) -> (any MTLBuffer)? {
        guard length > 0, length <= maxBufferLength else { return nil }
        return CPUBuffer(allocating: length)
    }

    public func makeBuffer(bytes pointer: UnsafeRawPointer, length: Int, options: MTLResourceOptions) -> (any MTLBuffer)? {
        guard let buffer = CPUBuffer(allocating: length), length <= maxBufferLength else { return nil }
        buffer.contents().copyMemory(from: pointer, byteCount: length)
        return buffer
    }

    public func makeBuffer(bytesNoCopy pointer: UnsafeMutableRawPointer, length: Int, options: MTLResourceOptions,
                           deallocator: ((UnsafeMutableRawPointer, Int) -> Void)?) -> (any MTLBuffer)? {
        // As on Apple Silicon: the region must start and end on a 16 KiB page.
        let page = Platform.metalPageSize
        guard length > 0, Int(bitPattern: pointer) % page == 0, length % page == 0 else { return nil }
        return CPUBuffer(wrapping: pointer, length: length, deallocator: deallocator)
    }

    public func makeLibrary(URL url: URL) throws -> any MTLLibrary {
        try CPULibrary(loading: url)
    }

    public func makeLibrary(source: String, options: MTLCompileOptions?) throws -> any MTLLibrary {
        try MSLCompiler.shared.makeLibrary(source: source, options: Self.withLogging(options ?? MTLCompileOptions()))
    }

    /// Options with enableLogging are compiled with PM_KERNEL_LOGGING defined (pm_msl/logging.h: os_log logs).
    private static func withLogging(_ options: MTLCompileOptions) -> MTLCompileOptions {
        guard options.enableLogging else { return options }
        let copy = MTLCompileOptions()
        copy.preprocessorMacros = (options.preprocessorMacros ?? [:]).merging(["PM_KERNEL_LOGGING": 1]) { _, new in new }
        copy.fastMathEnabled = options.fastMathEnabled
        copy.mathMode = options.mathMode
        copy.languageVersion = options.languageVersion
        copy.enableLogging = true
        return copy
    }

    public func makeComputePipelineState(function: any MTLFunction) throws -> any MTLComputePipelineState {
        guard let function = function as? CPUFunction else {
            throw MTLPipelineError(message: "function was not made by this device")
        }
        guard function.unsetConstants.isEmpty else {
            throw MTLPipelineError(message: "'\(function.name)' uses function constants without a value ("
                + function.unsetConstants.joined(separator: ", ") + "): make it with makeFunction(name:constantValues:)")
        }
        return try CPUPipelineState(function: function)
    }

    public func makeComputePipelineState(function: any MTLFunction, options: MTLPipelineOption,
                                         reflection: UnsafeMutablePointer<MTLComputePipelineReflection?>?) throws
        -> any MTLComputePipelineState {
        let pipeline = try makeComputePipelineState(function: function)
        if let reflection, let function = function as? CPUFunction {
            let bindings = options.contains(.bindingInfo) ? function.bindings.compactMap(CPUBinding.init) : []
            reflection.pointee = MTLComputePipelineReflection(bindings: bindings)
        }
        return pipeline
    }

    public func supportsFamily(_ gpuFamily: MTLGPUFamily) -> Bool { false }
}

public final class CPUBuffer: MTLBuffer, @unchecked Sendable {
    private let pointer: UnsafeMutableRawPointer
    public let length: Int
    private let deallocator: ((UnsafeMutableRawPointer, Int) -> Void)?
    private let owned: Bool

    /// The bytes of all live buffers allocated here, at most the device's
    /// recommended working set (a process past its cgroup's limit is killed).
    final class Budget: @unchecked Sendable {
        private let lock = CPUFork.leaf(Lock())
        private var bytes: UInt64 = 0
        var used: UInt64 { lock { bytes } }
        func take(_ n: Int) -> Bool {
            lock {
                guard bytes + UInt64(n) <= CPUDevice.shared.recommendedMaxWorkingSetSize else { return false }
                bytes += UInt64(n)
                return true
            }
        }
        func give(_ n: Int) { lock { bytes -= UInt64(n) } }
    }
    static let budget = Budget()

    private static func rounded(_ length: Int) -> Int {
        let page = Platform.metalPageSize
        return (max(length, 1) + page - 1) / page * page
    }

    init?(allocating length: Int) {
        let rounded = Self.rounded(length)
        guard Self.budget.take(rounded) else { return nil }
        guard let memory = Platform.alignedAllocate(rounded, alignment: Platform.metalPageSize) else {
            Self.budget.give(rounded)
            return nil
        }
        pointer = memory
        self.length = length
        deallocator = nil
        owned = true
    }

    init(wrapping pointer: UnsafeMutableRawPointer, length: Int, deallocator: ((UnsafeMutableRawPointer, Int) -> Void)?) {
        self.pointer = pointer
        self.length = length
        self.deallocator = deallocator
        owned = false
    }

    deinit {
        if owned {
            free(pointer)
            Self.budget.give(Self.rounded(length))
        } else {
            deallocator?(pointer, length)
        }
    }

    public func contents() -> UnsafeMutableRawPointer { pointer }
}
