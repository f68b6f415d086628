// The C ABI of libPyMetal (declared in include/pymetal.h): thin wrappers that
// check their arguments, call the engine and turn errors into status codes.
import Foundation
import PyMetalCore
#if canImport(Metal)
import Metal
#else
import MetalCPU
#endif

public let PM_ABI_VERSION: Int32 = 2

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
private let defaultDevice = Lock()
nonisolated(unsafe) private var defaultDeviceHandle: UInt64 = 0

private func device(_ handle: UInt64) throws -> DeviceObject { try handles.get(handle, as: DeviceObject.self, "device") }
private func buffer(_ handle: UInt64) throws -> Buffer { try handles.get(handle, as: Buffer.self, "buffer") }
private func library(_ handle: UInt64) throws -> LibraryObject { try handles.get(handle, as: LibraryObject.self, "library") }
private func kernel(_ handle: UInt64) throws -> Kernel { try handles.get(handle, as: Kernel.self, "kernel") }
private func stream(_ handle: UInt64) throws -> PyMetalCore.Stream { try handles.get(handle, as: PyMetalCore.Stream.self, "stream") }

// MARK: Library

@_cdecl("pm_abi_version")
public func pm_abi_version() -> Int32 { PM_ABI_VERSION }

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
        guard length <= UInt64(Int.max) else { throw EngineError.invalid("buffer length \(length) is too large") }
        out.pointee = handles.insert(try device(handle).device.wrapBuffer(pointer, length: Int(length)))
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
    status {
        let language = version == 0 ? nil : Device.languageVersion(Int(version))
        guard version == 0 || language != nil else {
            throw EngineError.invalid("Metal language version \(version / 100).\(version % 100) is not one of "
                + Device.languageVersions.map { "\($0 / 100).\($0 % 100)" }.joined(separator: ", "))
        }
        let out = try output(out)
        var definitions: [String: String] = [:]
        if let macros {
            for line in String(cString: macros).split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                let parts = line.split(separator: "=", maxSplits: 1)
                definitions[String(parts[0]).trimmingCharacters(in: .whitespaces)] = parts.count > 1 ? String(parts[1]) : "1"
            }
        }
        out.pointee = handles.insert(LibraryObject(try device(handle).device.compile(
            source: try string(source, "source"), macros: definitions, fastMath: fastMath != 0, languageVersion: language)))
    }
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
        out.pointee = handles.insert(try library(handle).library.kernel(named: try string(name, "function name")))
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
        out.pointee = handles.insert(try library(handle).library.kernel(named: try string(name, "function name"), constants: constants))
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

@_cdecl("pm_kernel_release")
public func pm_kernel_release(_ handle: UInt64) -> Int32 {
    status { try handles.remove(handle, as: Kernel.self, "kernel") }
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

@_cdecl("pm_stream_gpu_time")
public func pm_stream_gpu_time(_ out: UnsafeMutablePointer<Double>?, _ handle: UInt64) -> Int32 {
    status { try output(out).pointee = try stream(handle).gpuTime }
}

@_cdecl("pm_stream_release")
public func pm_stream_release(_ handle: UInt64) -> Int32 {
    status { try handles.remove(handle, as: PyMetalCore.Stream.self, "stream").commit() }
}

/// `pm_arg` of pymetal.h, read field by field (a Swift struct cannot cross @_cdecl).
private struct PMArg {
    static let stride = 40
    let kind: Int32, index: Int32, buffer: UInt64, offset: UInt64, bytes: UnsafeRawPointer?, length: UInt64
    init(_ raw: UnsafeRawPointer) {
        kind = raw.load(fromByteOffset: 0, as: Int32.self)
        index = raw.load(fromByteOffset: 4, as: Int32.self)
        buffer = raw.load(fromByteOffset: 8, as: UInt64.self)
        offset = raw.load(fromByteOffset: 16, as: UInt64.self)
        bytes = raw.load(fromByteOffset: 24, as: UnsafeRawPointer?.self)
        length = raw.load(fromByteOffset: 32, as: UInt64.self)
    }
}

@_cdecl("pm_dispatch")
public func pm_dispatch(_ handle: UInt64, _ kernelHandle: UInt64, _ args: UnsafeRawPointer?, _ count: Int32,
                        _ size: UnsafePointer<UInt32>?, _ threadgroup: UnsafePointer<UInt32>?, _ byGroups: Int32) -> Int32 {
    status {
        let target = try stream(handle)
        let function = try kernel(kernelHandle)
        guard let size else { throw EngineError.invalid("size pointer is NULL") }
        guard count >= 0, count <= 64 else { throw EngineError.invalid("argument count \(count) is outside 0...64") }
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
                let arg = PMArg(args! + i * PMArg.stride)
                let index = Int(arg.index)
                let argument: Argument
                switch arg.kind {
                case 0:
                    guard arg.offset <= UInt64(Int.max) else { throw EngineError.invalid("offset \(arg.offset) is too large") }
                    argument = Argument(index: index, .buffer(try buffer(arg.buffer), offset: Int(arg.offset)))
                case 1:
                    guard let bytes = arg.bytes else { throw EngineError.invalid("argument \(i): bytes pointer is NULL") }
                    guard arg.length <= 4096 else { throw EngineError.invalid("argument \(i): \(arg.length) bytes is over the 4096-byte limit for values") }
                    argument = Argument(index: index, .bytes(bytes, length: Int(arg.length)))
                case 2:
                    guard arg.length <= 1 << 20 else { throw EngineError.invalid("argument \(i): threadgroup memory length \(arg.length) is too large") }
                    argument = Argument(index: index, .threadgroupMemory(length: Int(arg.length)))
                default:
                    throw EngineError.invalid("argument \(i): unknown kind \(arg.kind)")
                }
                (storage.baseAddress! + i).initialize(to: argument)
                filled += 1
            }
            try target.dispatch(function, arguments: UnsafeBufferPointer(rebasing: storage[..<filled]), size: extent,
                                threadgroup: group, byGroups: byGroups != 0)
        }
    }
}

/// `pm_launch_config` of pymetal.h: stream, kernel, size[3], threadgroup[3], by_groups (offsets 0, 8, 16, 28, 40).
@_cdecl("pm_dispatch_launch")
public func pm_dispatch_launch(_ config: UnsafeRawPointer?, _ args: UnsafeRawPointer?, _ count: Int32) -> Int32 {
    guard let config else { return status { throw EngineError.invalid("launch configuration pointer is NULL") } }
    let dimensions = (config + 16).assumingMemoryBound(to: UInt32.self)
    return pm_dispatch(config.load(as: UInt64.self), config.load(fromByteOffset: 8, as: UInt64.self), args, count,
                       dimensions, dimensions + 3, config.load(fromByteOffset: 40, as: Int32.self))
}

/// Three dimensions from C, each at least 1 (a zero would make an empty grid).
private func dimensions(_ values: UnsafePointer<UInt32>, _ what: String) throws -> MTLSize {
    guard values[0] >= 1, values[1] >= 1, values[2] >= 1 else {
        throw EngineError.invalid("\(what) [\(values[0]), \(values[1]), \(values[2])] must have 1 to 3 dimensions, each at least 1")
    }
    return MTLSize(width: Int(values[0]), height: Int(values[1]), depth: Int(values[2]))
}
