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

    /// A function constant's value: its index, MTLDataType raw value and bytes.
    public struct ConstantValue: Hashable {
        public let index: Int
        public let type: UInt
        public let bytes: [UInt8]
        public init(index: Int, type: UInt, bytes: [UInt8]) { self.index = index; self.type = type; self.bytes = bytes }
    }

    /// The function constants `name` declares: (name, index, MTLDataType raw value, whether it needs a value).
    public func functionConstants(named name: String) throws -> [(name: String, index: Int, type: UInt, required: Bool)] {
        guard let function = library.makeFunction(name: name) else { throw notFound(name) }
        return function.functionConstantsDictionary.values.map { ($0.name, $0.index, $0.type.rawValue, $0.required) }
            .sorted { $0.index < $1.index }
    }

    /// Bytes of a scalar or vector MTLDataType's value (3-vectors packed), 0 for others.
    static func size(of type: UInt) -> Int {
        // (first raw value of the family, bytes per element): float, half, int, uint, short, ushort, char, uchar, bool,
        // long, ulong, bfloat; each family is the scalar and its 2-, 3-, 4-vectors.
        let families: [(UInt, Int)] = [(3, 4), (16, 2), (29, 4), (33, 4), (37, 2), (41, 2), (45, 1), (49, 1), (53, 1),
                                       (81, 8), (85, 8), (121, 2)]
        guard let family = families.first(where: { type >= $0.0 && type < $0.0 + 4 }) else { return 0 }
        return family.1 * Int(type - family.0 + 1)
    }

    private func notFound(_ name: String) -> EngineError {
        let known = functionNames.isEmpty ? "the library has no kernels" : "available: " + functionNames.joined(separator: ", ")
        return EngineError(.notFound, "no kernel function named '\(name)' (\(known))")
    }

    /// The pipeline for `name` (specialised with function constant values), made once per library and values.
    public func kernel(named name: String, constants: [ConstantValue] = []) throws -> Kernel {
        let key = constants.isEmpty ? name : name + "\u{0}" + constants.sorted { $0.index < $1.index }
            .map { "\($0.index):\($0.type):\($0.bytes)" }.joined(separator: ";")
        if let cached = lock({ kernels[key] }) { return cached }
        let function: any MTLFunction
        if constants.isEmpty {
            guard let plain = library.makeFunction(name: name) else { throw notFound(name) }
            function = plain
        } else {
            guard library.makeFunction(name: name) != nil else { throw notFound(name) }
            let values = MTLFunctionConstantValues()
            for constant in constants {
                guard let type = MTLDataType(rawValue: constant.type), constant.bytes.count == Self.size(of: constant.type) else {
                    throw EngineError.invalid("function constant \(constant.index): \(constant.bytes.count) bytes are not "
                        + "a value of MTLDataType \(constant.type)")
                }
                constant.bytes.withUnsafeBytes { values.setConstantValue($0.baseAddress!, type: type, index: constant.index) }
            }
            do {
                function = try library.makeFunction(name: name, constantValues: values)
            } catch {
                throw EngineError(.compile, "cannot specialise '\(name)': \(describe(error))")
            }
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
            if let raced = kernels[key] { return raced }
            kernels[key] = kernel
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
    public let library: Library
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
