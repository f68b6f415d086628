import XCTest
@testable import PyMetalCore

final class EngineTests: XCTestCase {
    func testWrappedBufferReleaseWaitsForPendingWork() throws {
        let device = try Device.makeDefault()
        let library = try device.compile(source: """
        #include <metal_stdlib>
        kernel void slow(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
            uint x = i; for (uint k = 0; k < 20000; k++) { x = x * 1664525u + 1013904223u; } o[i] = x | 1u;
        }
        """)
        let kernel = try library.kernel(named: "slow")
        XCTAssertTrue(try library.kernel(named: "slow") === kernel, "pipelines are cached per library and name")
        let stream = try device.makeStream()
        let page = device.pageSize
        let memory = UnsafeMutableRawPointer.allocate(byteCount: page * 4, alignment: page)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: page * 4)
        let buffer = try device.wrapBuffer(memory, length: page * 4)
        try stream.dispatch(kernel, arguments: [Argument(index: 0, .buffer(buffer, offset: 0))],
                            size: [page], threadgroup: nil, byGroups: false)
        stream.commit()
        buffer.waitUntilUnused()
        let words = memory.bindMemory(to: UInt32.self, capacity: page)
        XCTAssertTrue((0..<page).allSatisfy { words[$0] & 1 == 1 }, "all work finished before release returned")
        memory.deallocate()
    }

    func testDefaultThreadgroups() throws {
        let device = try Device.makeDefault()
        let kernel = try device.compile(source: "#include <metal_stdlib>\nkernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 1; }")
            .kernel(named: "k")
        XCTAssertEqual(Stream.defaultThreadgroup(for: kernel, size: [1000, 1, 1]), [256, 1, 1])
        XCTAssertEqual(Stream.defaultThreadgroup(for: kernel, size: [10, 1, 1]), [10, 1, 1], "clipped to the grid")
        XCTAssertEqual(Stream.defaultThreadgroup(for: kernel, size: [10, 1, 1], byGroups: true), [256, 1, 1])
        XCTAssertEqual(Stream.defaultThreadgroup(for: kernel, size: [100, 100, 1]), [32, 8, 1])
        XCTAssertEqual(Stream.defaultThreadgroup(for: kernel, size: [10, 10, 10]), [10, 10, 2])
        XCTAssertEqual(Stream.defaultThreadgroup(for: kernel, size: [64, 64, 64]), [32, 4, 2])
    }

    func testBufferAccessFromReflection() throws {
        let device = try Device.makeDefault()
        let kernel = try device.compile(source: """
        #include <metal_stdlib>
        kernel void k(device const float* a [[buffer(0)]], device float* b [[buffer(2)]],
                      constant float& s [[buffer(3)]], uint i [[thread_position_in_grid]]) { b[i] = a[i] * s; }
        """).kernel(named: "k")
        XCTAssertEqual(kernel.bufferAccess.count, 31)
        XCTAssertEqual(Array(kernel.bufferAccess[0...4]), [.readOnly, .unused, .readWrite, .readOnly, .unused])
        XCTAssertTrue(kernel.bufferAccess[5...].allSatisfy { $0 == .unused })
    }
}
