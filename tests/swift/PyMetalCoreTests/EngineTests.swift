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

    /// Shader logging through Metal's API: a library compiled with logging, run on a stream
    /// (whose queue has a log state), puts its messages where pm_kernel_log_next takes them.
    func testKernelLogThroughTheStreamsLogState() throws {
        let device = try Device.makeDefault()
        let source = """
        #include <metal_stdlib>
        #include <metal_logging>
        constant metal::os_log lg("org.pymetal.engine", "tests");
        kernel void k(device int* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { lg.log_error("i=%u", i); o[i] = 1; }
        """
        while KernelLog.next() != nil {} // messages of other tests
        let stream = try device.makeStream()
        let out = try device.makeBuffer(length: 16)
        for logging in [false, true] {
            let kernel = try device.compile(source: source, logging: logging).kernel(named: "k")
            try stream.dispatch(kernel, arguments: [Argument(index: 0, .buffer(out, offset: 0))], size: [4],
                                threadgroup: [1], byGroups: false)
            try stream.synchronize()
            var got: [KernelLog.Record] = []
            while let record = KernelLog.next() { got.append(record) }
            XCTAssertEqual(got.map(\.message).sorted(), logging ? ["i=0", "i=1", "i=2", "i=3"] : [])
            XCTAssertTrue(got.allSatisfy { $0.level == 4 && $0.subsystem == "org.pymetal.engine" && $0.category == "tests" })
        }
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

    func testSignatureFromReflection() throws {
        let device = try Device.makeDefault()
        let kernel = try device.compile(source: """
        struct P { float a; int b; };
        kernel void k(device const float4* a [[buffer(0)]], device atomic_uint* n [[buffer(1)]],
                      constant P& p [[buffer(2)]], constant half& h [[buffer(3)]], device packed_float3* v [[buffer(4)]],
                      threadgroup float* t [[threadgroup(0)]], uint i [[thread_position_in_grid]]) {}
        """).kernel(named: "k")
        let arguments = try XCTUnwrap(kernel.arguments)
        XCTAssertEqual(arguments.map { "\($0.name): \($0.declaration)" },
                       ["a: device const float4*", "n: device atomic_uint*", "p: constant P&", "h: constant half&",
                        "v: device packed_float3*", "t: threadgroup float*"])
        XCTAssertEqual(arguments.map(\.size), [16, 4, 8, 2, 12, 4])
        XCTAssertEqual(arguments.map(\.lanes), [4, 1, 1, 1, 3, 1])
        XCTAssertEqual(arguments.map(\.scalar), [.float, .uint, .other, .float, .float, .float])
        XCTAssertEqual(arguments.map(\.form), [.pointer, .pointer, .reference, .reference, .pointer, .pointer])
    }

    /// A failure is reported to the thread whose work failed, and other threads' work runs.
    func testExecutionErrorsGoToTheThreadThatCausedThem() throws {
        let device = try Device.makeDefault()
        let library = try device.compile(source: """
        kernel void bad(device float* x [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
            if (i >= 32) { threadgroup_barrier(mem_flags::mem_threadgroup); return; }  // simdgroups at two barriers
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        kernel void one(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = 1; }
        """)
        let bad = try library.kernel(named: "bad"), one = try library.kernel(named: "one")
        let stream = try device.makeStream()
        let scratch = try device.makeBuffer(length: 64), out = try device.makeBuffer(length: 64)
        try stream.dispatch(bad, arguments: [Argument(index: 0, .buffer(scratch, offset: 0))], size: [64], threadgroup: [64], byGroups: false)
        var otherError: (any Error)?
        let other = Thread {
            do {
                try stream.dispatch(one, arguments: [Argument(index: 0, .buffer(out, offset: 0))], size: [16], threadgroup: nil, byGroups: false)
                try stream.synchronize()
            } catch { otherError = error }
        }
        other.start()
        while !other.isFinished { usleep(1000) }
        XCTAssertNil(otherError, "another thread's failure is not this thread's")
        XCTAssertEqual(Array(UnsafeBufferPointer(start: out.contents.assumingMemoryBound(to: Float.self), count: 16)),
                       Array(repeating: 1, count: 16), "its work ran")
        XCTAssertThrowsError(try stream.synchronize()) { XCTAssertTrue("\($0)".contains("bad"), "\($0)") }
        XCTAssertNoThrow(try stream.synchronize(), "reported once")
    }
}
