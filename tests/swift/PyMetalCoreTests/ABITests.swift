import XCTest
// The C ABI as C sees it (pymetal.h), linked with libPyMetal's code (the PyMetal target).
import CPyMetal
import PyMetalCore

/// The C ABI never crashes: bad handles, nulls, sizes and indices are errors with messages.
final class ABITests: XCTestCase {
    var device: UInt64 = 0

    override func setUp() {
        XCTAssertEqual(pm_device_default(&device), 0)
    }

    private func lastError() -> String { String(cString: pm_last_error()) }

    func testVersionAndDevice() {
        XCTAssertEqual(pm_abi_version(), PM_ABI_VERSION)
        var again: UInt64 = 0
        XCTAssertEqual(pm_device_default(&again), 0)
        XCTAssertEqual(again, device)
        var name: UnsafePointer<CChar>?, backend: UnsafePointer<CChar>?
        XCTAssertEqual(pm_device_name(&name, device), 0)
        XCTAssertEqual(pm_device_backend(&backend, device), 0)
        XCTAssertFalse(String(cString: name!).isEmpty)
        XCTAssertTrue(["cpu", "metal"].contains(String(cString: backend!)))
        var threads: Int64 = 0, page: Int64 = 0
        XCTAssertEqual(pm_device_max_threads_per_threadgroup(&threads, device), 0)
        XCTAssertEqual(pm_device_page_size(&page, device), 0)
        XCTAssertEqual(threads, 1024)
        XCTAssertGreaterThanOrEqual(page, 4096)
    }

    func testBadHandlesAndPointers() {
        var length: UInt64 = 0
        XCTAssertEqual(pm_buffer_length(&length, 0), 1)
        XCTAssertTrue(lastError().contains("null"), lastError())
        XCTAssertEqual(pm_buffer_length(&length, 987_654_321), 1)
        XCTAssertTrue(lastError().contains("not valid"), lastError())
        XCTAssertEqual(pm_buffer_length(&length, device), 1)
        XCTAssertTrue(lastError().contains("is a device, not a buffer"), lastError())
        XCTAssertEqual(pm_buffer_length(nil, device), 1)
        XCTAssertEqual(pm_device_default(nil), 1)
        var buffer: UInt64 = 0
        XCTAssertEqual(pm_buffer_new(&buffer, device, UInt64.max), 1)
        XCTAssertEqual(pm_buffer_new(&buffer, device, 100), 0)
        XCTAssertEqual(pm_buffer_release(buffer), 0)
        XCTAssertEqual(pm_buffer_release(buffer), 1, "double release")
        XCTAssertEqual(pm_buffer_length(&length, buffer), 1, "use after release")
        XCTAssertEqual(pm_buffer_wrap(&buffer, device, nil, 16384), 1)
        let unaligned = UnsafeMutableRawPointer.allocate(byteCount: 32768, alignment: 64)
        XCTAssertEqual(pm_buffer_wrap(&buffer, device, unaligned + 64, 16384), 1)
        XCTAssertTrue(lastError().contains("page size"), lastError())
        unaligned.deallocate()
        var library: UInt64 = 0
        XCTAssertEqual(pm_library_compile(&library, device, nil, nil, 0), 1)
        XCTAssertEqual(pm_library_load(&library, device, "/nonexistent/lib.metallib"), 3)
        var name: UnsafePointer<CChar>?
        XCTAssertEqual(pm_library_function_name(&name, 0, 0), 1)
        var size: [UInt32] = [1, 1, 1]
        XCTAssertEqual(pm_dispatch(0, 0, nil, 0, &size, nil, 0), 1)
        XCTAssertEqual(pm_stream_synchronize(12345), 1)
    }

    func testDispatchThroughTheABI() throws {
        var library: UInt64 = 0, kernel: UInt64 = 0, stream: UInt64 = 0, buffer: UInt64 = 0
        let source = "#include <metal_stdlib>\nkernel void iota(device uint* o [[buffer(0)]], constant uint& base [[buffer(1)]], uint i [[thread_position_in_grid]]) { o[i] = base + i; }"
        XCTAssertEqual(pm_library_compile(&library, device, source, nil, 0), 0, lastError())
        XCTAssertEqual(pm_kernel_new(&kernel, library, "missing"), 3)
        XCTAssertTrue(lastError().contains("iota"), "lists the available kernels: \(lastError())")
        XCTAssertEqual(pm_kernel_new(&kernel, library, "iota"), 0)
        XCTAssertEqual(pm_stream_new(&stream, device), 0)
        XCTAssertEqual(pm_buffer_new(&buffer, device, 4000), 0)
        var base: UInt32 = 7
        withUnsafePointer(to: &base) { base in
            var args = [
                pm_arg(kind: Int32(PM_ARG_BUFFER.rawValue), index: 0, buffer: buffer, offset: 0, bytes: nil, length: 0),
                pm_arg(kind: Int32(PM_ARG_BYTES.rawValue), index: 1, buffer: 0, offset: 0, bytes: base, length: 4),
            ]
            var size: [UInt32] = [1000, 1, 1]
            var zero: [UInt32] = [0, 1, 1]
            var huge: [UInt32] = [2048, 1, 1]
            XCTAssertEqual(pm_dispatch(stream, kernel, &args, 2, &zero, nil, 0), 1, "empty grid")
            XCTAssertEqual(pm_dispatch(stream, kernel, &args, 2, &size, &huge, 0), 1, "threadgroup too large")
            XCTAssertEqual(pm_dispatch(stream, kernel, &args, -1, &size, nil, 0), 1)
            var enormous: [UInt32] = [UInt32.max, UInt32.max, UInt32.max]
            XCTAssertEqual(pm_dispatch(stream, kernel, &args, 2, &enormous, nil, 0), 1, "no overflow trap")
            XCTAssertEqual(pm_dispatch(stream, kernel, &args, 2, &enormous, nil, 1), 1, "no overflow trap")
            XCTAssertEqual(pm_dispatch(stream, kernel, &args, 2, &enormous, &enormous, 1), 1, "no overflow trap")
            // A missing binding fails the dispatch itself, naming the parameter.
            XCTAssertEqual(pm_dispatch(stream, kernel, &args, 1, &size, nil, 0), 1)
            XCTAssertTrue(lastError().contains("base: constant uint&"), lastError())
            XCTAssertEqual(pm_dispatch(stream, kernel, &args, 2, &size, nil, 0), 0, lastError())
        }
        XCTAssertEqual(pm_buffer_release(buffer), 0, "released while the work is pending")
        var keep: UInt64 = 0
        XCTAssertEqual(pm_buffer_new(&keep, device, 4000), 0)
        XCTAssertEqual(pm_stream_synchronize(stream), 0, lastError())
        var seconds = -1.0
        XCTAssertEqual(pm_stream_gpu_time(&seconds, stream), 0)
        XCTAssertGreaterThanOrEqual(seconds, 0)
        // An error only execution reveals surfaces at synchronize with the kernel's name.
        var bad: UInt64 = 0, badLibrary: UInt64 = 0
        // (simdgroups waiting at different barriers: an error in every mode, where a thread that
        // returns before a barrier counts as arrived, as on a GPU)
        let barrier = "kernel void divergent(device float* x [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) "
            + "{ if (i >= 32) { threadgroup_barrier(mem_flags::mem_threadgroup); return; } "
            + "threadgroup_barrier(mem_flags::mem_threadgroup); x[i] = 1; }"
        XCTAssertEqual(pm_library_compile(&badLibrary, device, barrier, nil, 0), 0, lastError())
        XCTAssertEqual(pm_kernel_new(&bad, badLibrary, "divergent"), 0)
        var group: [UInt32] = [64, 1, 1]
        var arg = pm_arg(kind: Int32(PM_ARG_BUFFER.rawValue), index: 0, buffer: keep, offset: 0, bytes: nil, length: 0)
        XCTAssertEqual(pm_dispatch(stream, bad, &arg, 1, &group, &group, 0), 0, lastError())
        XCTAssertEqual(pm_stream_synchronize(stream), 5)
        XCTAssertTrue(lastError().contains("divergent"), lastError())
        XCTAssertEqual(pm_stream_synchronize(stream), 0, "the error is reported once")
        XCTAssertEqual(pm_kernel_release(bad), 0)
        XCTAssertEqual(pm_library_release(badLibrary), 0)
        for handle in [keep] { XCTAssertEqual(pm_buffer_release(handle), 0) }
        XCTAssertEqual(pm_kernel_release(kernel), 0)
        XCTAssertEqual(pm_library_release(library), 0)
        XCTAssertEqual(pm_stream_release(stream), 0)
    }
}
