// Loads pymetal's own kernels: the library scripts/build_shaders.sh built from
// Shaders/, or, where it is missing (a Mac without the Metal toolchain), the
// Shaders/ sources compiled at run time (said once on stderr).
#if canImport(Metal)
import Metal
#else
import MetalCPU
#endif
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

public enum ShaderLibrary {
    /// Where the source tree keeps Shaders/ and the built library.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func load(on device: any MTLDevice) throws -> Library {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [URL] = []
        if let path = environment["PYMETAL_SHADER_LIBRARY"], !path.isEmpty { candidates.append(URL(fileURLWithPath: path)) }
        let bundled = PlatformSupport.imageDirectory.map { URL(fileURLWithPath: $0) }
        if let bundled { candidates.append(bundled.appendingPathComponent(PlatformSupport.shaderLibraryName)) }
        candidates.append(repository.appendingPathComponent(".build/shaders/\(PlatformSupport.shaderLibraryName)"))
        for url in candidates where FileManager.default.fileExists(atPath: url.path) {
            do {
                return Library(try device.makeLibrary(URL: url), device: device)
            } catch {
                throw EngineError(.invalidArgument, "cannot load pymetal's shader library \(url.path): \(describe(error))")
            }
        }
        var sources = repository.appendingPathComponent("Shaders")
        if let shipped = bundled?.appendingPathComponent("shaders"), FileManager.default.fileExists(atPath: shipped.path) {
            sources = shipped
        }
        let directory = URL(fileURLWithPath: environment["PYMETAL_SHADERS"] ?? sources.path)
        fputs("pymetal: no prebuilt \(PlatformSupport.shaderLibraryName) "
            + "(scripts/build_shaders.sh makes it); compiling \(directory.path) at run time\n", stderr)
        let options = MTLCompileOptions()
        if #available(macOS 15.0, *) { options.mathMode = .safe } else { options.fastMathEnabled = false }
        return Library(try device.makeLibrary(source: try combinedSource(of: directory), options: options), device: device)
    }

    /// All *.metal files of `directory` as one source, with `#include "..."` of
    /// local headers inlined once each (makeLibrary(source:) has no include path).
    public static func combinedSource(of directory: URL) throws -> String {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".metal") }.sorted()
        guard !files.isEmpty else { throw EngineError(.notFound, "no .metal files in \(directory.path)") }
        var included: Set<String> = []
        var out = ""
        func inline(_ url: URL) throws {
            let path = url.standardizedFileURL.path
            guard !included.contains(path) else { return }
            included.insert(path)
            let text = try String(contentsOf: url, encoding: .utf8)
            out += "#line 1 \"\(url.lastPathComponent)\"\n"
            var number = 0
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                number += 1
                let trimmed = line.trimmed
                if trimmed.hasPrefix("#include \""), let end = trimmed.dropFirst(10).firstIndex(of: "\"") {
                    let name = String(trimmed.dropFirst(10)[..<end])
                    try inline(url.deletingLastPathComponent().appendingPathComponent(name))
                    out += "#line \(number + 1) \"\(url.lastPathComponent)\"\n"
                } else if trimmed == "#pragma once" {
                    out += "\n"
                } else {
                    out += line + "\n"
                }
            }
        }
        for file in files { try inline(directory.appendingPathComponent(file)) }
        return out
    }
}

extension StringProtocol {
    /// Without leading and trailing whitespace (Foundation's trimmingCharacters(in:), from the standard library).
    public var trimmed: SubSequence {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
