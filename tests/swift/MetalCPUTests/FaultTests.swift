import XCTest
@testable import MetalCPU

/// Faults and the time limit at the Metal API level (guard.c): a faulting or
/// endless kernel fails its command buffer; the next one runs.
final class FaultTests: XCTestCase {
    let h = Harness()
    let source = """
    kernel void null_write(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
        device int *p = (device int *)(size_t)a[0];
        p[i] = 1;
    }
    kernel void spin(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
        while (a[0] == 0) { a[i + 1] += 1; }
    }
    kernel void fill(device int *a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] = int(i) * 3; }
    """

    private func fillWorks() throws {
        let out = h.buffer(count: 256 * 4)
        let done = h.run(try h.pipeline(source, "fill"), buffers: [out], grid: MTLSize(width: 256, height: 1, depth: 1),
                         group: MTLSize(width: 64, height: 1, depth: 1))
        XCTAssertEqual(done.status, .completed)
        XCTAssertEqual(read(out, as: Int32.self, count: 256), (0..<256).map { Int32($0 * 3) })
    }

    func testMemoryFaultFailsTheCommandBuffer() throws {
        for _ in 0..<2 {
            let done = h.run(try h.pipeline(source, "null_write"), buffers: [h.buffer([Int32](repeating: 0, count: 64))],
                             grid: MTLSize(width: 64, height: 1, depth: 1), group: MTLSize(width: 32, height: 1, depth: 1))
            XCTAssertEqual(done.status, .error)
            let message = "\(done.error.map { "\($0)" } ?? "")"
            XCTAssertTrue(message.contains("null_write") && message.contains("invalid memory access"), message)
            try fillWorks()
        }
    }

    func testTimeLimitStopsTheCommandBuffer() throws {
        let saved = CPUKernelControl.timeout
        defer { XCTAssertTrue(CPUKernelControl.setTimeout(saved)) }
        XCTAssertFalse(CPUKernelControl.setTimeout(-1))
        XCTAssertFalse(CPUKernelControl.setTimeout(.nan))
        XCTAssertTrue(CPUKernelControl.setTimeout(0.3))
        XCTAssertEqual(CPUKernelControl.timeout, 0.3)
        let start = Date()
        let done = h.run(try h.pipeline(source, "spin"), buffers: [h.buffer([Int32](repeating: 0, count: 64))],
                         grid: MTLSize(width: 63, height: 1, depth: 1), group: MTLSize(width: 32, height: 1, depth: 1))
        XCTAssertEqual(done.status, .error)
        XCTAssertTrue("\(done.error.map { "\($0)" } ?? "")".contains("timed out"))
        XCTAssertLessThan(Date().timeIntervalSince(start), 10)
        try fillWorks()
    }
}
