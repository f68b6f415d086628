// Kernel libraries: shared objects made by MSLCompiler, loaded with dlopen.
import CMetalCPU
import Synchronization
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

public final class CPULibrary: MTLLibrary, @unchecked Sendable {
    let kernels: [String: (desc: pm_kernel_desc, bindings: [pm_binding])]
    public let functionNames: [String]
    public let url: URL
    private let handle: UnsafeMutableRawPointer

    /// Unloaded when the last reference goes: functions and pipelines hold
    /// their library, and command buffers their pipelines, so nothing of it can
    /// be running (its kernel runtime frees its per-thread state on unload), and
    /// a process that compiles kernel after kernel keeps only those it uses mapped.
    deinit { dlclose(handle) }

    /// Function constants: (name, index, declared type, the kernels that use the value).
    let constants: [(name: String, index: Int, type: MTLDataType, kernels: Set<String>)]
    /// The source and options a library was compiled from (nil for a library file):
    /// specialising a function for function constant values compiles them again.
    let origin: (source: String, options: MTLCompileOptions)?
    /// Compiled with function constant values (for one makeFunction(name:constantValues:)).
    let specialized: Bool
    /// One kernel of a lazily compiled library (LazyLibrary.swift): specialised by compiling it alone.
    let lazyPlan: LazyPlan?

    init(loading url: URL, origin: (source: String, options: MTLCompileOptions)? = nil, specialized: Bool = false,
         lazyPlan: LazyPlan? = nil) throws {
        self.url = url
        self.origin = origin
        self.specialized = specialized
        self.lazyPlan = lazyPlan
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw MTLLibraryError(code: .fileNotFound, message: "no library file at \(url.path)")
        }
        // A truncated file would be SIGBUS inside dlopen, a FIFO would block it.
        var problem = [CChar](repeating: 0, count: 512)
        if pm_host_check_library(url.path, &problem, problem.count) != 0 {
            throw MTLLibraryError(code: .internalError, message: String(cString: problem))
        }
        // dlopen returns the same handle (counted) when a loaded library is loaded again.
        guard let handle = dlopen(url.path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw MTLLibraryError(code: .internalError, message: "cannot load \(url.path): \(reason)")
        }
        do {
            (kernels, functionNames) = try Self.describe(handle, url: url)
            constants = Self.functionConstants(handle)
            // Shader logging: the library's os_log messages go to the log state of the command buffer running them (kernel_log.c).
            dlsym(handle, PM_LOG_SINK_SYMBOL)?.assumingMemoryBound(to: pm_log_fn?.self).pointee = pm_host_kernel_log
        } catch {
            dlclose(handle)
            throw error
        }
        self.handle = handle
    }

    private static func describe(_ handle: UnsafeMutableRawPointer, url: URL) throws
        -> ([String: (desc: pm_kernel_desc, bindings: [pm_binding])], [String]) {
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
        return (kernels, names)
    }

    /// The library's function constants (the front end's table; none for a library without any).
    private static func functionConstants(_ handle: UnsafeMutableRawPointer)
        -> [(name: String, index: Int, type: MTLDataType, kernels: Set<String>)] {
        var constants: [(name: String, index: Int, type: MTLDataType, kernels: Set<String>)] = []
        if var row = dlsym(handle, PM_FUNCTION_CONSTANTS_SYMBOL)?.assumingMemoryBound(to: pm_function_constant.self) {
            while let name = row.pointee.name {
                let users = String(cString: row.pointee.kernels).split(separator: "\n").map(String.init)
                constants.append((String(cString: name), Int(row.pointee.index), MTLDataType(rawValue: UInt(row.pointee.type)) ?? .none,
                                  Set(users)))
                row += 1
            }
        }
        return constants
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
        let load = { try CPULibrary(loading: $0, origin: origin, specialized: true, lazyPlan: self.lazyPlan) }
        let library = try lazyPlan.map { try MSLCompiler.shared.compileFunction($0, name: name, constantValues: values, load: load) }
            ?? MSLCompiler.shared.compile(source: origin.source, options: origin.options, constantValues: values, load: load)
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
    /// This kernel's measured time per thread on one core, in picoseconds (0: not yet
    /// run): how the worker pool judges a dispatch's work (Dispatch.swift).
    let picosPerThread = Atomic<UInt64>(0)

    init(function: CPUFunction) throws {
        self.function = function
        let declared = Int(function.desc.max_total_threads)
        maxTotalThreadsPerThreadgroup = declared > 0 ? min(declared, 1024) : 1024
        staticThreadgroupMemoryLength = Int(function.desc.static_threadgroup_bytes)
        if staticThreadgroupMemoryLength > Int(PM_MAX_THREADGROUP_MEMORY) {
            // runtime.h saturates the size at 0xFFFFFFF0 (it is summed in 64 bits)
            let size = staticThreadgroupMemoryLength >= 0xFFFF_FFF0 ? "over 4 GiB" : "\(staticThreadgroupMemoryLength) bytes"
            throw MTLPipelineError(message: "kernel '\(function.name)' declares \(size) "
                + "of threadgroup memory; the limit is \(PM_MAX_THREADGROUP_MEMORY) bytes per threadgroup")
        }
    }
}

/// A buffer or threadgroup parameter, from the library's binding table. Every
/// parameter counts as used: the table lists declared parameters. Besides
/// Metal's properties it reports what MetalCPU knows and Metal's reflection
/// does not: whether a buffer is a pointer, a reference or a value, and the
/// element type's name as written.
public final class CPUBinding: MTLBufferBinding, MTLThreadgroupBinding, @unchecked Sendable {
    public enum Form: Sendable { case pointer, reference, value }
    public let name: String
    public let type: MTLBindingType
    public let access: MTLBindingAccess
    public let index: Int
    public var isUsed: Bool { true }
    public let bufferDataType: MTLDataType
    public let bufferDataSize: Int
    public var threadgroupMemoryDataSize: Int { bufferDataSize }
    public let form: Form
    /// "float4", "atomic_uint", "packed_float3", a struct's name...
    public let typeName: String

    init?(_ binding: pm_binding) {
        switch Int(binding.kind) {
        case Int(PM_BIND_BUFFER): type = .buffer
        case Int(PM_BIND_THREADGROUP): type = .threadgroupMemory
        default: return nil
        }
        access = binding.flags & PM_BIND_READ_ONLY != 0 ? .readOnly : .readWrite
        index = Int(binding.index)
        name = binding.name.map { String(cString: $0) } ?? ""
        form = binding.flags & PM_BIND_POINTER != 0 ? .pointer : binding.flags & PM_BIND_REFERENCE != 0 ? .reference : .value
        bufferDataSize = Int(binding.size)
        let kind = Int(binding.type & 0xFF), laneBytes = Int(binding.type >> 8 & 0xFF), lanes = Int(binding.type >> 16 & 0xFF)
        bufferDataType = Self.dataType(kind: kind, laneBytes: laneBytes, lanes: lanes)
        let written = binding.type_name.map { String(cString: $0) } ?? ""
        typeName = Self.typeName(bufferDataType, size: bufferDataSize, atomic: binding.flags & PM_BIND_ATOMIC != 0) ?? written
    }

    /// Metal's data type for a lane kind (PM_ELEM_*), lane size and width.
    static func dataType(kind: Int, laneBytes: Int, lanes: Int) -> MTLDataType {
        let first: MTLDataType?
        switch (kind, laneBytes) {
        case (Int(PM_ELEM_BOOL), _): first = .bool
        case (Int(PM_ELEM_FLOAT), 2): first = .half
        case (Int(PM_ELEM_FLOAT), 4): first = .float
        case (Int(PM_ELEM_BFLOAT), 2): first = .bfloat
        case (Int(PM_ELEM_INT), 1): first = .char
        case (Int(PM_ELEM_INT), 2): first = .short
        case (Int(PM_ELEM_INT), 4): first = .int
        case (Int(PM_ELEM_INT), 8): first = .long
        case (Int(PM_ELEM_UINT), 1): first = .uchar
        case (Int(PM_ELEM_UINT), 2): first = .ushort
        case (Int(PM_ELEM_UINT), 4): first = .uint
        case (Int(PM_ELEM_UINT), 8): first = .ulong
        default: first = nil
        }
        guard let first, (1...4).contains(lanes) else { return .struct }
        return MTLDataType(rawValue: first.rawValue + UInt(lanes - 1)) ?? .struct
    }

    /// "float4", "packed_float3" (3 lanes without padding), "atomic_uint"; nil for structs.
    static func typeName(_ type: MTLDataType, size: Int, atomic: Bool) -> String? {
        guard type != .struct, type != .none, type != .pointer else { return nil }
        let name = "\(type)"
        let lanes = Int(String(name.last!)) ?? 1
        let scalar = lanes > 1 ? String(name.dropLast()) : name
        // packed_T3 has no padding: 3 lanes, a size divisible by 3 (T3 is padded to 4 lanes).
        let packed = lanes == 3 && size > 0 && size % 3 == 0
        return (atomic ? "atomic_" : "") + (packed ? "packed_" + scalar + "3" : name)
    }
}
