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
            if let attributes = try? FileManager.default.attributesOfItem(atPath: binary) {
                digest.update("\(attributes[.size] ?? 0) \(attributes[.modificationDate] ?? "")")
            }
        }
        for directory in headers {
            let files = (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? []).sorted()
            for file in files {
                let path = directory + "/" + file
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                digest.update(file)
                digest.update([UInt8](data))
            }
        }
        digest.update(cpuFeatures())
        return Toolchain(clang: clang, headerDirectories: headers, identity: digest.hexDigest())
    }

    /// PYMETAL_CLANG, else the clang++ of the Swift toolchain this library runs on, else PATH.
    private static func findClang() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["PYMETAL_CLANG"], !path.isEmpty {
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
        for directory in (environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            candidates.append("\(directory)/clang++")
        }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        throw MTLLibraryError(code: .compileFailure, message:
            "MetalCPU needs clang++ to compile MSL: install clang (apt-get install clang) or set PYMETAL_CLANG")
    }

    private static func swiftRuntimePath() -> String? {
        pm_host_object_path("swift_retain").map { String(cString: $0) }
    }

    /// PYMETAL_MSL_HEADERS (a folder with metal_stdlib and pm_kernel_abi.h, as a
    /// bundled install has), else this source tree's folders.
    private static func findHeaders() throws -> [String] {
        if let path = ProcessInfo.processInfo.environment["PYMETAL_MSL_HEADERS"], !path.isEmpty {
            return [path]
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
