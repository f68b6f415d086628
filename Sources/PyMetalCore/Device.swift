// The device: buffers, libraries and streams come from here.
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

public final class Device: @unchecked Sendable {
    public let device: any MTLDevice
    public let backend = PlatformSupport.backend
    public let pageSize = PlatformSupport.pageSize
    private let shaders: Result<Library, EngineError>

    /// Held while the default device is made: in a fork()'s child, unlocked again
    /// (a device half made by a thread the child lacks was not cached: the child makes its own).
    private static let lock: Lock = { let lock = Lock(); ForkSafety.registerLeaf(lock); return lock }()
    nonisolated(unsafe) private static var cached: Device?

    /// The system's default device, made (and its shader library loaded) once.
    public static func makeDefault() throws -> Device {
        try lock {
            if let cached { return cached }
            guard let device = MTLCreateSystemDefaultDevice() else {
                throw EngineError(.unsupported, "no Metal device is available")
            }
            let made = Device(device)
            cached = made
            return made
        }
    }

    private init(_ device: any MTLDevice) {
        self.device = device
        shaders = Result { try ShaderLibrary.load(on: device) }.mapError {
            $0 as? EngineError ?? EngineError(.notFound, describe($0))
        }
    }

    public var name: String { device.name }
    public var hasUnifiedMemory: Bool { device.hasUnifiedMemory }
    public var maxThreadsPerThreadgroup: Int { device.maxThreadsPerThreadgroup.width }
    public var maxBufferLength: Int { device.maxBufferLength }
    /// Bytes of threadgroup memory per threadgroup (32 KiB on Apple GPUs).
    public var maxThreadgroupMemory: Int { device.maxThreadgroupMemoryLength }
    public var recommendedWorkingSet: UInt64 { device.recommendedMaxWorkingSetSize }

    /// pymetal's own kernels (Shaders/).
    public func shaderLibrary() throws -> Library { try shaders.get() }

    public func makeBuffer(length: Int) throws -> Buffer {
        guard length >= 0, length <= device.maxBufferLength else {
            throw EngineError.invalid("buffer length \(length) is outside 0...\(device.maxBufferLength)")
        }
        // Metal has no empty buffers: an empty array still gets one page.
        guard let buffer = device.makeBuffer(length: max(length, 1), options: .storageModeShared) else {
            throw EngineError(.outOfMemory, "cannot allocate a buffer of \(length) bytes: out of memory (buffers in use: "
                + "\(device.currentAllocatedSize) bytes; the device's recommended working set, which on the CPU backend "
                + "is also the most all buffers may take: \(device.recommendedMaxWorkingSetSize) bytes)")
        }
        return Buffer(buffer, length: length, isWrapped: false)
    }

    public func wrapBuffer(_ pointer: UnsafeMutableRawPointer, length: Int) throws -> Buffer {
        guard Int(bitPattern: pointer) % pageSize == 0, length > 0, length % pageSize == 0 else {
            throw EngineError.invalid("memory at \(pointer) of \(length) bytes cannot be wrapped without copying: "
                + "address and length must be multiples of the page size (\(pageSize) bytes)")
        }
        guard let buffer = device.makeBuffer(bytesNoCopy: pointer, length: length, options: .storageModeShared,
                                             deallocator: nil) else {
            throw EngineError.invalid("Metal refused to wrap \(length) bytes at \(pointer)")
        }
        return Buffer(buffer, length: length, isWrapped: true)
    }

    /// Compiles MSL in pymetal's math mode: safe unless asked (as MLX, because
    /// fast math gets exp(-inf) and friends wrong), the same on every platform.
    /// The Metal language versions compile(languageVersion:) takes (major * 100 + minor).
    public static let languageVersions = [204, 300, 301, 302]
    public static func languageVersion(_ version: Int) -> MTLLanguageVersion? {
        switch version {
        case 204: return .version2_4
        case 300: return .version3_0
        case 301: return .version3_1
        case 302: if #available(macOS 15.0, *) { return .version3_2 } else { return nil }
        default: return nil
        }
    }

    /// logging: the kernels' os_log calls log (KernelLog); Metal has shader logging from macOS 15.
    public func compile(source: String, macros: [String: String] = [:], fastMath: Bool = false,
                        languageVersion: MTLLanguageVersion? = nil, logging: Bool = false) throws -> Library {
        let options = MTLCompileOptions()
        if logging {
            guard #available(macOS 15.0, *) else {
                throw EngineError(.unsupported, "shader logging (logging=True) needs macOS 15 or later (Metal 3.2)")
            }
            options.enableLogging = true
        }
        if let languageVersion { options.languageVersion = languageVersion }
        if !macros.isEmpty {
            #if canImport(Metal)
            options.preprocessorMacros = macros.mapValues { NSString(string: $0) }
            #else
            options.preprocessorMacros = macros  // MetalCPU takes Swift strings (it has no Foundation)
            #endif
        }
        if #available(macOS 15.0, *) {
            options.mathMode = fastMath ? .fast : .safe
        } else {
            options.fastMathEnabled = fastMath
        }
        do {
            return Library(try device.makeLibrary(source: source, options: options), device: device)
        } catch {
            throw EngineError(.compile, describe(error))
        }
    }

    public func loadLibrary(path: String) throws -> Library {
        guard FileManager.default.fileExists(atPath: path) else {
            throw EngineError(.notFound, "no library file at \(path)")
        }
        do {
            return Library(try device.makeLibrary(URL: URL(fileURLWithPath: path)), device: device)
        } catch {
            throw EngineError(.invalidArgument, "cannot load \(path): \(describe(error))")
        }
    }

    public func makeStream() throws -> Stream {
        guard let queue = KernelLog.makeQueue(device) ?? device.makeCommandQueue() else {
            throw EngineError(.outOfMemory, "cannot make a command queue")
        }
        return Stream(queue: queue, device: self)
    }
}
