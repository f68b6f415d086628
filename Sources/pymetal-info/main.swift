// pymetal-info: prints the device and runs a self-check through libPyMetal's
// C ABI, loading the same shared library Python loads, as Python does (dlopen):
// PYMETAL_LIBRARY, else the libPyMetal built next to this program. It links no
// pymetal code itself (SwiftPM would link a target of this package statically
// into an executable, and cannot order its link after the dynamic product's).
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif
import CPyMetal  // pymetal.h: the C ABI's types and constants (no code)

func fail(_ message: String) -> Never {
    fputs("pymetal-info: \(message)\n", stderr)
    exit(1)
}

/// This program's own path (to find the libPyMetal built beside it).
func executablePath() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    #if canImport(Darwin)
    var size = UInt32(buffer.count)
    guard _NSGetExecutablePath(&buffer, &size) == 0 else { return CommandLine.arguments[0] }
    #else
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return CommandLine.arguments[0] }
    #endif
    return String(cString: buffer)
}

#if canImport(Darwin)
let libraryName = "libPyMetal.dylib"
#else
let libraryName = "libPyMetal.so"
#endif
let libraryPath: String = {
    if let path = getenv("PYMETAL_LIBRARY"), path.pointee != 0 { return String(cString: path) }
    let program = executablePath()
    let directory = program.lastIndex(of: "/").map { String(program[..<$0]) } ?? "."
    return directory + "/" + libraryName
}()
guard let library = dlopen(libraryPath, RTLD_NOW | RTLD_LOCAL) else {
    fail("cannot load \(libraryPath): \(String(cString: dlerror())) (build it with `swift build -c release` or set PYMETAL_LIBRARY)")
}

/// A C function of libPyMetal, by name, with the prototype of pymetal.h.
func function<T>(_ name: String, _ type: T.Type) -> T {
    guard let symbol = dlsym(library, name) else { fail("\(libraryPath) lacks \(name)") }
    return unsafeBitCast(symbol, to: type)
}

typealias Handle = UInt64
typealias GetHandle = @convention(c) (UnsafeMutablePointer<Handle>?, Handle) -> Int32
typealias GetInt64 = @convention(c) (UnsafeMutablePointer<Int64>?, Handle) -> Int32
typealias GetText = @convention(c) (UnsafeMutablePointer<UnsafePointer<CChar>?>?, Handle) -> Int32
typealias Release = @convention(c) (Handle) -> Int32

let pm_abi_version = function("pm_abi_version", (@convention(c) () -> Int32).self)
let pm_last_error = function("pm_last_error", (@convention(c) () -> UnsafePointer<CChar>?).self)
let pm_device_default = function("pm_device_default", (@convention(c) (UnsafeMutablePointer<Handle>?) -> Int32).self)
let pm_device_name = function("pm_device_name", GetText.self)
let pm_device_backend = function("pm_device_backend", GetText.self)
let pm_device_unified_memory = function("pm_device_unified_memory",
    (@convention(c) (UnsafeMutablePointer<Int32>?, Handle) -> Int32).self)
let pm_device_max_threads_per_threadgroup = function("pm_device_max_threads_per_threadgroup", GetInt64.self)
let pm_device_max_buffer_length = function("pm_device_max_buffer_length", GetInt64.self)
let pm_device_page_size = function("pm_device_page_size", GetInt64.self)
let pm_device_shader_library = function("pm_device_shader_library", GetHandle.self)
let pm_library_compile = function("pm_library_compile",
    (@convention(c) (UnsafeMutablePointer<Handle>?, Handle, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) -> Int32).self)
let pm_library_function_count = function("pm_library_function_count", GetInt64.self)
let pm_kernel_new = function("pm_kernel_new",
    (@convention(c) (UnsafeMutablePointer<Handle>?, Handle, UnsafePointer<CChar>?) -> Int32).self)
let pm_stream_new = function("pm_stream_new", GetHandle.self)
let pm_stream_synchronize = function("pm_stream_synchronize", Release.self)
let pm_buffer_new = function("pm_buffer_new", (@convention(c) (UnsafeMutablePointer<Handle>?, Handle, UInt64) -> Int32).self)
let pm_buffer_contents = function("pm_buffer_contents",
    (@convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>?, Handle) -> Int32).self)
let pm_dispatch = function("pm_dispatch", (@convention(c) (Handle, Handle, UnsafeRawPointer?, Int32,
    UnsafePointer<UInt32>?, UnsafePointer<UInt32>?, Int32) -> Int32).self)

func check(_ status: Int32, _ what: String) {
    guard status == 0 else { fail("\(what) failed: \(String(cString: pm_last_error()!))") }
}

func text(_ get: GetText, _ handle: Handle, _ what: String) -> String {
    var value: UnsafePointer<CChar>?
    check(get(&value, handle), what)
    return String(cString: value!)
}

func int64(_ get: GetInt64, _ handle: Handle, _ what: String) -> Int64 {
    var value: Int64 = 0
    check(get(&value, handle), what)
    return value
}

func seconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

var device: Handle = 0
check(pm_device_default(&device), "pm_device_default")
var unified: Int32 = 0
check(pm_device_unified_memory(&unified, device), "pm_device_unified_memory")
print("pymetal \(pm_abi_version()) (libPyMetal C ABI)")
print("library:           \(libraryPath)")
print("device:            \(text(pm_device_name, device, "pm_device_name"))")
print("backend:           \(text(pm_device_backend, device, "pm_device_backend"))")
print("unified memory:    \(unified == 1)")
print("threads/group max: \(int64(pm_device_max_threads_per_threadgroup, device, "pm_device_max_threads_per_threadgroup"))")
print("max buffer:        \(int64(pm_device_max_buffer_length, device, "pm_device_max_buffer_length") / (1 << 20)) MiB")
print("page size:         \(int64(pm_device_page_size, device, "pm_device_page_size")) bytes")

// Self-check: a kernel compiled from source, and one from pymetal's shader library.
let source = """
#include <metal_stdlib>
using namespace metal;
kernel void axpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                 constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + y[i];
}
"""
let count = 1000
var compiled: Handle = 0, kernel: Handle = 0, stream: Handle = 0, xs: Handle = 0, ys: Handle = 0
let started = seconds()
check(pm_library_compile(&compiled, device, source, nil, 0), "pm_library_compile")
let compileSeconds = seconds() - started
check(pm_kernel_new(&kernel, compiled, "axpy"), "pm_kernel_new")
check(pm_stream_new(&stream, device), "pm_stream_new")
check(pm_buffer_new(&xs, device, UInt64(count * 4)), "pm_buffer_new")
check(pm_buffer_new(&ys, device, UInt64(count * 4)), "pm_buffer_new")
var xp: UnsafeMutableRawPointer?, yp: UnsafeMutableRawPointer?
check(pm_buffer_contents(&xp, xs), "pm_buffer_contents")
check(pm_buffer_contents(&yp, ys), "pm_buffer_contents")
let x = xp!.bindMemory(to: Float.self, capacity: count), y = yp!.bindMemory(to: Float.self, capacity: count)
for i in 0..<count { x[i] = Float(i); y[i] = 1 }
var a: Float = 2
let ok = withUnsafeBytes(of: &a) { scalar -> Bool in
    // x, y: buffers; a: a value (pm_arg of pymetal.h)
    var args = [
        pm_arg(kind: Int32(PM_ARG_BUFFER.rawValue), index: 0, buffer: xs, offset: 0, bytes: nil, length: 0),
        pm_arg(kind: Int32(PM_ARG_BUFFER.rawValue), index: 1, buffer: ys, offset: 0, bytes: nil, length: 0),
        pm_arg(kind: Int32(PM_ARG_BYTES.rawValue), index: 2, buffer: 0, offset: 0, bytes: scalar.baseAddress, length: 4),
    ]
    var size: [UInt32] = [UInt32(count), 1, 1]
    check(pm_dispatch(stream, kernel, &args, Int32(args.count), &size, nil, 0), "pm_dispatch")
    check(pm_stream_synchronize(stream), "pm_stream_synchronize")
    return (0..<count).allSatisfy { y[$0] == 2 * Float($0) + 1 }
}
print("self-check axpy:   \(ok ? "ok" : "WRONG RESULTS") (compile \(Int(compileSeconds * 1000)) ms)")
var shaders: Handle = 0
if pm_device_shader_library(&shaders, device) == 0 {
    print("shader library:    \(int64(pm_library_function_count, shaders, "pm_library_function_count")) kernels")
} else {
    print("shader library:    unavailable (\(String(cString: pm_last_error()!)))")
}
exit(ok ? 0 : 1)
