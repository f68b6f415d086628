// Where clang++ and the MSL compatibility headers are, and what identifies them
// in cache keys (without running clang: a cache hit must not invoke it).
import CMetalCPU
import Foundation

struct Toolchain {
    let clang: String
    let headerDirectories: [String]
    /// Changes whenever clang, the headers, the front end (the binary MetalCPU is in) or the host CPU change.
    let identity: String

    static let frontEndVersion = "metalcpu-frontend-1"

    static func find() throws -> Toolchain {
        let clang = try findClang()
        let headers = try findHeaders()
        var digest = SHA256()
        digest.update(frontEndVersion)
        for binary in [clang, pm_host_self_path().map { String(cString: $0) } ?? ""] {
            digest.update(binary)
            var info = stat()
            if stat(binary, &info) == 0 {
                #if os(Linux)
                let modified = info.st_mtim
                #else
                let modified = info.st_mtimespec
                #endif
                digest.update("\(info.st_size) \(modified.tv_sec).\(modified.tv_nsec)")
            }
        }
        for directory in headers {
            for file in files(below: directory).sorted() {
                guard let data = FileManager.default.contents(atPath: directory + "/" + file) else { continue }
                digest.update(file)
                digest.update(String(data.withUnsafeBytes { contentHash($0) }, radix: 16))
            }
        }
        digest.update(cpuFeatures())
        return Toolchain(clang: clang, headerDirectories: headers, identity: digest.hexDigest())
    }

    /// A 64-bit hash of a header's bytes (a multiply-fold over 8-byte words, as
    /// wyhash does): the identity is computed in every process, and SHA-256 over
    /// the ~200 KB of headers took milliseconds of a cached compile.
    static func contentHash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
            let product = a.multipliedFullWidth(by: b)
            return product.high ^ product.low
        }
        var hash: UInt64 = 0x243F_6A88_85A3_08D3
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = mix(hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self), 0xA076_1D64_78BD_642F) &+ 0x9E37_79B9_7F4A_7C15
            offset += 8
        }
        var tail: UInt64 = 0
        for index in offset..<bytes.count { tail |= UInt64(bytes[index]) << (8 * UInt64(index - offset)) }
        return mix(hash ^ tail, 0xE703_7ED1_A0B4_28DB ^ UInt64(bytes.count))
    }

    /// The files below `directory` (recursively), as paths relative to it. Plain
    /// POSIX: Foundation's directory walk took a millisecond of a cached compile.
    private static func files(below directory: String, prefix: String = "") -> [String] {
        guard let folder = opendir(directory) else { return [] }
        defer { closedir(folder) }
        var found: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            guard name != ".", name != ".." else { continue }
            var info = stat()
            guard stat(directory + "/" + name, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                found += files(below: directory + "/" + name, prefix: prefix + name + "/")
            } else {
                found.append(prefix + name)
            }
        }
        return found
    }

    /// An environment variable (getenv: ProcessInfo builds a dictionary of them all at every call).
    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// PYMETAL_CLANG, else the clang++ of the Swift toolchain this library runs on, else PATH.
    private static func findClang() throws -> String {
        if let path = environment("PYMETAL_CLANG"), !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw MTLLibraryError(code: .compileFailure, message: "PYMETAL_CLANG=\(path) is not an executable clang++")
            }
            return path
        }
        var candidates: [String] = []
        if let runtime = swiftRuntimePath() {
            // <toolchain>/usr/lib/swift/linux/libswiftCore.so -> <toolchain>/usr/bin/clang++
            let usr = URL(fileURLWithPath: runtime).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            candidates.append(usr.appendingPathComponent("bin/clang++").path)
        }
        for directory in (environment("PATH") ?? "/usr/bin").split(separator: ":") {
            candidates.append("\(directory)/clang++")
        }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        throw MTLLibraryError(code: .compileFailure, message:
            "MetalCPU needs clang++ to compile MSL: install clang (apt-get install clang) or set PYMETAL_CLANG")
    }

    private static func swiftRuntimePath() -> String? {
        pm_host_object_path("swift_retain").map { String(cString: $0) }
    }

    /// PYMETAL_MSL_HEADERS (a folder with metal_stdlib and pm_kernel_abi.h), else
    /// `msl/` next to the binary MetalCPU is linked into (a wheel's pymetal/lib/msl,
    /// beside libPyMetal), else this source tree's folders.
    private static func findHeaders() throws -> [String] {
        if let path = environment("PYMETAL_MSL_HEADERS"), !path.isEmpty {
            return [path]
        }
        if let image = pm_host_self_path() {
            let bundled = URL(fileURLWithPath: String(cString: image)).deletingLastPathComponent().appendingPathComponent("msl").path
            if FileManager.default.fileExists(atPath: bundled + "/metal_stdlib") { return [bundled] }
        }
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let msl = sources.appendingPathComponent("MetalCPU/MSL").path
        let abi = sources.appendingPathComponent("CMetalCPU/include").path
        guard FileManager.default.fileExists(atPath: msl + "/metal_stdlib") else {
            throw MTLLibraryError(code: .compileFailure, message:
                "MetalCPU cannot find its MSL headers at \(msl): set PYMETAL_MSL_HEADERS to the folder holding metal_stdlib")
        }
        return [msl, abi]
    }

    private static func cpuFeatures() -> String {
        Platform.cpuInfo(["flags", "Features"]) ?? "unknown-cpu"
    }
}
