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
        do {
            pipeline = try device.makeComputePipelineState(function: function)
        } catch {
            throw EngineError(.compile, "cannot make a pipeline for '\(name)': \(describe(error))")
        }
        let kernel = Kernel(name: name, pipeline: pipeline, library: self)
        return lock {
            if let raced = kernels[name] { return raced }
            kernels[name] = kernel
            return kernel
        }
    }
}

public final class Kernel: @unchecked Sendable {
    public let name: String
    public let pipeline: any MTLComputePipelineState
    public let library: Library

    init(name: String, pipeline: any MTLComputePipelineState, library: Library) {
        self.name = name
        self.pipeline = pipeline
        self.library = library
    }

    public var maxThreads: Int { pipeline.maxTotalThreadsPerThreadgroup }
    public var executionWidth: Int { pipeline.threadExecutionWidth }
    public var staticThreadgroupMemory: Int { pipeline.staticThreadgroupMemoryLength }
}
