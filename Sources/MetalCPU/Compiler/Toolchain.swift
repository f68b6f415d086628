// Where clang++ and the MSL compatibility headers are, and what identifies them
// in cache keys (without running clang: a cache hit must not invoke it).
import CMetalCPU
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

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
        digest.update("ast=" + (environment("PYMETAL_CLANG_AST") ?? "")) // who reads the signatures (ClangAST)
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

/// How long clang++ may run and how much memory it may take, per run
/// (PYMETAL_COMPILE_TIMEOUT seconds, PYMETAL_COMPILE_MEMORY bytes of address
/// space): a source can make the compiler hang (an #include of a FIFO) or
/// exhaust memory (a macro bomb), which must fail the compile, not the machine.
struct CompileLimits {
    var timeout: Double
    var memory: UInt64

    static let defaultTimeout = 300.0 // the biggest kernel families take tens of seconds on a busy machine
    static let defaultMemory: UInt64 = 8 << 30 // far above what clang++ needs for any kernel library

    static func fromEnvironment() throws -> CompileLimits {
        var limits = CompileLimits(timeout: defaultTimeout, memory: defaultMemory)
        if let text = Toolchain.environment("PYMETAL_COMPILE_TIMEOUT"), !text.isEmpty {
            guard let seconds = Double(text.trimmed), seconds > 0, seconds.isFinite else {
                throw MTLLibraryError(code: .compileFailure,
                                      message: "PYMETAL_COMPILE_TIMEOUT=\(text): expected a number of seconds above 0")
            }
            limits.timeout = seconds
        }
        if let memory = try Toolchain.byteSize("PYMETAL_COMPILE_MEMORY") { limits.memory = memory }
        return limits
    }
}

/// clang++ was stopped: over its time limit, or interrupted.
struct CompileStopped: Error {
    let message: String
}

extension Toolchain {
    /// The byte count in environment variable `name` (digits, with an optional
    /// K, M, G or T suffix in powers of 1024, and an optional B), or nil if unset.
    static func byteSize(_ name: String) throws -> UInt64? {
        guard let text = environment(name), !text.isEmpty else { return nil }
        var digits = text.trimmed.uppercased()
        if digits.hasSuffix("IB") { digits.removeLast(2) } else if digits.hasSuffix("B") { digits.removeLast() }
        var scale: UInt64 = 1
        if let unit = digits.last, let power = "KMGT".firstIndex(of: unit) {
            scale = 1 << (10 * UInt64("KMGT".distance(from: "KMGT".startIndex, to: power) + 1))
            digits.removeLast()
        }
        // Plain decimal digits (as pymetal/_buffer.py reads PYMETAL_CACHE_LIMIT): Double() also takes hex and signs.
        guard digits.trimmed.wholeMatch(of: #/[0-9]*\.?[0-9]*(E[+-]?[0-9]+)?/#) != nil,
              let value = Double(digits.trimmed), value >= 0,
              value * Double(scale) < 0x1p63 else {
            throw MTLLibraryError(code: .compileFailure, message: "\(name)=\(text): expected a size in bytes: a number with an "
                + "optional K, M, G or T suffix (powers of 1024) and an optional B, such as 1048576, 500M or 2G")
        }
        return UInt64(value * Double(scale))
    }

    /// Runs `tool` to completion in `work`, its output going to a log file
    /// that becomes the error message: in TMPDIR, not in `work`, so that clang
    /// can say that the cache's disk is full (MSLCompiler then compiles in a
    /// private folder). Stops it (and whatever it started)
    /// when it runs over the time limit or a Ctrl-C shows on the socket
    /// `interrupts` (pm_host_wait; -1: none).
    /// Returns what it wrote (stdout and stderr) when it succeeds.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String], work: String, limits: CompileLimits,
                    interrupts: Int32) throws -> String {
        let (log, logDescriptor) = try temporaryFile("pymetal-log-XXXXXX")
        defer { close(logDescriptor) }
        // A crashing clang++ (out of memory) would write its preprocessed input to /tmp for a bug report.
        let argv: [UnsafeMutablePointer<CChar>?] = ([tool, "-fno-crash-diagnostics"] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: Int32 = 0
        var done: Int32 = -1
        let spawned = argv.withUnsafeBufferPointer { pm_host_spawn(tool, $0.baseAddress, log, limits.memory, &pid, &done) }
        unlink(log) // clang has it open (and we do): no file is left behind if this process is killed
        guard spawned == 0 else {
            throw MTLLibraryError(code: .compileFailure, message: "cannot run \(tool): \(String(cString: strerror(spawned)))")
        }
        defer { close(done) }
        let deadline = monotonicSeconds() + limits.timeout
        var stopped: String?
        var watch = interrupts
        wait: while true {
            let left = deadline - monotonicSeconds()
            if left <= 0 {
                stopped = "compiling took longer than \(limits.timeout) s (PYMETAL_COMPILE_TIMEOUT); clang++ was stopped"
                break
            }
            switch pm_host_wait(done, watch, Int32((min(left, 3600) * 1000).rounded(.up))) {
            case 1: break wait // it exited: waitpid says how
            case 2: stopped = "compile interrupted"; break wait
            case 3: watch = -1 // another signal: its handler runs once the compile returns
            default: continue  // the time is up (checked above), or a signal woke the wait
            }
        }
        if stopped != nil { kill(-pid, SIGKILL) } // the whole group; before waitpid, so the group id is still ours
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        if let stopped { throw CompileStopped(message: stopped) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while case let count = pread(logDescriptor, &chunk, chunk.count, bytes.count), count > 0 {
            bytes += chunk[..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard status == 0 else { // exited with 0 (a signal or another code is not 0 either)
            var message = shortened(text.replacing(work + "/", with: ""))
            if message.isEmpty { message = "clang++ failed (status \(status))" }
            if status & 0x7f != 0 || text.contains("out of memory") || text.contains("bad_alloc") {
                message += "\n(clang++ may have run out of memory: it may use \(limits.memory) bytes, PYMETAL_COMPILE_MEMORY)"
            }
            throw MTLLibraryError(code: .compileFailure, message: message)
        }
        return text
    }

    static let shownLines = 100

    /// A crash's stack dump (tens of KB) or a flood of diagnostics is no error
    /// message: the lines before the dump and the errors after it (the driver's
    /// "clang frontend command failed"), at most `shownLines`; the whole output
    /// is then saved to a file in TMPDIR, which the message names.
    static func shortened(_ message: String) -> String {
        let lines = message.split(separator: "\n", omittingEmptySubsequences: false)
        let dump = lines.firstIndex { $0.hasPrefix("Stack dump:") || $0.hasPrefix("PLEASE submit a bug report") }
        let shown = (dump.map { lines[..<$0] + lines[$0...].filter { $0.contains("error:") } } ?? lines).prefix(shownLines)
        guard shown.count < lines.count else { return message }
        let file = try? temporaryFile("pymetal-clang-XXXXXX")
        let saved = file.map { (try? KernelCache.writeAll(Array(message.utf8), to: $0.descriptor, path: $0.path)) != nil } ?? false
        if let file {
            close(file.descriptor)
            if !saved { unlink(file.path) }
        }
        return shown.joined(separator: "\n") + "\n[\(lines.count - shown.count) more lines of clang++'s output "
            + (saved ? "are in \(file!.path)]" : "not shown: TMPDIR cannot be written]")
    }

    /// TMPDIR (if absolute), else /tmp.
    static var temporaryFolder: String { environment("TMPDIR").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp" }

    /// A new empty file (0600) in TMPDIR named after `template` (ending in XXXXXX), open for reading and writing.
    static func temporaryFile(_ template: String) throws -> (path: String, descriptor: Int32) {
        var name = Array((temporaryFolder + "/" + template).utf8CString)
        let descriptor = name.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw KernelCache.unwritable(temporaryFolder, errno) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) // not inherited by the compilers other threads start
        return (name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }, descriptor)
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
    }
}
