// Everything in the engine that differs between macOS (Apple's Metal) and
// Linux (MetalCPU). Every other engine file only imports the module below.
#if canImport(Metal)
import Metal
import Darwin
#else
import MetalCPU
import Glibc
#endif
import Foundation

enum PlatformSupport {
    #if canImport(Metal)
    static let backend = "metal"
    /// The prebuilt library `scripts/build_shaders.sh` makes with xcrun.
    static let shaderLibraryName = "pymetal.metallib"
    /// No-copy buffers need page-aligned memory: 16 KiB on Apple Silicon, 4 KiB on Intel Macs.
    static let pageSize = Int(getpagesize())
    #else
    static let backend = "cpu"
    /// The kernel library `scripts/build_shaders.sh` makes with pymetal-metallib.
    static let shaderLibraryName = "pymetal-cpu.metallib"
    /// As Apple Silicon, so that code which would fail on a Mac fails here first.
    static let pageSize = 16384
    #endif
}
