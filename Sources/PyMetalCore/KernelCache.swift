// The disk cache of compiled kernels, where there is one of pymetal's own:
// MetalCPU's (Linux). On macOS, Metal compiles and caches shaders itself.
#if !canImport(Metal)
import MetalCPU
#endif

public enum KernelCache {
    public struct Info {
        /// nil where pymetal keeps no cache of its own (macOS).
        public let path: String?
        public let persistent: Bool
        public let entries: Int
        public let bytes: UInt64
        public let maxBytes: UInt64
    }

    public static func info() throws -> Info {
        #if canImport(Metal)
        return Info(path: nil, persistent: false, entries: 0, bytes: 0, maxBytes: 0)
        #else
        do {
            let info = try MSLCompiler.shared.cacheInfo()
            return Info(path: info.path, persistent: info.persistent, entries: info.entries, bytes: info.bytes,
                        maxBytes: info.maxBytes)
        } catch {
            throw EngineError.invalid(describe(error))
        }
        #endif
    }

    /// Deletes the cached kernel libraries; returns how many.
    public static func clear() -> Int {
        #if canImport(Metal)
        return 0
        #else
        return MSLCompiler.shared.clearCache()
        #endif
    }

    /// Compiles stop when `socket` holds the byte SIGINT (-1: none): Python's
    /// signal wakeup socket during a compile, so that Ctrl-C stops clang++.
    public static func watchInterrupts(_ socket: Int32) {
        #if !canImport(Metal)
        MSLCompiler.shared.watchInterrupts(socket)
        #endif
    }
}
