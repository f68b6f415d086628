import XCTest
@testable import MetalCPU

final class KernelTests: XCTestCase {
    let h = Harness()

    func testSquareAndCube() throws {
        let source = """
        #include <metal_stdlib>
        using namespace metal;
        kernel void square(const device float *in [[buffer(0)]], device float *out [[buffer(1)]], uint id [[thread_position_in_grid]]) {
            out[id] = in[id] * in[id];
        }
        kernel void cube(const device float *in [[buffer(0)]], device float *out [[buffer(1)]], uint id [[thread_position_in_grid]]) {
            out[id] = in[id] * in[id] * in[id];
        }
        """
        let library = try h.library(source)
        XCTAssertEqual(Set(library.functionNames), ["square", "cube"])
        XCTAssertNil(library.makeFunction(name: "nope"))
        let count = 1000 // not a multiple of the threadgroup
        let input = (0..<count).map { Float($0) * 0.5 }
        let inBuffer = h.buffer(input), out = h.buffer(count: count * 4)
        let pipeline = try h.pipeline(source, "cube")
        XCTAssertEqual(pipeline.maxTotalThreadsPerThreadgroup, 1024)
        XCTAssertEqual(pipeline.threadExecutionWidth, 32)
        let done = h.run(pipeline, buffers: [inBuffer, out], grid: MTLSize(width: count, height: 1, depth: 1),
                         group: MTLSize(width: 64, height: 1, depth: 1))
        XCTAssertEqual(done.status, .completed)
        XCTAssertNil(done.error)
        XCTAssertGreaterThanOrEqual(done.gpuEndTime, done.gpuStartTime)
        XCTAssertEqual(read(out, as: Float.self, count: count), input.map { $0 * $0 * $0 })
    }

    func testCompileErrorsPointAtTheUsersLine() {
        let source = "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  o[i] = undefined_name;\n}\n"
        XCTAssertThrowsError(try h.library(source)) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("program_source:4:"), message)
            XCTAssertTrue(message.contains("undefined_name"), message)
        }
    }

    func testMisspelledAttributeIsAnError() {
        let source = "#include <metal_stdlib>\nkernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grd]]) { o[i] = 1; }"
        XCTAssertThrowsError(try h.library(source)) { error in
            XCTAssertTrue("\(error)".contains("thread_position_in_grd"), "\(error)")
        }
    }

    /// Every position attribute, with a non-uniform edge (dispatchThreads) and whole groups.
    func testEveryPositionAttribute() throws {
        let source = """
        #include <metal_stdlib>
        using namespace metal;
        kernel void positions(device uint* out [[buffer(0)]],
                              uint3 gid [[thread_position_in_grid]], uint3 grid [[threads_per_grid]],
                              uint3 lid [[thread_position_in_threadgroup]], uint3 tpg [[threads_per_threadgroup]],
                              uint3 tgid [[threadgroup_position_in_grid]], uint3 ntg [[threadgroups_per_grid]],
                              uint tidx [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                              uint sg [[simdgroup_index_in_threadgroup]], uint width [[threads_per_simdgroup]],
                              uint nsg [[simdgroups_per_threadgroup]], ushort2 lid16 [[thread_position_in_threadgroup]],
                              ushort tidx16 [[thread_index_in_threadgroup]]) {
            uint at = ((gid.z * grid.y + gid.y) * grid.x + gid.x) * 24;
            out[at + 0] = gid.x; out[at + 1] = gid.y; out[at + 2] = gid.z;
            out[at + 3] = grid.x; out[at + 4] = grid.y; out[at + 5] = grid.z;
            out[at + 6] = lid.x; out[at + 7] = lid.y; out[at + 8] = lid.z;
            out[at + 9] = tpg.x; out[at + 10] = tpg.y; out[at + 11] = tpg.z;
            out[at + 12] = tgid.x; out[at + 13] = tgid.y; out[at + 14] = tgid.z;
            out[at + 15] = ntg.x; out[at + 16] = ntg.y; out[at + 17] = ntg.z;
            out[at + 18] = tidx; out[at + 19] = lane; out[at + 20] = sg; out[at + 21] = width; out[at + 22] = nsg;
            out[at + 23] = (lid16.x == lid.x && lid16.y == lid.y && tidx16 == tidx) ? 1 : 0;
        }
        """
        let pipeline = try h.pipeline(source, "positions")
        for uniform in [false, true] {
            let tg = [8, 5, 2]
            let size = uniform ? [3, 2, 2] : [37, 11, 3]
            let grid = uniform ? zip(size, tg).map(*) : size
            let count = grid.reduce(1, *)
            let out = h.buffer(count: count * 24 * 4)
            let done = h.run(pipeline, buffers: [out], grid: MTLSize(width: size[0], height: size[1], depth: size[2]),
                             group: MTLSize(width: tg[0], height: tg[1], depth: tg[2]), uniform: uniform)
            XCTAssertEqual(done.status, .completed, "\(String(describing: done.error))")
            let values = read(out, as: UInt32.self, count: count * 24)
            let groups = uniform ? size : zip(size, tg).map { ($0 + $1 - 1) / $1 }
            for z in 0..<grid[2] { for y in 0..<grid[1] { for x in 0..<grid[0] {
                let g = [x, y, z]
                let at = ((z * grid[1] + y) * grid[0] + x) * 24
                let row = values[at..<(at + 24)].map(Int.init)
                let group = zip(g, tg).map { $0 / $1 }
                let local = zip(g, tg).map { $0 % $1 }
                let actual = (0..<3).map { uniform ? tg[$0] : min(tg[$0], grid[$0] - group[$0] * tg[$0]) }
                let index = (local[2] * actual[1] + local[1]) * actual[0] + local[0]
                let threads = actual.reduce(1, *)
                let expected = g + grid + local + actual + group + groups
                    + [index, index % 32, index / 32, 32, (threads + 31) / 32, 1]
                XCTAssertEqual(row, expected, "thread \(g), uniform \(uniform)")
                if row != expected { return }
            } } }
        }
    }

    func testSetBytesStructsAndOffsets() throws {
        let source = """
        #include <metal_stdlib>
        using namespace metal;
        struct Params { float scale; uint bias; float2 shift; };
        kernel void affine(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                           constant Params& p [[buffer(2)]], uint i [[thread_position_in_grid]]) {
            y[i] = x[i] * p.scale + float(p.bias) + p.shift.y;
        }
        """
        let pipeline = try h.pipeline(source, "affine")
        let x = h.buffer((0..<100).map(Float.init)), y = h.buffer(count: 400)
        var params: (Float, UInt32, Float, Float) = (2, 3, 0, 0.5)
        h.run(pipeline, buffers: [], grid: MTLSize(width: 90, height: 1, depth: 1), group: MTLSize(width: 32, height: 1, depth: 1)) { encoder in
            encoder.setBuffer(x, offset: 40, index: 0)   // x starts at element 10
            encoder.setBuffer(y, offset: 0, index: 1)
            withUnsafeBytes(of: &params) { encoder.setBytes($0.baseAddress!, length: 16, index: 2) }
        }
        XCTAssertEqual(read(y, as: Float.self, count: 90), (0..<90).map { Float($0 + 10) * 2 + 3.5 })
    }

    func testRefusalsBecomeCommandBufferErrors() throws {
        let source = """
        #include <metal_stdlib>
        kernel void fill(device float* o [[buffer(0)]], constant float4& v [[buffer(1)]], uint i [[thread_position_in_grid]]) { o[i] = v.x; }
        """
        let pipeline = try h.pipeline(source, "fill")
        let out = h.buffer(count: 64)
        // Too many threads per threadgroup.
        var done = h.run(pipeline, buffers: [out], grid: MTLSize(width: 4, height: 1, depth: 1), group: MTLSize(width: 2048, height: 1, depth: 1))
        XCTAssertEqual(done.status, .error)
        XCTAssertTrue("\(done.error!)".contains("at most 1024"), "\(done.error!)")
        // A grid whose group count overflows 64 bits.
        done = h.run(pipeline, buffers: [out], grid: MTLSize(width: Int(UInt32.max), height: Int(UInt32.max), depth: Int(UInt32.max)),
                     group: MTLSize(width: 1, height: 1, depth: 1))
        XCTAssertEqual(done.status, .error)
        XCTAssertTrue("\(done.error!)".contains("too large"), "\(done.error!)")
        // Nothing bound at buffer(1).
        done = h.run(pipeline, buffers: [out], grid: MTLSize(width: 4, height: 1, depth: 1), group: MTLSize(width: 4, height: 1, depth: 1))
        XCTAssertEqual(done.status, .error)
        XCTAssertTrue("\(done.error!)".contains("[[buffer(1)]]"), "\(done.error!)")
        // A value smaller than the float4 the kernel reads.
        var small: Float = 1
        done = h.run(pipeline, buffers: [out], grid: MTLSize(width: 4, height: 1, depth: 1), group: MTLSize(width: 4, height: 1, depth: 1)) { encoder in
            encoder.setBytes(&small, length: 4, index: 1)
        }
        XCTAssertEqual(done.status, .error)
        XCTAssertTrue("\(done.error!)".contains("16 bytes"), "\(done.error!)")
    }

    func testCommandBufferRetainsBuffersAndCallsHandlers() throws {
        let source = "#include <metal_stdlib>\nkernel void inc(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] += 1; }"
        let pipeline = try h.pipeline(source, "inc")
        let freed = expectation(description: "deallocator runs after completion")
        let handled = expectation(description: "completion handler")
        let page = 16384
        let memory = UnsafeMutableRawPointer.allocate(byteCount: page, alignment: page)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: page)
        let commandBuffer = h.queue.makeCommandBuffer()!
        XCTAssertEqual(commandBuffer.status, .notEnqueued)
        do {
            let wrapped = h.device.makeBuffer(bytesNoCopy: memory, length: page, options: [], deallocator: { _, _ in freed.fulfill() })!
            let encoder = commandBuffer.makeComputeCommandEncoder()!
            encoder.setComputePipelineState(pipeline)
            encoder.setBuffer(wrapped, offset: 0, index: 0)
            encoder.dispatchThreads(MTLSize(width: 100, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: 32, height: 1, depth: 1))
            encoder.endEncoding()
        } // our last reference to `wrapped` is gone; the command buffer keeps it
        commandBuffer.addCompletedHandler { buffer in
            XCTAssertEqual(buffer.status, .completed)
            handled.fulfill()
        }
        commandBuffer.commit()
        commandBuffer.waitUntilCompleted()
        wait(for: [handled, freed], timeout: 10)
        XCTAssertEqual(memory.load(fromByteOffset: 99 * 4, as: UInt32.self), 1)
        XCTAssertEqual(memory.load(fromByteOffset: 100 * 4, as: UInt32.self), 0)
        memory.deallocate()
    }

    func testNoCopyBuffersNeed16KiBAlignment() {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 65536, alignment: 16384)
        defer { memory.deallocate() }
        XCTAssertNotNil(h.device.makeBuffer(bytesNoCopy: memory, length: 16384, options: [], deallocator: nil))
        XCTAssertNil(h.device.makeBuffer(bytesNoCopy: memory + 4096, length: 16384, options: [], deallocator: nil))
        XCTAssertNil(h.device.makeBuffer(bytesNoCopy: memory, length: 4096, options: [], deallocator: nil))
        XCTAssertNil(h.device.makeBuffer(length: 0, options: []))
    }

    func testCacheHitDoesNotRunClang() throws {
        let source = "#include <metal_stdlib>\nkernel void cached(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = \(UInt32.random(in: 0...1_000_000)); }"
        let options = MTLCompileOptions()
        let first = MSLCompiler()
        _ = try first.compile(source: source, options: options)
        XCTAssertEqual(first.clangInvocations - 2 * first.pchBuilds, 3) // preprocess, the AST, compile (and once per toolchain: the PCH and its object)
        let second = MSLCompiler() // a fresh process's compiler: empty memo, same disk cache
        let started = Date()
        _ = try second.compile(source: source, options: options)
        XCTAssertEqual(second.clangInvocations, 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.5)
    }

    func testThreadgroupMemoryLimit() throws {
        let source = """
        #include <metal_stdlib>
        kernel void big(device float* o [[buffer(0)]], threadgroup float* t [[threadgroup(0)]], uint i [[thread_position_in_grid]]) { t[0] = 1; o[i] = t[0]; }
        """
        let pipeline = try h.pipeline(source, "big")
        let out = h.buffer(count: 64)
        var done = h.run(pipeline, buffers: [out], grid: MTLSize(width: 4, height: 1, depth: 1), group: MTLSize(width: 4, height: 1, depth: 1)) { encoder in
            encoder.setThreadgroupMemoryLength(40000, index: 0)
        }
        XCTAssertEqual(done.status, .error)
        done = h.run(pipeline, buffers: [out], grid: MTLSize(width: 4, height: 1, depth: 1), group: MTLSize(width: 4, height: 1, depth: 1))
        XCTAssertEqual(done.status, .error, "unset [[threadgroup(0)]] length is refused")
        XCTAssertTrue("\(done.error!)".contains("threadgroup(0)"), "\(done.error!)")
        let tooBig = "#include <metal_stdlib>\nkernel void huge(device float* o [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) { threadgroup float t[9000]; t[i] = 1; o[i] = t[i]; }"
        XCTAssertThrowsError(try h.pipeline(tooBig, "huge")) { error in
            XCTAssertTrue("\(error)".contains("36000"), "\(error)")
        }
    }

    /// Pipeline reflection reports, per buffer, whether the kernel can write it,
    /// as Metal's does (MTLBindingAccess), from the parameter types.
    func testReflectionReportsReadOnlyBuffers() throws {
        let source = """
        #include <metal_stdlib>
        using namespace metal;
        struct P { float s; };
        kernel void k(device const float* a [[buffer(0)]], device float* b [[buffer(1)]],
                      constant P& p [[buffer(2)]], constant float* c [[buffer(3)]],
                      const device float* d [[buffer(5)]], device float* const e [[buffer(6)]],
                      threadgroup float* t [[threadgroup(0)]], uint i [[thread_position_in_grid]]) {
            e[i] = b[i] = a[i] * p.s + c[i] + d[i] + t[0];
        }
        """
        let function = try XCTUnwrap(try h.library(source).makeFunction(name: "k"))
        var reflection: MTLComputePipelineReflection?
        _ = try h.device.makeComputePipelineState(function: function, options: .bindingInfo, reflection: &reflection)
        let bindings = try XCTUnwrap(reflection).bindings
        let buffers = Dictionary(uniqueKeysWithValues: bindings.filter { $0.type == .buffer }.map { ($0.index, $0.access) })
        XCTAssertEqual(buffers, [0: .readOnly, 1: .readWrite, 2: .readOnly, 3: .readOnly, 5: .readOnly, 6: .readWrite])
        XCTAssertEqual(bindings.filter { $0.type == .threadgroupMemory }.map(\.index), [0])
        XCTAssertTrue(bindings.allSatisfy(\.isUsed))
        var none: MTLComputePipelineReflection?
        _ = try h.device.makeComputePipelineState(function: function, options: [], reflection: &none)
        XCTAssertEqual(none?.bindings.count, 0, "binding information only when asked for")
    }

    /// The constant address space is read-only, as in MSL: writing to it does not compile.
    func testWritingConstantMemoryIsACompileError() {
        let source = "#include <metal_stdlib>\nkernel void k(constant float* c [[buffer(0)]], uint i [[thread_position_in_grid]]) { c[i] = 1; }"
        XCTAssertThrowsError(try h.library(source))
    }

    /// Function constants as Metal's API sets them: by index or by name, per function.
    func testFunctionConstantValues() throws {
        let source = """
        #include <metal_stdlib>
        constant bool has_w [[function_constant(20)]];
        constant float scale [[function_constant(1)]];
        kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = has_w ? scale * i : -1; }
        """
        let library = try h.library(source)
        let plain = try XCTUnwrap(library.makeFunction(name: "k"))
        XCTAssertEqual(plain.functionConstantsDictionary["has_w"]?.index, 20)
        XCTAssertEqual(plain.functionConstantsDictionary["scale"]?.type, .float)
        XCTAssertEqual(plain.functionConstantsDictionary["scale"]?.required, true)
        XCTAssertThrowsError(try h.device.makeComputePipelineState(function: plain), "no values: no pipeline")
        let values = MTLFunctionConstantValues()
        var yes = true, half: Float = 0.5
        values.setConstantValue(&yes, type: .bool, index: 20)
        XCTAssertThrowsError(try library.makeFunction(name: "k", constantValues: values), "scale has no value")
        values.setConstantValue(&half, type: .float, withName: "scale")
        let function = try library.makeFunction(name: "k", constantValues: values)
        let pipeline = try h.device.makeComputePipelineState(function: function)
        let out = h.buffer(count: 4 * 8)
        let done = h.run(pipeline, buffers: [out], grid: MTLSize(width: 8, height: 1, depth: 1),
                         group: MTLSize(width: 8, height: 1, depth: 1))
        XCTAssertEqual(done.status, .completed)
        XCTAssertEqual(read(out, as: Float.self, count: 8), (0..<8).map { Float($0) * 0.5 })
        var wrong: Int32 = 1
        values.setConstantValue(&wrong, type: .int, index: 20)
        XCTAssertThrowsError(try library.makeFunction(name: "k", constantValues: values), "a bool given an int")
    }
}
