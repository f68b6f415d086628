// pymetal-info: prints the device and runs a self-check, through libPyMetal's
// C ABI, the same library Python loads.
import CPyMetal
import Foundation
// The C ABI as a C program sees it: pymetal.h, linked with libPyMetal (the PyMetal target).

func check(_ status: Int32, _ what: String) {
    guard status == 0 else {
        FileHandle.standardError.write(Data("pymetal-info: \(what) failed: \(String(cString: pm_last_error()))\n".utf8))
        exit(1)
    }
}

func text(_ get: (UnsafeMutablePointer<UnsafePointer<CChar>?>) -> Int32, _ what: String) -> String {
    var value: UnsafePointer<CChar>?
    check(get(&value), what)
    return String(cString: value!)
}

var device: UInt64 = 0
check(pm_device_default(&device), "pm_device_default")
var unified: Int32 = 0, maxThreads: Int64 = 0, maxBuffer: Int64 = 0, pageSize: Int64 = 0
check(pm_device_unified_memory(&unified, device), "pm_device_unified_memory")
check(pm_device_max_threads_per_threadgroup(&maxThreads, device), "pm_device_max_threads_per_threadgroup")
check(pm_device_max_buffer_length(&maxBuffer, device), "pm_device_max_buffer_length")
check(pm_device_page_size(&pageSize, device), "pm_device_page_size")
print("pymetal \(pm_abi_version()) (libPyMetal C ABI)")
print("device:            \(text({ pm_device_name($0, device) }, "pm_device_name"))")
print("backend:           \(text({ pm_device_backend($0, device) }, "pm_device_backend"))")
print("unified memory:    \(unified == 1)")
print("threads/group max: \(maxThreads)")
print("max buffer:        \(maxBuffer / (1 << 20)) MiB")
print("page size:         \(pageSize) bytes")

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
var library: UInt64 = 0, kernel: UInt64 = 0, stream: UInt64 = 0, xs: UInt64 = 0, ys: UInt64 = 0
let started = Date()
check(pm_library_compile(&library, device, source, nil, 0), "pm_library_compile")
let compileSeconds = Date().timeIntervalSince(started)
check(pm_kernel_new(&kernel, library, "axpy"), "pm_kernel_new")
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
print("self-check axpy:   \(ok ? "ok" : "WRONG RESULTS") (compile \(String(format: "%.3f", compileSeconds)) s)")
var shaders: UInt64 = 0, functions: Int64 = 0
if pm_device_shader_library(&shaders, device) == 0 {
    check(pm_library_function_count(&functions, shaders), "pm_library_function_count")
    print("shader library:    \(functions) kernels")
} else {
    print("shader library:    unavailable (\(String(cString: pm_last_error())))")
}
exit(ok ? 0 : 1)
