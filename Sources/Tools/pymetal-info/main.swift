// pymetal-info: prints the device and runs a self-check through libPyMetal's
// C ABI (pymetal.h), as Python does. It is linked against libPyMetal (ldd lists
// it; found beside the tool through its rpath, or LD_LIBRARY_PATH /
// DYLD_LIBRARY_PATH) and contains no pymetal code of its own.
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif
import CPyMetal  // pymetal.h: the C ABI's prototypes, types and constants

func fail(_ message: String) -> Never {
    fputs("pymetal-info: \(message)\n", stderr)
    exit(1)
}

/// The file of the libPyMetal this process loaded (the dynamic loader chose it).
func libraryPath() -> String {
    #if canImport(Darwin)
    for image in 0..<_dyld_image_count() {
        if let name = _dyld_get_image_name(image).map({ String(cString: $0) }), name.hasSuffix("/libPyMetal.dylib") { return name }
    }
    #else
    if let maps = fopen("/proc/self/maps", "r") {
        defer { fclose(maps) }
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), maps) != nil {
            let text = String(cString: line)
            if text.hasSuffix("/libPyMetal.so\n"), let slash = text.firstIndex(of: "/") { return String(text[slash...].dropLast()) }
        }
    }
    #endif
    return "?"
}

typealias Handle = UInt64
typealias GetText = (UnsafeMutablePointer<UnsafePointer<CChar>?>?, Handle) -> Int32
typealias GetInt64 = (UnsafeMutablePointer<Int64>?, Handle) -> Int32

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
print("library:           \(libraryPath())")
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
