import XCTest
import PyMetal
import PyMetalCore

/// The C ABI never crashes: bad handles, nulls, sizes and indices are errors with messages.
final class ABITests: XCTestCase {
    var device: UInt64 = 0

    override func setUp() {
        XCTAssertEqual(pm_device_default(&device), 0)
    }

    private func lastError() -> String { String(cString: pm_last_error()) }

    func testVersionAndDevice() {
        XCTAssertEqual(pm_abi_version(), 2)
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
        var args = [UInt8](repeating: 0, count: 80)
        args.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: Int32(0), toByteOffset: 0, as: Int32.self)
            raw.storeBytes(of: Int32(0), toByteOffset: 4, as: Int32.self)
            raw.storeBytes(of: buffer, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: Int32(1), toByteOffset: 40, as: Int32.self)
            raw.storeBytes(of: Int32(1), toByteOffset: 44, as: Int32.self)
            withUnsafeBytes(of: &base) { raw.storeBytes(of: $0.baseAddress, toByteOffset: 64, as: UnsafeRawPointer?.self) }
            raw.storeBytes(of: UInt64(4), toByteOffset: 72, as: UInt64.self)
        }
        var size: [UInt32] = [1000, 1, 1]
        var zero: [UInt32] = [0, 1, 1]
        var huge: [UInt32] = [2048, 1, 1]
        args.withUnsafeBytes { raw in
            XCTAssertEqual(pm_dispatch(stream, kernel, raw.baseAddress, 2, &zero, nil, 0), 1, "empty grid")
            XCTAssertEqual(pm_dispatch(stream, kernel, raw.baseAddress, 2, &size, &huge, 0), 1, "threadgroup too large")
            XCTAssertEqual(pm_dispatch(stream, kernel, raw.baseAddress, -1, &size, nil, 0), 1)
            var enormous: [UInt32] = [UInt32.max, UInt32.max, UInt32.max]
            XCTAssertEqual(pm_dispatch(stream, kernel, raw.baseAddress, 2, &enormous, nil, 0), 1, "no overflow trap")
            XCTAssertEqual(pm_dispatch(stream, kernel, raw.baseAddress, 2, &enormous, nil, 1), 1, "no overflow trap")
            XCTAssertEqual(pm_dispatch(stream, kernel, raw.baseAddress, 2, &size, nil, 0), 0, lastError())
        }
        XCTAssertEqual(pm_buffer_release(buffer), 0, "released while the work is pending")
        var keep: UInt64 = 0
        XCTAssertEqual(pm_buffer_new(&keep, device, 4000), 0)
        XCTAssertEqual(pm_stream_synchronize(stream), 0, lastError())
        var seconds = -1.0
        XCTAssertEqual(pm_stream_gpu_time(&seconds, stream), 0)
        XCTAssertGreaterThanOrEqual(seconds, 0)
        // A kernel error (missing binding) surfaces at synchronize with the kernel's name.
        var one: [UInt32] = [1, 1, 1]
        XCTAssertEqual(pm_dispatch(stream, kernel, nil, 0, &one, nil, 0), 0)
        XCTAssertEqual(pm_stream_synchronize(stream), 5)
        XCTAssertTrue(lastError().contains("iota"), lastError())
        XCTAssertEqual(pm_stream_synchronize(stream), 0, "the error is reported once")
        for handle in [keep] { XCTAssertEqual(pm_buffer_release(handle), 0) }
        XCTAssertEqual(pm_kernel_release(kernel), 0)
        XCTAssertEqual(pm_library_release(library), 0)
        XCTAssertEqual(pm_stream_release(stream), 0)
    }
}
