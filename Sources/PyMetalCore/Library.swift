// A library of kernels, with its compute pipelines cached by function name.
#if canImport(Metal)
import Metal
#else
import MetalCPU
#endif

public final class Library: @unchecked Sendable {
    public let library: any MTLLibrary
    public let functionNames: [String]
    private let device: any MTLDevice
    private let lock = Lock()
    private var kernels: [String: Kernel] = [:]

    init(_ library: any MTLLibrary, device: any MTLDevice) {
        self.library = library
        self.device = device
        functionNames = library.functionNames.sorted()
    }

    /// The pipeline for `name`, made once per library.
    public func kernel(named name: String) throws -> Kernel {
        if let cached = lock({ kernels[name] }) { return cached }
        guard let function = library.makeFunction(name: name) else {
            let known = functionNames.isEmpty ? "the library has no kernels" : "available: " + functionNames.joined(separator: ", ")
            throw EngineError(.notFound, "no kernel function named '\(name)' (\(known))")
        }
        let pipeline: any MTLComputePipelineState
        var reflection: MTLComputePipelineReflection?
        do {
            pipeline = try device.makeComputePipelineState(function: function, options: .bindingInfo, reflection: &reflection)
        } catch {
            throw EngineError(.compile, "cannot make a pipeline for '\(name)': \(describe(error))")
        }
        let kernel = Kernel(name: name, pipeline: pipeline, bufferAccess: Kernel.bufferAccess(reflection), library: self)
        return lock {
            if let raced = kernels[name] { return raced }
            kernels[name] = kernel
            return kernel
        }
    }
}

/// How a kernel uses a [[buffer(n)]] binding (the values of pymetal.h's pm_access).
public enum BufferAccess: Int32 {
    case unused = 0     // no parameter binds it, or the compiler found it unused
    case readOnly = 1   // `device const T*`, `constant T&`, ...: the kernel cannot write it
    case readWrite = 2  // the kernel may write it (also when there is no reflection)
}

public final class Kernel: @unchecked Sendable {
    public let name: String
    public let pipeline: any MTLComputePipelineState
    /// Weak: the library caches its kernels, and a strong reference back would
    /// keep both (and the library's code) alive for ever. The pipeline keeps
    /// what it runs loaded by itself.
    public private(set) weak var library: Library?
    /// Per buffer index 0...30: lets callers skip copying read-only buffers back.
    public let bufferAccess: [BufferAccess]

    init(name: String, pipeline: any MTLComputePipelineState, bufferAccess: [BufferAccess], library: Library) {
        self.name = name
        self.pipeline = pipeline
        self.bufferAccess = bufferAccess
        self.library = library
    }

    /// From the pipeline's reflection (Metal's, or MetalCPU's from the kernel's
    /// binding table); without one every index may be written.
    static func bufferAccess(_ reflection: MTLComputePipelineReflection?) -> [BufferAccess] {
        guard let reflection else { return Array(repeating: .readWrite, count: Stream.maxBindings) }
        var access = Array(repeating: BufferAccess.unused, count: Stream.maxBindings)
        for binding in reflection.bindings where binding.type == .buffer && binding.isUsed && access.indices.contains(binding.index) {
            access[binding.index] = binding.access == .readOnly ? .readOnly : .readWrite
        }
        return access
    }

    public var maxThreads: Int { pipeline.maxTotalThreadsPerThreadgroup }
    public var executionWidth: Int { pipeline.threadExecutionWidth }
    public var staticThreadgroupMemory: Int { pipeline.staticThreadgroupMemoryLength }
}
