// Kernel libraries: shared objects made by MSLCompiler, loaded with dlopen.
import CMetalCPU
import Foundation

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

    init(loading url: URL) throws {
        self.url = url
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw MTLLibraryError(code: .fileNotFound, message: "no library file at \(url.path)")
        }
        // dlopen returns the same handle (counted) when a loaded library is loaded again.
        guard let handle = dlopen(url.path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw MTLLibraryError(code: .internalError, message: "cannot load \(url.path): \(reason)")
        }
        do {
            (kernels, functionNames) = try Self.describe(handle, url: url)
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

    public func makeFunction(name functionName: String) -> (any MTLFunction)? {
        guard let kernel = kernels[functionName] else { return nil }
        return CPUFunction(name: functionName, desc: kernel.desc, bindings: kernel.bindings, library: self)
    }
}

public final class CPUFunction: MTLFunction, @unchecked Sendable {
    public let name: String
    let desc: pm_kernel_desc
    let bindings: [pm_binding]
    let library: CPULibrary // keeps the kernel's code loaded

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
            // runtime.h saturates the size at 0xFFFFFFF0 (it is summed in 64 bits)
            let size = staticThreadgroupMemoryLength >= 0xFFFF_FFF0 ? "over 4 GiB" : "\(staticThreadgroupMemoryLength) bytes"
            throw MTLPipelineError(message: "kernel '\(function.name)' declares \(size) "
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
