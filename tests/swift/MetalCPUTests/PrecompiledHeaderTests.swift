import Foundation
import XCTest
@testable import MetalCPU

/// The precompiled MSL headers: built once, reused, rebuilt when the headers
/// change, and a damaged one is replaced, never trusted.
final class PrecompiledHeaderTests: XCTestCase {
    let h = Harness()
    private var headers: URL!
    private var cache: URL!
    private var saved: [String: String?] = [:]

    override func setUpWithError() throws {
        // A copy of the MSL headers (PYMETAL_MSL_HEADERS layout: one folder) and an empty compile cache.
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("pm-pch-\(UUID().uuidString)")
        headers = root.appendingPathComponent("msl")
        cache = root.appendingPathComponent("cache")
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        try FileManager.default.copyItem(at: sources.appendingPathComponent("MetalCPU/MSL"), to: headers)
        try FileManager.default.copyItem(at: sources.appendingPathComponent("CMetalCPU/include/pm_kernel_abi.h"),
                                         to: headers.appendingPathComponent("pm_kernel_abi.h"))
        for (name, value) in [("PYMETAL_MSL_HEADERS", headers.path), ("XDG_CACHE_HOME", cache.path)] {
            saved[name] = ProcessInfo.processInfo.environment[name]
            setenv(name, value, 1)
        }
        try setMarker(1)
    }

    override func tearDownWithError() throws {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        try? FileManager.default.removeItem(at: headers.deletingLastPathComponent())
    }

    /// A function in the force-included headers (so in the PCH) whose value kernels report.
    private func setMarker(_ value: Int) throws {
        let stdlib = headers.appendingPathComponent("metal_stdlib")
        var text = try String(contentsOf: stdlib, encoding: .utf8)
        if let range = text.range(of: "\nnamespace pm_pch_test") { text = String(text[..<range.lowerBound]) }
        text += "\nnamespace pm_pch_test { inline unsigned marker() { return \(value)u; } }\n"
        try text.write(to: stdlib, atomically: true, encoding: .utf8)
    }

    /// Compiles a kernel that writes the marker (distinct source per `tag`) and returns the value it writes.
    private func run(_ compiler: MSLCompiler, tag: Int) throws -> UInt32 {
        let source = "#include <metal_stdlib>\nkernel void k(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = pm_pch_test::marker() + \(tag)u * 0; }"
        let library = try h.device.makeLibrary(URL: try compiler.compile(source: source, options: MTLCompileOptions()))
        let pipeline = try h.device.makeComputePipelineState(function: XCTUnwrap(library.makeFunction(name: "k")))
        let out = h.buffer(count: 4)
        let done = h.run(pipeline, buffers: [out], grid: MTLSize(width: 1, height: 1, depth: 1), group: MTLSize(width: 1, height: 1, depth: 1))
        XCTAssertEqual(done.status, .completed)
        return read(out, as: UInt32.self, count: 1)[0]
    }

    private func pchFiles() -> [String] {
        let folder = MSLCompiler.cacheDirectory().path
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".pch") }
    }

    func testBuiltOnceReusedAndRebuiltWhenHeadersChange() throws {
        let first = MSLCompiler()
        XCTAssertEqual(try run(first, tag: 1), 1)
        XCTAssertEqual(first.pchBuilds, 1)
        XCTAssertEqual(first.clangInvocations, 5, "preprocess, PCH, its object, the signatures' AST, compile")

        let second = MSLCompiler() // as a new process: the PCH comes from the disk cache
        XCTAssertEqual(try run(second, tag: 2), 1)
        XCTAssertEqual(second.pchBuilds, 0)
        XCTAssertEqual(second.clangInvocations, 3, "preprocess, the signatures' AST, compile")

        try setMarker(2) // the headers change: a new PCH, and kernels see the new headers
        let third = MSLCompiler()
        XCTAssertEqual(try run(third, tag: 2), 2)
        XCTAssertEqual(third.pchBuilds, 1)
        XCTAssertEqual(pchFiles().count, 2)
    }

    func testDamagedPCHIsReplaced() throws {
        XCTAssertEqual(try run(MSLCompiler(), tag: 1), 1)
        let pch = try XCTUnwrap(pchFiles().first)
        let path = MSLCompiler.cacheDirectory().appendingPathComponent(pch).path
        try Data("not a precompiled header".utf8).write(to: URL(fileURLWithPath: path))

        let damaged = MSLCompiler()
        XCTAssertEqual(try run(damaged, tag: 2), 1, "compiled without the damaged PCH")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the damaged PCH is removed")
        let next = MSLCompiler()
        XCTAssertEqual(try run(next, tag: 3), 1)
        XCTAssertEqual(next.pchBuilds, 1, "and built again by the next compile")
    }
}
