// Kernel libraries: shared objects made by MSLCompiler, loaded with dlopen.
import CMetalCPU
import Foundation

public final class CPULibrary: MTLLibrary, @unchecked Sendable {
    let kernels: [String: (desc: pm_kernel_desc, bindings: [pm_binding])]
    public let functionNames: [String]
    public let url: URL
    /// Function constants: (name, index, declared type, the kernels that use the value).
    let constants: [(name: String, index: Int, type: MTLDataType, kernels: Set<String>)]
    /// The source and options a library was compiled from (nil for a library file):
    /// specialising a function for function constant values compiles them again.
    let origin: (source: String, options: MTLCompileOptions)?
    /// Compiled with function constant values (for one makeFunction(name:constantValues:)).
    let specialized: Bool

    init(loading url: URL, origin: (source: String, options: MTLCompileOptions)? = nil, specialized: Bool = false) throws {
        self.url = url
        self.origin = origin
        self.specialized = specialized
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw MTLLibraryError(code: .fileNotFound, message: "no library file at \(url.path)")
        }
        // Kernel libraries stay loaded for the life of the process: pipelines,
        // in-flight command buffers and per-thread runtime state point into them,
        // and dlopen returns the same handle when a cached library is loaded again.
        guard let handle = dlopen(url.path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw MTLLibraryError(code: .internalError, message: "cannot load \(url.path): \(reason)")
        }
        guard let symbol = dlsym(handle, PM_LIBRARY_SYMBOL) else {
            throw MTLLibraryError(code: .internalError,
                                  message: "\(url.path) is not a MetalCPU kernel library (no \(PM_LIBRARY_SYMBOL))")
        }
        let describe = unsafeBitCast(symbol, to: pm_library_fn.self)
        var list: UnsafePointer<pm_kernel_desc>?
        var count: UInt32 = 0
        let version = describe(&list, &count)
        guard version == PM_KERNEL_ABI_VERSION else {
            throw MTLLibraryError(code: .internalError, message:
                "\(url.path) was built for kernel ABI \(version), this MetalCPU needs \(PM_KERNEL_ABI_VERSION): rebuild it")
        }
        guard let table = dlsym(handle, PM_BINDINGS_SYMBOL)?.assumingMemoryBound(to: pm_kernel_bindings.self) else {
            throw MTLLibraryError(code: .internalError, message: "\(url.path) has no \(PM_BINDINGS_SYMBOL) table")
        }
        var kernels: [String: (desc: pm_kernel_desc, bindings: [pm_binding])] = [:]
        var names: [String] = []
        for index in 0..<Int(count) {
            let desc = list![index]
            let name = String(cString: desc.name)
            let entry = table[index]
            let bindings = entry.count == 0 ? [] : Array(UnsafeBufferPointer(start: entry.bindings, count: Int(entry.count)))
            if kernels[name] == nil { names.append(name) }
            kernels[name] = (desc, bindings)
        }
        self.kernels = kernels
        functionNames = names
        var constants: [(name: String, index: Int, type: MTLDataType, kernels: Set<String>)] = []
        if var row = dlsym(handle, PM_FUNCTION_CONSTANTS_SYMBOL)?.assumingMemoryBound(to: pm_function_constant.self) {
            while let name = row.pointee.name {
                let users = String(cString: row.pointee.kernels).split(separator: "\n").map(String.init)
                constants.append((String(cString: name), Int(row.pointee.index), MTLDataType(rawValue: UInt(row.pointee.type)) ?? .none,
                                  Set(users)))
                row += 1
            }
        }
        self.constants = constants
    }

    public func makeFunction(name functionName: String) -> (any MTLFunction)? {
        guard let kernel = kernels[functionName] else { return nil }
        return CPUFunction(name: functionName, desc: kernel.desc, bindings: kernel.bindings, library: self)
    }

    /// Values are looked up by index, then by name; values for constants the library does not
    /// declare are ignored (as Metal does). Compiles the source again with the values.
    public func makeFunction(name: String, constantValues: MTLFunctionConstantValues) throws -> any MTLFunction {
        guard let function = makeFunction(name: name) else {
            throw MTLLibraryError(code: .functionNotFound, message: "no function named '\(name)' in the library")
        }
        guard !constants.isEmpty else { return function }
        var values: [Int: FunctionConstantValue] = [:]
        for constant in constants {
            guard let value = constantValues.byIndex[constant.index] ?? constantValues.byName[constant.name] else {
                if constant.kernels.contains(name) {
                    throw MTLLibraryError(code: .compileFailure, message: "function constant '\(constant.name)' (index "
                        + "\(constant.index), \(constant.type)) of '\(name)' has no value: give it one by index or by name")
                }
                continue
            }
            if value.type != constant.type.rawValue {
                let given = MTLDataType(rawValue: value.type).map { "\($0)" } ?? "MTLDataType \(value.type)"
                throw MTLLibraryError(code: .compileFailure, message: "function constant '\(constant.name)' (index "
                    + "\(constant.index)) is declared \(constant.type) but was given a \(given) value")
            }
            values[constant.index] = value
        }
        guard let origin else {
            throw MTLLibraryError(code: .unsupported, message: "\(url.path) is a library file: MetalCPU specialises "
                + "function constants by compiling the source again (make the library from source)")
        }
        let url = try MSLCompiler.shared.compile(source: origin.source, options: origin.options, constantValues: values)
        let library = try CPULibrary(loading: url, origin: origin, specialized: true)
        return library.makeFunction(name: name)!
    }
}

public final class CPUFunction: MTLFunction, @unchecked Sendable {
    public let name: String
    let desc: pm_kernel_desc
    let bindings: [pm_binding]
    let library: CPULibrary // keeps the kernel's code loaded
    public var functionConstantsDictionary: [String: MTLFunctionConstant] {
        Dictionary(library.constants.map { ($0.name, MTLFunctionConstant(name: $0.name, type: $0.type, index: $0.index,
                                                                         required: $0.kernels.contains(name))) },
                   uniquingKeysWith: { first, _ in first })
    }
    /// The function constants whose value it uses and does not have (a library compiled without values).
    var unsetConstants: [String] {
        library.specialized ? [] : library.constants.filter { $0.kernels.contains(name) }.map { "\($0.name) [\($0.index)]" }
    }

    init(name: String, desc: pm_kernel_desc, bindings: [pm_binding], library: CPULibrary) {
        self.name = name
        self.desc = desc
        self.bindings = bindings
        self.library = library
    }
}

public final class CPUPipelineState: MTLComputePipelineState, @unchecked Sendable {
    public let function: CPUFunction
    public let maxTotalThreadsPerThreadgroup: Int
    public var threadExecutionWidth: Int { Int(PM_SIMD_WIDTH) }
    public let staticThreadgroupMemoryLength: Int

    init(function: CPUFunction) throws {
        self.function = function
        let declared = Int(function.desc.max_total_threads)
        maxTotalThreadsPerThreadgroup = declared > 0 ? min(declared, 1024) : 1024
        staticThreadgroupMemoryLength = Int(function.desc.static_threadgroup_bytes)
        if staticThreadgroupMemoryLength > Int(PM_MAX_THREADGROUP_MEMORY) {
            throw MTLPipelineError(message: "kernel '\(function.name)' declares \(staticThreadgroupMemoryLength) bytes "
                + "of threadgroup memory; the limit is \(PM_MAX_THREADGROUP_MEMORY) bytes per threadgroup")
        }
    }
}

/// A buffer or threadgroup parameter, from the library's binding table. Every
/// parameter counts as used: the table lists declared parameters.
final class CPUBinding: MTLBinding, @unchecked Sendable {
    let type: MTLBindingType
    let access: MTLBindingAccess
    let index: Int
    var isUsed: Bool { true }

    init?(_ binding: pm_binding) {
        switch Int(binding.kind) {
        case Int(PM_BIND_BUFFER): type = .buffer
        case Int(PM_BIND_THREADGROUP): type = .threadgroupMemory
        default: return nil
        }
        access = binding.flags & PM_BIND_READ_ONLY != 0 ? .readOnly : .readWrite
        index = Int(binding.index)
    }
}
