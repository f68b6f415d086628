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
    /// One lock for every library's pipeline cache (held for a lookup or an insert only).
    private static let lock: Lock = {
        let lock = Lock()
        ForkSafety.registerLeaf(lock)
        return lock
    }()
    private var lock: Lock { Self.lock }
    private var kernels: [String: Kernel] = [:]

    static func registerForFork() { _ = lock }

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
        guard let function = try function(named: name) else { throw notFound(name) }
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

    /// makeFunction(name:): MetalCPU compiles a big library's kernels when first asked for, and its errors are thrown.
    private func function(named name: String) throws -> (any MTLFunction)? {
        #if canImport(Metal)
        return library.makeFunction(name: name)
        #else
        if let lazy = library as? LazyCPULibrary {
            do { return try lazy.function(named: name) } catch { throw EngineError(.compile, "cannot compile '\(name)': \(describe(error))") }
        }
        return library.makeFunction(name: name)
        #endif
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
            guard let plain = try self.function(named: name) else { throw notFound(name) }
            function = plain
        } else {
            guard library.functionNames.contains(name) else { throw notFound(name) }
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
        let kernel = Kernel(name: name, pipeline: pipeline, arguments: KernelArgument.list(reflection), library: self)
        return lock {
            if let raced = kernels[key] { return raced }
            kernels[key] = kernel
            return kernel
        }
    }
}

/// How a kernel uses a [[buffer(n)]] binding (the values of pymetal.h's pm_access).
public enum BufferAccess: Int32, Sendable {
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
    /// The [[buffer(n)]] and [[threadgroup(n)]] parameters, in declaration order
    /// (nil when the pipeline gave no reflection: nothing is known).
    public let arguments: [KernelArgument]?
    /// Per buffer index 0...30: lets callers skip copying read-only buffers back.
    public let bufferAccess: [BufferAccess]
    /// Bit i: [[buffer(i)]] is a parameter, which a dispatch must bind.
    let requiredBuffers: UInt32
    /// Bit i: [[threadgroup(i)]] is a parameter, which a dispatch must give memory.
    let requiredThreadgroups: UInt32
    /// Bytes a binding of [[buffer(i)]] must have at least: a reference's or value's size
    /// (fixed storage, read on every dispatch without retaining an array).
    let minimumBytes: UnsafeMutableBufferPointer<Int>

    init(name: String, pipeline: any MTLComputePipelineState, arguments: [KernelArgument]?, library: Library) {
        self.name = name
        self.pipeline = pipeline
        self.arguments = arguments
        self.library = library
        var access = Array(repeating: arguments == nil ? BufferAccess.readWrite : .unused, count: Stream.maxBindings)
        var required: UInt32 = 0
        let minimum = UnsafeMutableBufferPointer<Int>.allocate(capacity: Stream.maxBindings)
        minimum.initialize(repeating: 0)
        for argument in arguments ?? [] where argument.binding == .buffer && argument.isUsed {
            access[argument.index] = argument.access
            required |= 1 << UInt32(argument.index)
            if argument.form == .reference || argument.form == .value { minimum[argument.index] = argument.size }
        }
        bufferAccess = access
        requiredBuffers = required
        requiredThreadgroups = (arguments ?? []).filter { $0.binding == .threadgroup && $0.isUsed }
            .reduce(0) { $0 | 1 << UInt32($1.index) }
        minimumBytes = minimum
    }

    deinit { minimumBytes.deallocate() }

    public var maxThreads: Int { pipeline.maxTotalThreadsPerThreadgroup }
    public var executionWidth: Int { pipeline.threadExecutionWidth }
    public var staticThreadgroupMemory: Int { pipeline.staticThreadgroupMemoryLength }

    /// "[[buffer(1)]] (y: device float*)" for messages.
    func describe(_ binding: KernelArgument.Binding, _ index: Int) -> String {
        let attribute = "[[\(binding == .buffer ? "buffer" : "threadgroup")(\(index))]]"
        guard let argument = arguments?.first(where: { $0.binding == binding && $0.index == index }) else { return attribute }
        return "\(attribute) (\(argument.name.isEmpty ? "" : argument.name + ": ")\(argument.declaration))"
    }
}

/// One kernel parameter bound by the caller: what Metal's reflection reports
/// (MTLBufferBinding / MTLThreadgroupBinding), and on Linux what MetalCPU
/// knows besides (pointer, reference or value; the element type's name).
public struct KernelArgument: Sendable {
    public enum Binding: Int32, Sendable { case buffer = 0, threadgroup = 1 }
    /// The values of pymetal.h's pm_address_space, pm_form and pm_scalar_kind.
    public enum Space: Int32, Sendable { case unknown = 0, device, constant, threadgroup }
    public enum Form: Int32, Sendable { case unknown = 0, pointer, reference, value }
    public enum Scalar: Int32, Sendable { case other = 0, bool, int, uint, float, bfloat }

    public let name: String
    public let binding: Binding
    public let index: Int
    public let space: Space
    public let form: Form
    public let access: BufferAccess
    public let scalar: Scalar
    public let scalarSize: Int
    public let lanes: Int
    /// sizeof the element type (0 when unknown or void).
    public let size: Int
    public let typeName: String
    /// False when Metal's compiler found the parameter unused (a call still passes it; nothing checks it).
    public let isUsed: Bool

    /// `device const float*`, `constant float&`, `threadgroup float*`.
    public var declaration: String {
        let space = ["", "device ", "constant ", "threadgroup "][Int(self.space.rawValue)]
        let const = access == .readOnly && self.space != .constant ? "const " : ""
        let suffix = form == .pointer || binding == .threadgroup ? "*" : form == .reference ? "&" : ""
        return space + const + typeName + suffix
    }

    static func list(_ reflection: MTLComputePipelineReflection?) -> [KernelArgument]? {
        guard let reflection else { return nil }
        return reflection.bindings.compactMap { binding -> KernelArgument? in
            guard binding.index >= 0, binding.index < Stream.maxBindings else { return nil }
            switch binding.type {
            case .buffer: return KernelArgument(buffer: binding)
            case .threadgroupMemory: return KernelArgument(threadgroup: binding)
            default: return nil
            }
        }
    }

    private init(buffer binding: any MTLBinding) {
        name = binding.name
        isUsed = binding.isUsed
        self.binding = .buffer
        index = binding.index
        access = binding.access == .readOnly ? .readOnly : .readWrite
        let dataType = (binding as? any MTLBufferBinding)?.bufferDataType ?? .none
        size = (binding as? any MTLBufferBinding)?.bufferDataSize ?? 0
        let element = Self.element(dataType)
        (scalar, scalarSize, lanes) = (element.0, element.1, element.2)
        #if canImport(Metal)
        typeName = element.3
        // Metal's reflection does not say pointer or reference, nor the address space.
        form = .unknown
        space = access == .readOnly ? .constant : .device
        #else
        let details = binding as? CPUBinding
        form = details.map { [.pointer: .pointer, .reference: .reference, .value: .value][$0.form]! } ?? .unknown
        // The preprocessed source no longer says `constant` or `device const`: a
        // read-only reference or value is taken as `constant`, a pointer as `device`.
        space = access == .readOnly && form != .pointer ? .constant : .device
        typeName = details.map(\.typeName).flatMap { $0.isEmpty ? nil : $0 } ?? element.3
        #endif
    }

    private init(threadgroup binding: any MTLBinding) {
        name = binding.name
        isUsed = binding.isUsed
        self.binding = .threadgroup
        index = binding.index
        access = .readWrite
        space = .threadgroup
        form = .pointer
        size = (binding as? any MTLThreadgroupBinding)?.threadgroupMemoryDataSize ?? 0
        #if canImport(Metal)
        (scalar, scalarSize, lanes, typeName) = (.other, 0, 1, "")
        #else
        let details = binding as? CPUBinding
        let element = Self.element(details?.bufferDataType ?? .none)
        (scalar, scalarSize, lanes) = (element.0, element.1, element.2)
        typeName = details.map(\.typeName).flatMap { $0.isEmpty ? nil : $0 } ?? element.3
        #endif
    }

    /// Lane kind, lane bytes, lanes and name of a Metal data type.
    static func element(_ type: MTLDataType) -> (Scalar, Int, Int, String) {
        let families: [(Scalar, Int, String, [MTLDataType])] = [
            (.bool, 1, "bool", [.bool, .bool2, .bool3, .bool4]),
            (.int, 1, "char", [.char, .char2, .char3, .char4]), (.uint, 1, "uchar", [.uchar, .uchar2, .uchar3, .uchar4]),
            (.int, 2, "short", [.short, .short2, .short3, .short4]), (.uint, 2, "ushort", [.ushort, .ushort2, .ushort3, .ushort4]),
            (.int, 4, "int", [.int, .int2, .int3, .int4]), (.uint, 4, "uint", [.uint, .uint2, .uint3, .uint4]),
            (.int, 8, "long", [.long, .long2, .long3, .long4]), (.uint, 8, "ulong", [.ulong, .ulong2, .ulong3, .ulong4]),
            (.float, 2, "half", [.half, .half2, .half3, .half4]), (.float, 4, "float", [.float, .float2, .float3, .float4]),
        ]
        for (scalar, bytes, name, types) in families {
            if let lanes = types.firstIndex(of: type) {
                return (scalar, bytes, lanes + 1, lanes == 0 ? name : name + "\(lanes + 1)")
            }
        }
        return (.other, 0, 1, type == .struct ? "struct" : "void")
    }
}
