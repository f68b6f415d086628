import XCTest
@testable import MetalCPU

/// Which kernels the front end rewrites for SIMD lockstep (Lockstep.swift), and what it writes.
/// The results of rewritten kernels are tested against NumPy, both ways, in
/// tests/python/test_simd_lockstep*.py.
final class LockstepTests: XCTestCase {
    private func run(_ source: String, validation: Bool = false, lockstep: Bool = true) throws -> FrontEndOutput {
        try FrontEnd.run(preprocessed: "# 1 \"program_source\"\n" + source, validation: validation, lockstep: lockstep)
    }

    private let head = """
    kernel void k(device const float* x [[buffer(0)]], device float* out [[buffer(1)]], constant uint& n [[buffer(2)]],
                  uint gid [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                  uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]]) {
    """

    private func lockstep(_ body: String) throws -> Bool {
        let output = try run(head + body + "\n}")
        XCTAssertTrue(output.kernels[0].usesFibers)
        return output.kernels[0].lockstep
    }

    func testGridStrideReductionIsRewritten() throws {
        let output = try run(head + """
            threadgroup float shared[32];
            float acc = 0.0f;
            for (uint i = gid; i < n; i += grid) acc += x[i];
            float s = simd_sum(acc);
            if (lane == 0) shared[sg] = s;
            threadgroup_barrier(mem_flags::mem_threadgroup);
            if (sg == 0) { float v = shared[lane]; v = simd_sum(v); if (lane == 0) out[0] = v; }
        }
        """)
        XCTAssertTrue(output.kernels[0].lockstep)
        let text = output.text
        XCTAssertTrue(text.contains("float (*__pm_h1_acc) = (float (*))::pm::rt::ls_alloc(__pm_w, sizeof(float));"), text)
        // the grid-stride loop steps across the threads: its index is start + k * step
        XCTAssertTrue(text.contains("uint i = (\n# 5 \"program_source\"\n" + String(repeating: " ", count: 18) + "gid) + (uint)(__pm_k1) * ("), text)
        XCTAssertTrue(text.contains("::pm::rt::ls_collect(__pm_w);"), text)
        XCTAssertTrue(text.contains("::pm::rt::ls_any(__pm_m"), text)
        XCTAssertFalse(text.contains("tick("), "no yield points in a rewritten kernel")
        // each copied statement keeps its line
        XCTAssertTrue(text.contains("\n# 5 \"program_source\"\n"), text)
        XCTAssertTrue(text.contains("\n# 7 \"program_source\"\n"), text)
    }

    func testShapesThatAreRewritten() throws {
        XCTAssertTrue(try lockstep("out[gid] = simd_prefix_exclusive_sum(x[gid]);"))
        XCTAssertTrue(try lockstep("float a = x[gid], b; b = simd_max(a); if (lane < 16) { a = simd_sum(b); } else { a = 0; } out[gid] = a;"))
        XCTAssertTrue(try lockstep("device const float* row = x + sg * 32; float4 v = float4(row[lane]); out[gid] = simd_sum(v.x);"))
        XCTAssertTrue(try lockstep("threadgroup_barrier(mem_flags::mem_threadgroup);"))
        XCTAssertTrue(try lockstep("if (gid >= n) return; out[gid] = simd_sum(x[gid]);"), "threads leave at the body's level")
    }

    func testShapesThatStayOnFibers() throws {
        XCTAssertFalse(try lockstep("if (lane < 16) { out[gid] = simd_sum(x[gid]); return; } out[gid] = 0;"),
                       "a thread leaves from inside a statement")
        XCTAssertFalse(try lockstep("float a = 0; for (uint i = 0; i < n; i++) a += simd_sum(x[i]); out[gid] = a;"),
                       "a SIMD-group call in a loop")
        XCTAssertFalse(try lockstep("float a = x[gid]; a += simd_sum(a); out[gid] = a;"), "a compound assignment would run twice")
        XCTAssertFalse(try lockstep("uint j = gid; out[gid] = simd_sum(x[j++]);"), "an increment would run twice")
        XCTAssertFalse(try lockstep("auto a = x[gid]; out[gid] = simd_sum(a);"), "a local of unknown size")
        XCTAssertFalse(try lockstep("float a[2] = {1, 2}; out[gid] = simd_sum(a[0]);"), "an initialised array")
        XCTAssertFalse(try lockstep("out[gid] = simd_sum(x[gid]) + simd_max(x[gid]);"), "two SIMD-group calls in one statement")
        XCTAssertFalse(try lockstep("switch (lane) { case 0: out[0] = simd_sum(1.0f); break; default: break; }"))
    }

    func testUserFunctionsInASIMDStatement() throws {
        let helper = "float f(float v) { return v * 2; }\n"
        let output = try run(helper + head + "out[gid] = simd_sum(f(x[gid]));\n}")
        XCTAssertFalse(output.kernels[0].lockstep, "a user function may have side effects and would run twice")
    }

    func testOffWhenAskedAndInValidationBuilds() throws {
        let body = head + "out[gid] = simd_sum(x[gid]);\n}"
        XCTAssertTrue(try run(body).kernels[0].lockstep)
        XCTAssertFalse(try run(body, lockstep: false).kernels[0].lockstep)
        XCTAssertFalse(try run(body, validation: true).kernels[0].lockstep)
    }

    func testTemplatesStayOnFibers() throws {
        let output = try run("""
        template <typename T> kernel void t(device T* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = simd_sum(o[i]); }
        template [[host_name("t_float")]] kernel void t<float>(device float*, uint);
        """)
        XCTAssertEqual(output.kernels.map(\.lockstep), [false])
    }

    /// The emitted body of a rewritten kernel made of `head` and `body` (asserting that it was rewritten).
    private func rewritten(_ body: String, helpers: String = "") throws -> String {
        let output = try run(helpers + head + body + "\n}")
        XCTAssertTrue(output.kernels[0].lockstep, body)
        return output.text
    }

    func testUniformLoopsAreOneLoopForTheGroup() throws {
        // index, start, condition and step made of constants and arguments: a plain loop, no per-thread index
        var text = try rewritten("float a = 0; for (uint k = 0; k < n; k += 8) { float s = simd_sum(x[k + lane]); a += s; } out[gid] = a;")
        XCTAssertTrue(text.contains("for (uint k = 0; k < n; k += 8) {"), text)
        XCTAssertFalse(text.contains("__pm_h2_k"), "the index is not kept per thread: " + text)
        // once threads may have left, a group whose threads all left takes no steps
        text = try rewritten("if (gid >= n) return; float a = 0; for (uint k = 0; k < n; k++) { float s = simd_sum(x[k]); a += s; } out[gid] = a;")
        XCTAssertTrue(text.contains("if (::pm::rt::ls_any(__pm_m0, __pm_g))\n"), text)
        // a vector constructor or MSL function taking the index does not change it
        text = try rewritten("float a = 0; for (uint k = 0; k < n; k++) { float s = simd_sum(x[min(k, n)] + float2(k, 1).x); a += s; } out[gid] = a;")
        XCTAssertTrue(text.contains("for (uint k = 0; k < n; k++) {"), text)
        // a constant set from the index is the group's too: it bounds another group-wide loop
        text = try rewritten("float a = 0; for (uint k = 0; k < n; k++) { const uint w = k % 4 + 1;"
                             + " for (uint j = 0; j < w; j++) { float s = simd_sum(x[j]); a += s; } } out[gid] = a;")
        XCTAssertTrue(text.contains("for (uint j = 0; j < w; j++) {"), text)
    }

    func testLoopsThatAreNotUniform() throws {
        let cases: [(String, String, String)] = [
            ("for (uint k = lane; k < n; k += 32) { float v = simd_sum(x[k]); a += v; }", "", "a start per thread"),
            ("for (uint k = 0; k < lim; k++) { float v = simd_sum(x[k]); a += v; }", "", "a bound in device memory may change"),
            ("for (uint k = 0; k < n; k++) { float v = simd_sum(x[k]); a += v; k += 1; }", "", "the body steps the index"),
            ("for (uint k = 0; k < n; k++) { bump(k); float v = simd_sum(x[k]); a += v; }",
             "void bump(thread uint& v) { v += 1; }\n", "a user function may take the index by reference"),
            ("for (uint k = 0; k < n; k++) { s.bump(k); float v = simd_sum(x[k]); a += v; }",
             "struct S { void bump(thread uint& v) const { v += 1; } };\n", "a member function may take it by reference"),
            ("for (float k = 0; k < n; k += 1) { float v = simd_sum(x[uint(k)]); a += v; }", "", "not an integer index"),
        ]
        for (loop, helpers, why) in cases {
            let source = head.replacingOccurrences(of: "constant uint& n [[buffer(2)]],",
                                                   with: "constant uint& n [[buffer(2)]], device uint& lim [[buffer(3)]]," + (helpers.hasPrefix("struct") ? " constant S& s [[buffer(4)]]," : ""))
            let output = try run(helpers + source + "float a = 0; " + loop + " out[gid] = a;\n}")
            XCTAssertTrue(output.kernels[0].lockstep, why)
            XCTAssertTrue(output.text.contains("::pm::rt::ls_any(__pm_m"), "a loop of the threads still in it: " + why)
        }
    }

    func testSimdgroupCooperativeLoopTakesTheSameStepsEverywhere() throws {
        // each lane copies 64 / 32 elements: two steps for every thread, no condition asked
        let text = try rewritten("""
            threadgroup float t[64];
            for (uint j = lane; j < 64; j += 32) t[j] = x[j];
            simdgroup_barrier(mem_flags::mem_threadgroup);
            out[gid] = t[lane] + t[lane + 32];
            """)
        XCTAssertTrue(text.contains(" < 2u; ++__pm_k"), text)
        // an address divided by a constant: whole simdgroups run as 4 runs of 8 lanes (x[j / 8] is one
        // element for a run, x[j % 8] 8 neighbours); other statements keep the one loop over the lanes
        let runs = try rewritten("""
            threadgroup float t[64];
            for (uint j = lane; j < 64; j += 32) t[j] = x[(j / 8) * n + j % 8];
            simdgroup_barrier(mem_flags::mem_threadgroup);
            out[gid] = t[lane];
            """)
        XCTAssertEqual(runs.components(separatedBy: "__pm_h < 32u; __pm_h += 8u").count, 2, runs)
        // a bound that is no multiple of 32 steps as usual
        let other = try rewritten("""
            threadgroup float t[64];
            for (uint j = lane; j < 40; j += 32) t[j] = x[j];
            simdgroup_barrier(mem_flags::mem_threadgroup);
            out[gid] = t[lane];
            """)
        XCTAssertFalse(other.contains(" < 2u; ++__pm_k"), other)
        XCTAssertTrue(other.contains("__pm_going"), other)
    }

    func testStatementsUnderAMaskGetACopyForAllThreads() throws {
        // after a return some threads may be gone: each statement has a copy for when none is
        let text = try rewritten("if (gid >= n) return; out[gid] = x[gid]; float s = simd_sum(x[gid]); out[gid] += s;")
        XCTAssertTrue(text.contains("if (::pm::rt::ls_full(__pm_m0, __pm_g))"), text)
        // before it, and in branches (often a lane or two), one copy
        let before = try rewritten("out[gid] = x[gid]; if (lane == 0) { out[gid] = 1; } float s = simd_sum(x[gid]); out[gid] += s;")
        XCTAssertFalse(before.contains("ls_full"), before)
        // statements vectorise over the threads, unless they tell the runtime which thread runs
        XCTAssertTrue(before.contains("#pragma clang loop vectorize(assume_safety)"), before)
    }
}
