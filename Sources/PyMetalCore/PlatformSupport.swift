// Everything in the engine that differs between macOS (Apple's Metal) and
// Linux (MetalCPU). Every other engine file only imports the module below.
#if canImport(Metal)
import Metal
import Darwin
#else
import MetalCPU
import CMetalCPU
import Glibc
#endif

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

    /// The folder of the binary the engine is linked into (libPyMetal): a wheel
    /// keeps the shader library and Shaders/ beside it, in pymetal/lib.
    static let imageDirectory: String? = {
        #if canImport(Metal)
        var info = Dl_info()
        guard dladdr(#dsohandle, &info) != 0, let name = info.dli_fname else { return nil }
        #else
        guard let name = pm_host_self_path() else { return nil }  // Glibc's module lacks dladdr
        #endif
        let path = String(cString: name)
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }()
}
