// pymetal-metallib: builds pymetal's shader library from Shaders/ for the CPU
// backend, as `xcrun metal` + `metallib` do on a Mac (scripts/build_shaders.sh).
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif
import PyMetalCore
#if !canImport(Metal)
import MetalCPU
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    fputs("usage: pymetal-metallib <Shaders folder> <output library>\n", stderr)
    exit(2)
}
#if canImport(Metal)
fputs("pymetal-metallib builds MetalCPU libraries; on macOS use xcrun (scripts/build_shaders.sh)\n", stderr)
exit(2)
#else
do {
    let shaders = URL(fileURLWithPath: arguments[1])
    let source = try ShaderLibrary.combinedSource(of: shaders)
    let options = MTLCompileOptions()
    options.mathMode = .safe
    // All of Shaders/ is one unit: minutes of clang++ on a busy 2-core machine, over a compile's default limit.
    setenv("PYMETAL_COMPILE_TIMEOUT", "3600", 0)
    let built = try MSLCompiler.shared.compile(source: source, options: options)
    let output = URL(fileURLWithPath: arguments[2])
    try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
    try? FileManager.default.removeItem(at: output)
    try FileManager.default.copyItem(at: built, to: output)
    let library = try CPUDevice.shared.makeLibrary(URL: output)
    print("pymetal-metallib: \(output.path): \(library.functionNames.count) kernels")
} catch {
    fputs("pymetal-metallib: \(error)\n", stderr)
    exit(1)
}
#endif
