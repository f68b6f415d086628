import XCTest
@testable import MetalCPU

/// The front end on hand-written "preprocessed" text (no clang needed).
final class FrontEndTests: XCTestCase {
    private func run(_ source: String) throws -> FrontEndOutput {
        try FrontEnd.run(preprocessed: "# 1 \"program_source\"\n" + source)
    }

    func testPlainKernelBindingsAndRewrite() throws {
        let output = try run("""
        kernel void square(const device float *in [[buffer(0)]], device float *out [[buffer(1)]],
                           uint id [[thread_position_in_grid]], constant float& a [[ buffer(2) ]]) { out[id] = in[id]; }
        """)
        XCTAssertEqual(output.kernels.map(\.hostName), ["square"])
        let kernel = output.kernels[0]
        XCTAssertEqual(kernel.function, "::square")
        XCTAssertEqual(kernel.bindings.map(\.kind), [.buffer, .buffer, .position("thread_position_in_grid"), .buffer])
        XCTAssertEqual(kernel.bindings.map(\.index), [0, 1, 0, 2])
        XCTAssertFalse(kernel.usesFibers)
        XCTAssertFalse(output.text.contains("[["))
        XCTAssertFalse(output.text.contains("kernel"))
        XCTAssertEqual(output.text.split(separator: "\n", omittingEmptySubsequences: false).count, 3, "newlines are kept")
    }

    func testTemplateInstantiationsInNamespace() throws {
        let output = try run("""
        namespace ops {
        template <typename T, typename Op>
        [[kernel]] void binary(device const T* a [[buffer(0)]], device T* out [[buffer(1)]], uint i [[thread_position_in_grid]]) { out[i] = Op()(a[i]); }
        template [[host_name("add" "_" "f32")]] [[kernel]] decltype(binary<float, Add>) binary<float, Add>;
        template [[host_name("add_i32")]] [[kernel]] void binary<int, Add>(device const int* a [[buffer(0)]], device int* out [[buffer(1)]], uint i [[thread_position_in_grid]]);
        }
        """)
        XCTAssertEqual(output.kernels.map(\.hostName), ["add_f32", "add_i32"])
        XCTAssertEqual(output.kernels[0].function.replacingOccurrences(of: " ", with: ""), "::ops::binary<float,Add>")
        XCTAssertEqual(output.kernels[0].bindings.count, 3)
        XCTAssertTrue(output.text.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("template decltype(binary<float, Add>) binary<float, Add>;"), output.text)
        XCTAssertFalse(output.text.contains("host_name"))
    }

    func testInstantiationOfAPlainFunctionTemplate() throws {
        let output = try run("""
        template <typename T> void fill(device T* o, uint i) { o[i] = simd_sum(T(1)); }
        template [[host_name("fill_f")]] [[kernel]] void fill<float>(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]);
        """)
        XCTAssertEqual(output.kernels.map(\.hostName), ["fill_f"])
        XCTAssertEqual(output.kernels[0].bindings.map(\.kind), [.buffer, .position("thread_position_in_grid")])
        XCTAssertTrue(output.kernels[0].usesFibers, "the template's body is analysed")
    }

    func testThreadgroupStorageAndPointers() throws {
        let output = try run("""
        void helper(threadgroup float* p) { p[0] = 1; }
        kernel void k(device float* out [[buffer(0)]], threadgroup float* dyn [[threadgroup(0)]], uint i [[thread_index_in_threadgroup]]) {
            threadgroup float tile[16][17], other[4];
            threadgroup float* p = tile[0];
            out[i] = p[i] + dyn[i] + other[0];
        }
        """)
        let text = output.text
        XCTAssertTrue(text.contains("decltype(auto) tile = ::pm::rt::tg_var<float [16][17], 0>();"), text)
        XCTAssertTrue(text.contains("decltype(auto) other = ::pm::rt::tg_var<float [4], 1>();"), text)
        XCTAssertFalse(text.contains("threadgroup"), text)
        XCTAssertEqual(output.kernels[0].sites, [0, 1])
        XCTAssertEqual(output.kernels[0].bindings.map(\.kind), [.buffer, .threadgroup, .position("thread_index_in_threadgroup")])
        XCTAssertFalse(text.contains("vptr"), text) // only validation builds check pointers
    }

    func testArraySizesKeepShiftsAndOtherOperators() throws {
        let text = try run("""
        kernel void k(device float* out [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
            threadgroup float a[1 << 5], b[(64 >> 1) + 2 * 3], c[sizeof(float) * 8];
            out[i] = a[i] + b[i] + c[i];
        }
        """).text
        XCTAssertTrue(text.contains("tg_var<float [1 << 5], 0>"), text)
        XCTAssertTrue(text.contains("tg_var<float [(64 >> 1) + 2 * 3], 1>"), text)
        XCTAssertTrue(text.contains("tg_var<float [sizeof(float) * 8], 2>"), text)
    }

    func testValidationChecksPointerParameters() throws {
        let text = try FrontEnd.run(preprocessed: "# 1 \"program_source\"\n" + """
        kernel void k(const float* a [[buffer(0)]], float* b [[buffer(1)]], threadgroup float* t [[threadgroup(0)]],
                      const float& s [[buffer(2)]], uint i [[thread_position_in_grid]]) { b[i] = a[i] * s + t[0]; }
        """, validation: true).text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        XCTAssertTrue(text.contains("::pm::rt::vptr<const float, 0, 0, \"a\"> a"), text)
        XCTAssertTrue(text.contains("::pm::rt::vptr<float, 0, 1, \"b\"> b"), text)
        XCTAssertTrue(text.contains("::pm::rt::vptr<float, 1, 0, \"t\"> t"), text)
        XCTAssertTrue(text.contains("const float& s"), text) // references are sized when encoded
        // (the parameter's name travels with the pointer: messages name `a`, not [[buffer(0)]])
    }

    func testFibersWhenABarrierIsReachable() throws {
        let output = try run("""
        float reduce(float x) { return simd_sum(x); }
        struct Op { float operator()(float x) { return reduce(x); } };
        kernel void a(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = Op()(o[i]); }
        kernel void b(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = 2; }
        kernel void c(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { threadgroup_barrier(mem_flags::mem_threadgroup); }
        kernel void d(device float* o [[buffer(0)]], uint simd_lane_id [[thread_index_in_simdgroup]]) { o[simd_lane_id] = 1; }
        """)
        XCTAssertEqual(output.kernels.map(\.usesFibers), [true, false, true, false])
    }

    func testErrorsNameTheLine() {
        XCTAssertThrowsError(try run("\nkernel void k(device float* o [[buffer(40)]], uint i [[thread_position_in_grid]]) {}")) { error in
            let message = (error as! CompileDiagnostics).messages.joined()
            XCTAssertTrue(message.contains("program_source:2:"), message)
            XCTAssertTrue(message.contains("index from 0 to 30"), message)
        }
        XCTAssertThrowsError(try run("kernel void k(device float* o [[buffer(0)]], uint v [[vertex_id]]) {}")) { error in
            XCTAssertTrue((error as! CompileDiagnostics).messages.joined().contains("not supported"))
        }
    }

    /// Vertex and fragment functions and kernels that bind textures (EntryPoints.swift) become kernels without
    /// parameters whose body reports what they are; struct members' stage attributes go.
    func testGraphicsEntryPointsBecomeRefusingKernels() throws {
        let output = try run("""
        struct V { float4 p [[position]]; float2 uv [[user(locn0)]]; };
        vertex V vert(uint vid [[vertex_id]]);
        vertex V vert(uint vid [[vertex_id]]) { V v; return v; }
        [[fragment]] float4 frag(V in [[stage_in]]) { return in.p; }
        kernel void tex(texture2d<float, access::write> t [[texture(0)]], uint2 g [[thread_position_in_grid]]) {}
        kernel void k(device float* o [[buffer(0)]]) {}
        """)
        XCTAssertEqual(output.kernels.map(\.hostName), ["vert", "frag", "tex", "k"])
        XCTAssertEqual(output.kernels.map(\.bindings.count), [0, 0, 0, 1])
        XCTAssertTrue(output.text.contains("void vert() { ::pm::rt::refused_entry_point(\"vert\", \"a vertex function\"); }"))
        XCTAssertTrue(output.text.contains("\"tex\", \"a kernel with a texture2d parameter\""))
        XCTAssertFalse(output.text.contains("[[position]]") || output.text.contains("user(locn0)") || output.text.contains("vertex_id"))
    }

    /// Buffer indices named by enumerators (Apple's samples): values in source order, implicit ones counting on.
    func testBufferIndicesFromEnumerators() throws {
        let output = try run("""
        typedef enum Index { IndexA = 3, IndexB, IndexC = IndexA + 4 } Index;
        enum class E : int { X = 1, Y };
        kernel void k(device float* a [[buffer(IndexB)]], device float* b [[buffer(IndexC)]], device float* c [[buffer(E::Y)]]) {}
        """)
        XCTAssertEqual(output.kernels[0].bindings.map(\.index), [4, 7, 2])
    }

    /// tinygrad's renderer leaves buffer parameters unattributed; Metal numbers them in order.
    func testUnattributedParametersTakeTheNextBufferIndex() throws {
        let output = try run("""
        kernel void E_4(device float* data0, const device float* data1, constant int& n,
                        uint3 gid [[threadgroup_position_in_grid]], device float* extra [[buffer(5)]], device int* more) {}
        """)
        XCTAssertEqual(output.kernels[0].bindings.map(\.kind), [.buffer, .buffer, .buffer, .position("threadgroup_position_in_grid"), .buffer, .buffer])
        XCTAssertEqual(output.kernels[0].bindings.map(\.index), [0, 1, 2, 0, 5, 6])
    }

    /// Strided for loops of code that FIBERS kernels reach get a yield point (pm::rt::tick), with a
    /// counter of their own; loops stepping by a small constant, while / do loops, loops that meet at
    /// SIMD functions, literal-bound loops, loops under a #pragma and range-based for stay as they
    /// are; LOOP kernels are untouched.
    func testYieldPointsInStridedLoopsOfFiberKernels() throws {
        let source = """
        float walk(device const float* x, uint i, uint n, uint s) { float a = 0; for (; i < n; i += s) a += x[i]; return a; }
        float meet(float v, uint n, uint s) { for (uint r = 0; r < n; r += s) v = simd_sum(v); return v; }
        kernel void k(device float* x [[buffer(0)]], constant uint& n [[buffer(1)]], uint i [[thread_position_in_grid]],
                      uint g [[threads_per_grid]]) {
            float acc = 0;
            for (uint j = i; j < n; j += g) acc += x[j];
            for (uint j = i * 4, q = 0; j < n; j = j + 4 * g, q++) { acc += x[j]; }
            for (uint j = i; j < n; j += 0x40u) acc += x[j];
            for (uint j = i; j < n; j += 4) acc += x[j];
            for (uint j = 0; j < n; ++j) acc += x[j];
            for (;;) { if (acc > 0) break; acc += 1; }
            uint m = i; while (m > 1) m >>= 1; do { m += g; } while (m < n);
            for (uint u = 0; u < 8; u += g) acc += u;
        #pragma unroll
            for (uint v = 0; v < n; v += g) acc += v;
            for (uint r = 0; r < n; r += g) acc = meet(acc, 2, g);
            int arr[2] = {1, 2};
            for (int e : arr) acc += e;
            x[i] = simd_sum(acc + walk(x, i, n, g) + m);
        }
        kernel void plain(device float* x [[buffer(0)]], constant uint& n [[buffer(1)]], uint i [[thread_position_in_grid]],
                          uint g [[threads_per_grid]]) { for (uint j = i; j < n; j += g) x[j] = 0; }
        """
        let output = try run(source)
        XCTAssertEqual(output.kernels.map(\.usesFibers), [true, false])
        let text = output.text
        func has(_ piece: String) -> Bool { text.contains(piece) }
        let wrap = { (n: Int) in "for (::pm::rt::loop_yield __pm_y\(n); __pm_y\(n).once; __pm_y\(n).once = false) " }
        XCTAssertTrue(has(wrap(1) + "for (; i < n; ::pm::rt::tick(__pm_y1), i += s) a += x[i];"), text)
        XCTAssertTrue(has(wrap(2) + "for (uint j = i; j < n; ::pm::rt::tick(__pm_y2), j += g) acc += x[j];"), text)
        XCTAssertTrue(has(wrap(3) + "for (uint j = i * 4, q = 0; j < n; ::pm::rt::tick(__pm_y3), j = j + 4 * g, q++)"), text)
        XCTAssertTrue(has(wrap(4) + "for (uint j = i; j < n; ::pm::rt::tick(__pm_y4), j += 0x40u)"), text)
        XCTAssertEqual(text.components(separatedBy: "::pm::rt::tick(").count - 1, 4, text)
        for unchanged in ["\n    for (uint j = i; j < n; j += 4) acc", "\n    for (uint j = 0; j < n; ++j) acc",
                          "\n    for (;;) {", "while (m > 1) m >>= 1; do { m += g; } while (m < n);",
                          "for (uint u = 0; u < 8; u += g)", "for (uint v = 0; v < n; v += g)",
                          "for (uint r = 0; r < n; r += s) v = simd_sum(v);", "for (uint r = 0; r < n; r += g) acc = meet(",
                          "for (int e : arr)", "{ for (uint j = i; j < n; j += g) x[j] = 0; }"] {
            XCTAssertTrue(has(unchanged), "\(unchanged) is left alone: \(text)")
        }
        XCTAssertEqual(text.split(separator: "\n", omittingEmptySubsequences: false).count,
                       source.split(separator: "\n", omittingEmptySubsequences: false).count + 1, "newlines are kept")
    }

    func testUnknownAttributes() throws {
        XCTAssertThrowsError(try run("kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grd]]) {}")) { error in
            XCTAssertTrue((error as! CompileDiagnostics).messages.joined().contains("unknown attribute 'thread_position_in_grd'"))
        }
        // Elsewhere, attributes that are not Metal's are left for clang to judge.
        let output = try run("[[nodiscard]] int f() { return 1; }\n[[foo]] int g();")
        XCTAssertTrue(output.text.contains("[[nodiscard]]") && output.text.contains("[[foo]]"), output.text)
    }
}

final class LiteralAndDigestTests: XCTestCase {
    func testHalfAndBfloatLiterals() {
        XCTAssertEqual(Literals.rewrite("x = 1.5h + 2h * 0.5bf; // 3.0h\n\"1.0h\" 1.0f 0x1h"),
                       "x = ((half)1.5) + ((half)2) * ((bfloat)0.5); // 3.0h\n\"1.0h\" 1.0f 0x1h")
    }

    func testSHA256() {
        var digest = SHA256()
        digest.update("abc")
        XCTAssertEqual(digest.hexDigest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var long = SHA256()
        long.update(String(repeating: "a", count: 1000))
        XCTAssertEqual(long.hexDigest(), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
        // The same bytes in pieces that straddle block boundaries in every way.
        var pieces = SHA256()
        let sizes = [1, 63, 64, 65, 0, 127, 128, 129, 7, 200]
        var left = 1000, turn = 0
        while left > 0 {
            let size = min(sizes[turn % sizes.count], left)
            pieces.update(String(repeating: "a", count: size))
            left -= size
            turn += 1
        }
        XCTAssertEqual(pieces.hexDigest(), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }
}
