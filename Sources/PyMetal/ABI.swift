// The C ABI of libPyMetal (declared in Sources/CPyMetal/include/pymetal.h,
// imported as the module CPyMetal): thin wrappers that check their arguments,
// call the engine and turn errors into status codes.
import CPyMetal
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import PyMetalCore
#if canImport(Metal)
import Metal
#else
import MetalCPU
#endif

/// A device handle's object: the engine device and the strings the ABI hands out.
final class DeviceObject {
    let device: Device
    let name: CString
    let backend: CString
    init(_ device: Device) {
        self.device = device
        name = CString(device.name)
        backend = CString(device.backend)
    }
}

/// A kernel handle's object: the engine kernel and its signature's strings.
final class KernelObject {
    let kernel: Kernel
    let arguments: [(name: CString, typeName: CString, argument: KernelArgument)]
    init(_ kernel: Kernel) {
        self.kernel = kernel
        arguments = (kernel.arguments ?? []).map { (CString($0.name), CString($0.typeName), $0) }
    }
}

/// A library handle's object: the engine library and its function names as C strings.
final class LibraryObject {
    let library: Library
    let names: [CString]
    init(_ library: Library) {
        self.library = library
        names = library.functionNames.map(CString.init)
    }
}

private let handles = Handles.shared
private let defaultDevice: Lock = { let lock = Lock(); ForkSafety.registerLeaf(lock); return lock }()
nonisolated(unsafe) private var defaultDeviceHandle: UInt64 = 0

private func device(_ handle: UInt64) throws -> DeviceObject { try handles.get(handle, as: DeviceObject.self, "device") }
private func buffer(_ handle: UInt64) throws -> Buffer { try handles.get(handle, as: Buffer.self, "buffer") }
private func library(_ handle: UInt64) throws -> LibraryObject { try handles.get(handle, as: LibraryObject.self, "library") }
private func kernelObject(_ handle: UInt64) throws -> KernelObject { try handles.get(handle, as: KernelObject.self, "kernel") }
private func kernel(_ handle: UInt64) throws -> Kernel { try kernelObject(handle).kernel }
private func stream(_ handle: UInt64) throws -> PyMetalCore.Stream { try handles.get(handle, as: PyMetalCore.Stream.self, "stream") }

// MARK: Library

@_cdecl("pm_abi_version")
public func pm_abi_version() -> Int32 { Int32(PM_ABI_VERSION) }

@_cdecl("pm_last_error")
public func pm_last_error() -> UnsafePointer<CChar> { lastErrorPointer() }

// MARK: Device

@_cdecl("pm_device_default")
public func pm_device_default(_ out: UnsafeMutablePointer<UInt64>?) -> Int32 {
    status {
        let out = try output(out)
        out.pointee = try defaultDevice {
            if defaultDeviceHandle == 0 { defaultDeviceHandle = handles.insert(DeviceObject(try Device.makeDefault())) }
            return defaultDeviceHandle
        }
    }
}

@_cdecl("pm_device_name")
public func pm_device_name(_ out: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = UnsafePointer(try device(handle).name.pointer) }
}

@_cdecl("pm_device_backend")
public func pm_device_backend(_ out: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = UnsafePointer(try device(handle).backend.pointer) }
}

@_cdecl("pm_device_unified_memory")
public func pm_device_unified_memory(_ out: UnsafeMutablePointer<Int32>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = try device(handle).device.hasUnifiedMemory ? 1 : 0 }
}

@_cdecl("pm_device_max_threads_per_threadgroup")
public func pm_device_max_threads_per_threadgroup(_ out: UnsafeMutablePointer<Int64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = Int64(try device(handle).device.maxThreadsPerThreadgroup) }
}

@_cdecl("pm_device_max_buffer_length")
public func pm_device_max_buffer_length(_ out: UnsafeMutablePointer<Int64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = Int64(try device(handle).device.maxBufferLength) }
}

@_cdecl("pm_device_recommended_working_set")
public func pm_device_recommended_working_set(_ out: UnsafeMutablePointer<Int64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = Int64(clamping: try device(handle).device.recommendedWorkingSet) }
}

@_cdecl("pm_device_page_size")
public func pm_device_page_size(_ out: UnsafeMutablePointer<Int64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = Int64(try device(handle).device.pageSize) }
}

@_cdecl("pm_device_max_threadgroup_memory")
public func pm_device_max_threadgroup_memory(_ out: UnsafeMutablePointer<Int64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = Int64(try device(handle).device.maxThreadgroupMemory) }
}

@_cdecl("pm_device_shader_library")
public func pm_device_shader_library(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64) -> Int32 {
    status {
        let out = try output(out)
        out.pointee = handles.insert(LibraryObject(try device(handle).device.shaderLibrary()))
    }
}

// MARK: Buffers

@_cdecl("pm_buffer_new")
public func pm_buffer_new(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64, _ length: UInt64) -> Int32 {
    status {
        let out = try output(out)
        guard length <= UInt64(Int.max) else { throw EngineError.invalid("buffer length \(length) is too large") }
        out.pointee = handles.insert(try device(handle).device.makeBuffer(length: Int(length)))
    }
}

@_cdecl("pm_buffer_wrap")
public func pm_buffer_wrap(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64,
                           _ pointer: UnsafeMutableRawPointer?, _ length: UInt64) -> Int32 {
    status {
        let out = try output(out)
        guard let pointer else { throw EngineError.invalid("memory pointer is NULL") }
        let target = try device(handle).device
        // Before any arithmetic on it: the memory must fit in the address space and in one Metal buffer.
        guard length <= UInt64(target.maxBufferLength), UInt(bitPattern: pointer).addingReportingOverflow(UInt(length)).overflow == false else {
            throw EngineError.invalid("cannot wrap \(length) bytes at \(pointer): the limit is \(target.maxBufferLength) bytes (pm_device_max_buffer_length)")
        }
        out.pointee = handles.insert(try target.wrapBuffer(pointer, length: Int(length)))
    }
}

@_cdecl("pm_buffer_contents")
public func pm_buffer_contents(_ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = try buffer(handle).contents }
}

@_cdecl("pm_buffer_length")
public func pm_buffer_length(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = UInt64(try buffer(handle).length) }
}

@_cdecl("pm_buffer_release")
public func pm_buffer_release(_ handle: UInt64) -> Int32 {
    status {
        let released = try handles.remove(handle, as: Buffer.self, "buffer")
        // The caller frees wrapped memory once this returns: let pending work finish.
        if released.isWrapped { released.waitUntilUnused() }
    }
}

@_cdecl("pm_buffer_error")
public func pm_buffer_error(_ handle: UInt64) -> Int32 {
    status {
        if let message = try buffer(handle).error { throw EngineError(.execution, message) }
    }
}

@_cdecl("pm_buffer_clear_error")
public func pm_buffer_clear_error(_ handle: UInt64) -> Int32 {
    status { try buffer(handle).setError(nil) }
}

@_cdecl("pm_buffer_error_count")
public func pm_buffer_error_count(_ out: UnsafeMutablePointer<UnsafePointer<Int64>?>?) -> Int32 {
    status { try output(out).pointee = UnsafePointer(Buffer.poisonedCount) }
}

// MARK: Libraries and kernels

@_cdecl("pm_library_compile")
public func pm_library_compile(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64, _ source: UnsafePointer<CChar>?,
                               _ macros: UnsafePointer<CChar>?, _ fastMath: Int32) -> Int32 {
    pm_library_compile_version(out, handle, source, macros, fastMath, 0)
}

/// pm_library_compile with a Metal language version (major * 100 + minor, e.g. 302; 0: the default).
@_cdecl("pm_library_compile_version")
public func pm_library_compile_version(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64, _ source: UnsafePointer<CChar>?,
                                       _ macros: UnsafePointer<CChar>?, _ fastMath: Int32, _ version: Int32) -> Int32 {
    pm_library_compile_logging(out, handle, source, macros, fastMath, version, 0)
}

/// pm_library_compile_version with shader logging (logging != 0): the kernels' os_log messages
/// go to pm_kernel_log_next.
@_cdecl("pm_library_compile_logging")
public func pm_library_compile_logging(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64, _ source: UnsafePointer<CChar>?,
                                       _ macros: UnsafePointer<CChar>?, _ fastMath: Int32, _ version: Int32,
                                       _ logging: Int32) -> Int32 {
    status {
        let language = version == 0 ? nil : Device.languageVersion(Int(version))
        guard version == 0 || language != nil else {
            throw EngineError.invalid("Metal language version \(version / 100).\(version % 100) is not one of "
                + Device.languageVersions.map { "\($0 / 100).\($0 % 100)" }.joined(separator: ", "))
        }
        let out = try output(out)
        var definitions: [String: String] = [:]
        if let macros {
            for line in String(cString: macros).split(separator: "\n") where !line.trimmed.isEmpty {
                let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0].trimmed)
                guard !name.isEmpty else { throw EngineError.invalid("macro line '\(line)' has no name (NAME=VALUE or NAME)") }
                definitions[name] = parts.count > 1 ? String(parts[1]) : "1"
            }
        }
        out.pointee = handles.insert(LibraryObject(try device(handle).device.compile(
            source: try string(source, "source"), macros: definitions, fastMath: fastMath != 0, languageVersion: language,
            logging: logging != 0)))
    }
}

/// The oldest kernel os_log message not taken yet: 1 and its MTLLogLevel (raw value), subsystem,
/// category and text (NUL-terminated, truncated to the sizes given), or 0 when there is none.
@_cdecl("pm_kernel_log_next")
public func pm_kernel_log_next(_ level: UnsafeMutablePointer<UInt32>?, _ subsystem: UnsafeMutablePointer<CChar>?,
                               _ subsystemSize: Int, _ category: UnsafeMutablePointer<CChar>?, _ categorySize: Int,
                               _ message: UnsafeMutablePointer<CChar>?, _ messageSize: Int) -> Int32 {
    guard let record = KernelLog.next() else { return 0 }
    func copy(_ text: String, _ out: UnsafeMutablePointer<CChar>?, _ size: Int) {
        guard let out, size > 0 else { return }
        let bytes = Array(text.utf8.prefix(size - 1)) + [0]
        out.withMemoryRebound(to: UInt8.self, capacity: bytes.count) { $0.update(from: bytes, count: bytes.count) }
    }
    level?.pointee = UInt32(record.level)
    copy(record.subsystem, subsystem, subsystemSize)
    copy(record.category, category, categorySize)
    copy(record.message, message, messageSize)
    return 1
}

@_cdecl("pm_library_load")
public func pm_library_load(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64, _ path: UnsafePointer<CChar>?) -> Int32 {
    status {
        let out = try output(out)
        out.pointee = handles.insert(LibraryObject(try device(handle).device.loadLibrary(path: try string(path, "path"))))
    }
}

@_cdecl("pm_library_function_count")
public func pm_library_function_count(_ out: UnsafeMutablePointer<Int64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = Int64(try library(handle).names.count) }
}

@_cdecl("pm_library_function_name")
public func pm_library_function_name(_ out: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ handle: UInt64, _ index: Int64) -> Int32 {
    status {
        let out = try output(out)
        let names = try library(handle).names
        guard index >= 0, index < Int64(names.count) else {
            throw EngineError.invalid("function index \(index) is outside 0..<\(names.count)")
        }
        out.pointee = UnsafePointer(names[Int(index)].pointer)
    }
}

@_cdecl("pm_library_release")
public func pm_library_release(_ handle: UInt64) -> Int32 {
    status { try handles.remove(handle, as: LibraryObject.self, "library") }
}

@_cdecl("pm_kernel_new")
public func pm_kernel_new(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64, _ name: UnsafePointer<CChar>?) -> Int32 {
    status {
        let out = try output(out)
        out.pointee = handles.insert(KernelObject(try library(handle).library.kernel(named: try string(name, "function name"))))
    }
}

// MARK: Function constants (the msl branch's block)

/// Writes the function constants `name` declares as text, one per line:
/// "index<TAB>MTLDataType raw value<TAB>required (0/1)<TAB>name"; *needed gets the bytes
/// it takes with the NUL (when above capacity nothing is written: call again).
@_cdecl("pm_library_function_constants")
public func pm_library_function_constants(_ buffer: UnsafeMutablePointer<CChar>?, _ capacity: Int64,
                                          _ needed: UnsafeMutablePointer<Int64>?, _ handle: UInt64,
                                          _ name: UnsafePointer<CChar>?) -> Int32 {
    status {
        let needed = try output(needed, "needed")
        let constants = try library(handle).library.functionConstants(named: try string(name, "function name"))
        let text = constants.map { "\($0.index)\t\($0.type)\t\($0.required ? 1 : 0)\t\($0.name)\n" }.joined()
        let bytes = Array(text.utf8CString)
        needed.pointee = Int64(bytes.count)
        guard bytes.count <= capacity else { return }
        guard let buffer else { throw EngineError.invalid("buffer pointer is NULL") }
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: bytes.count) }
    }
}

/// A kernel specialised with function constant values, one per line:
/// "index MTLDataType-raw-value hex-bytes" (e.g. "20 53 01" sets constant 20 to the bool true).
@_cdecl("pm_kernel_new_specialized")
public func pm_kernel_new_specialized(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64, _ name: UnsafePointer<CChar>?,
                                      _ values: UnsafePointer<CChar>?) -> Int32 {
    status {
        let out = try output(out)
        var constants: [Library.ConstantValue] = []
        for line in try string(values, "values").split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let index = Int(fields[0]), let type = UInt(fields[1]), fields[2].count % 2 == 0 else {
                throw EngineError.invalid("function constant value '\(line)' is not 'index type hex-bytes'")
            }
            let hex = Array(fields[2])
            let bytes = try stride(from: 0, to: hex.count, by: 2).map { at -> UInt8 in
                guard let byte = UInt8(String(hex[at...at + 1]), radix: 16) else {
                    throw EngineError.invalid("function constant value '\(line)': '\(fields[2])' is not hex")
                }
                return byte
            }
            constants.append(Library.ConstantValue(index: index, type: type, bytes: bytes))
        }
        out.pointee = handles.insert(KernelObject(try library(handle).library.kernel(named: try string(name, "function name"),
                                                                                   constants: constants)))
    }
}

@_cdecl("pm_kernel_max_threads")
public func pm_kernel_max_threads(_ out: UnsafeMutablePointer<Int64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = Int64(try kernel(handle).maxThreads) }
}

@_cdecl("pm_kernel_execution_width")
public func pm_kernel_execution_width(_ out: UnsafeMutablePointer<Int64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = Int64(try kernel(handle).executionWidth) }
}

@_cdecl("pm_kernel_static_threadgroup_memory")
public func pm_kernel_static_threadgroup_memory(_ out: UnsafeMutablePointer<Int64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = Int64(try kernel(handle).staticThreadgroupMemory) }
}

@_cdecl("pm_kernel_default_threadgroup")
public func pm_kernel_default_threadgroup(_ out: UnsafeMutablePointer<UInt32>?, _ handle: UInt64,
                                          _ size: UnsafePointer<UInt32>?, _ byGroups: Int32) -> Int32 {
    status {
        let out = try output(out)
        guard let size else { throw EngineError.invalid("size pointer is NULL") }
        let extent = try PyMetalCore.Stream.dimensions([Int(size[0]), Int(size[1]), Int(size[2])], "size")
        let group = PyMetalCore.Stream.defaultThreadgroup(for: try kernel(handle), size: extent, byGroups: byGroups != 0)
        for axis in 0..<3 { out[axis] = UInt32(group[axis]) }
    }
}

@_cdecl("pm_kernel_buffer_access")
public func pm_kernel_buffer_access(_ out: UnsafeMutablePointer<Int32>?, _ handle: UInt64, _ index: Int32) -> Int32 {
    status {
        let out = try output(out)
        let access = try kernel(handle).bufferAccess
        guard access.indices.contains(Int(index)) else {
            throw EngineError.invalid("buffer index \(index) is outside 0...\(access.count - 1)")
        }
        out.pointee = access[Int(index)].rawValue
    }
}

@_cdecl("pm_kernel_argument_count")
public func pm_kernel_argument_count(_ out: UnsafeMutablePointer<Int64>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = Int64(try kernelObject(handle).arguments.count) }
}

@_cdecl("pm_kernel_argument")
public func pm_kernel_argument(_ out: UnsafeMutablePointer<pm_argument_info>?, _ handle: UInt64, _ position: Int64) -> Int32 {
    status {
        let out = try output(out)
        let arguments = try kernelObject(handle).arguments
        guard position >= 0, position < Int64(arguments.count) else {
            throw EngineError.invalid("argument position \(position) is outside 0..<\(arguments.count)")
        }
        let (name, typeName, argument) = arguments[Int(position)]
        out.pointee = pm_argument_info(
            name: UnsafePointer(name.pointer), type_name: UnsafePointer(typeName.pointer),
            binding: argument.binding.rawValue, index: Int32(argument.index), space: argument.space.rawValue,
            form: argument.form.rawValue, access: argument.access.rawValue, scalar: argument.scalar.rawValue,
            scalar_size: Int32(argument.scalarSize), lanes: Int32(argument.lanes), size: Int64(argument.size))
    }
}

@_cdecl("pm_kernel_release")
public func pm_kernel_release(_ handle: UInt64) -> Int32 {
    status { try handles.remove(handle, as: KernelObject.self, "kernel") }
}

// MARK: Streams and dispatch

@_cdecl("pm_stream_new")
public func pm_stream_new(_ out: UnsafeMutablePointer<UInt64>?, _ handle: UInt64) -> Int32 {
    status {
        let out = try output(out)
        out.pointee = handles.insert(try device(handle).device.makeStream())
    }
}

@_cdecl("pm_stream_commit")
public func pm_stream_commit(_ handle: UInt64) -> Int32 {
    status { try stream(handle).commit() }
}

@_cdecl("pm_stream_synchronize")
public func pm_stream_synchronize(_ handle: UInt64) -> Int32 {
    status { try stream(handle).synchronize() }
}

@_cdecl("pm_stream_wait")
public func pm_stream_wait(_ handle: UInt64) -> Int32 {
    status { try stream(handle).wait() }
}

@_cdecl("pm_stream_finish")
public func pm_stream_finish(_ handle: UInt64) -> Int32 {
    status { try stream(handle).finish() }
}

// MARK: Kernel time limit and cancellation (issue 10, faults)

@_cdecl("pm_set_kernel_timeout")
public func pm_set_kernel_timeout(_ seconds: Double) -> Int32 {
    status {
        #if canImport(Metal)
        throw EngineError(.unsupported, "the kernel time limit is the system's GPU watchdog on Metal")
        #else
        guard CPUKernelControl.setTimeout(seconds) else {
            throw EngineError.invalid("kernel timeout \(seconds): give a finite number of seconds >= 0 (0: no limit)")
        }
        #endif
    }
}

@_cdecl("pm_kernel_timeout")
public func pm_kernel_timeout(_ out: UnsafeMutablePointer<Double>?) -> Int32 {
    status {
        #if canImport(Metal)
        try output(out).pointee = 0
        #else
        try output(out).pointee = CPUKernelControl.timeout
        #endif
    }
}

@_cdecl("pm_cancel_all")
public func pm_cancel_all() -> Int32 {
    status {
        #if !canImport(Metal)
        CPUKernelControl.cancelAll() // Metal: running command buffers cannot be cancelled; nothing to do
        #endif
    }
}

@_cdecl("pm_stream_gpu_time")
public func pm_stream_gpu_time(_ out: UnsafeMutablePointer<Double>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = try stream(handle).gpuTime }
}

@_cdecl("pm_stream_release")
public func pm_stream_release(_ handle: UInt64) -> Int32 {
    status { try handles.remove(handle, as: PyMetalCore.Stream.self, "stream").commit() }
}

@_cdecl("pm_dispatch")
public func pm_dispatch(_ handle: UInt64, _ kernelHandle: UInt64, _ args: UnsafePointer<pm_arg>?, _ count: Int32,
                        _ size: UnsafePointer<UInt32>?, _ threadgroup: UnsafePointer<UInt32>?, _ byGroups: Int32) -> Int32 {
    status {
        let target = try stream(handle)
        let function = try kernel(kernelHandle)
        guard let size else { throw EngineError.invalid("size pointer is NULL") }
        guard count >= 0, count <= PM_MAX_ARGS else { throw EngineError.invalid("argument count \(count) is outside 0...\(PM_MAX_ARGS)") }
        guard count == 0 || args != nil else { throw EngineError.invalid("arguments pointer is NULL") }
        let extent = try dimensions(size, "size")
        var group: MTLSize? = nil
        if let threadgroup, threadgroup[0] != 0 || threadgroup[1] != 0 || threadgroup[2] != 0 {
            group = try dimensions(threadgroup, "threadgroup")
        }
        // The arguments live on the stack for the call: nothing is allocated per dispatch here.
        try withUnsafeTemporaryAllocation(of: Argument.self, capacity: Int(count)) { storage in
            var filled = 0
            defer { storage.baseAddress.map { _ = $0.deinitialize(count: filled) } }
            for i in 0..<Int(count) {
                (storage.baseAddress! + i).initialize(to: try argument(args! + i, i))
                filled += 1
            }
            try target.dispatch(function, arguments: UnsafeBufferPointer(rebasing: storage[..<filled]), size: extent,
                                threadgroup: group, byGroups: byGroups != 0)
        }
    }
}

/// One pm_arg as an engine Argument; sizes are range-checked before they become Ints.
@inline(__always)
private func argument(_ record: UnsafePointer<pm_arg>, _ i: Int) throws -> Argument {
    let arg = record.pointee
    guard arg.index >= 0, arg.index < PM_MAX_BINDINGS else {
        throw EngineError.invalid("argument \(i): binding index \(arg.index) is outside 0...\(PM_MAX_BINDINGS - 1)")
    }
    let index = Int(arg.index)
    switch Int(arg.kind) {
    case Int(PM_ARG_BUFFER.rawValue):
        guard arg.offset <= UInt64(Int.max) else { throw EngineError.invalid("argument \(i): offset \(arg.offset) is too large") }
        // length: the argument's exact bytes from the offset (0: the rest of the buffer; PM_ARG_LENGTH_EMPTY: none)
        return Argument(index: index, .buffer(try buffer(arg.buffer), offset: Int(arg.offset)),
                        length: arg.length == PM_ARG_LENGTH_EMPTY ? Argument.empty : Int(clamping: arg.length))
    case Int(PM_ARG_BYTES.rawValue):
        guard let bytes = arg.bytes else { throw EngineError.invalid("argument \(i): bytes pointer is NULL") }
        guard arg.length >= 1, arg.length <= UInt64(PM_MAX_BYTES) else {
            throw EngineError.invalid("argument \(i): \(arg.length) bytes is outside the 1...\(PM_MAX_BYTES) bytes of a value")
        }
        return Argument(index: index, .bytes(bytes, length: Int(arg.length)))
    case Int(PM_ARG_THREADGROUP_MEMORY.rawValue):
        guard arg.length <= UInt64(Int32.max) else { throw EngineError.invalid("argument \(i): threadgroup memory length \(arg.length) is too large") }
        return Argument(index: index, .threadgroupMemory(length: Int(arg.length)))
    default:
        throw EngineError.invalid("argument \(i): unknown kind \(arg.kind)")
    }
}

@_cdecl("pm_dispatch_launch")
public func pm_dispatch_launch(_ config: UnsafePointer<pm_launch_config>?, _ args: UnsafePointer<pm_arg>?, _ count: Int32) -> Int32 {
    guard let config else { return status { throw EngineError.invalid("launch configuration pointer is NULL") } }
    let raw = UnsafeRawPointer(config)
    let size = (raw + MemoryLayout<pm_launch_config>.offset(of: \.size)!).assumingMemoryBound(to: UInt32.self)
    let group = (raw + MemoryLayout<pm_launch_config>.offset(of: \.threadgroup)!).assumingMemoryBound(to: UInt32.self)
    return pm_dispatch(config.pointee.stream, config.pointee.kernel, args, count, size, group, config.pointee.by_groups)
}

/// Three dimensions from C, each at least 1 (a zero would make an empty grid).
private func dimensions(_ values: UnsafePointer<UInt32>, _ what: String) throws -> MTLSize {
    guard values[0] >= 1, values[1] >= 1, values[2] >= 1 else {
        throw EngineError.invalid("\(what) [\(values[0]), \(values[1]), \(values[2])] must have 1 to 3 dimensions, each at least 1")
    }
    return MTLSize(width: Int(values[0]), height: Int(values[1]), depth: Int(values[2]))
}

// MARK: The compile cache (KernelCache)

private let kernelCachePath: Lock = { let lock = Lock(); ForkSafety.registerLeaf(lock); return lock }()
/// The folders handed out (kept: a pointer returned stays valid; one per XDG_CACHE_HOME/HOME in use).
nonisolated(unsafe) private var kernelCachePaths: [String: CString] = [:]

@_cdecl("pm_kernel_cache_info")
public func pm_kernel_cache_info(_ path: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ entries: UnsafeMutablePointer<Int64>?,
                                 _ bytes: UnsafeMutablePointer<Int64>?, _ maxBytes: UnsafeMutablePointer<Int64>?,
                                 _ persistent: UnsafeMutablePointer<Int32>?) -> Int32 {
    status {
        let (path, entries, bytes, maxBytes, persistent) = (try output(path), try output(entries), try output(bytes),
                                                            try output(maxBytes), try output(persistent))
        let info = try KernelCache.info()
        path.pointee = nil
        if let folder = info.path {
            path.pointee = kernelCachePath {
                let string = kernelCachePaths[folder] ?? CString(folder)
                kernelCachePaths[folder] = string
                return UnsafePointer(string.pointer)
            }
        }
        entries.pointee = Int64(info.entries)
        bytes.pointee = Int64(clamping: info.bytes)
        maxBytes.pointee = Int64(clamping: info.maxBytes)
        persistent.pointee = info.persistent ? 1 : 0
    }
}

@_cdecl("pm_kernel_cache_clear")
public func pm_kernel_cache_clear(_ removed: UnsafeMutablePointer<Int64>?) -> Int32 {
    status { try output(removed).pointee = Int64(KernelCache.clear()) }
}

@_cdecl("pm_compile_interrupt_socket")
public func pm_compile_interrupt_socket(_ socket: Int32) -> Int32 {
    status { KernelCache.watchInterrupts(socket) }
}
