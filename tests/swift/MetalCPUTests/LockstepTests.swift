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
}
