// Compiles MSL into a kernel library (a shared object) with clang++, through
// the front end, and caches the result on disk by a hash of everything that
// goes into it.
import Foundation

public final class MSLCompiler: @unchecked Sendable {
    public static let shared = MSLCompiler()

    private let lock = Lock()
    private var toolchain: Toolchain?
    private var memo: [String: URL] = [:]
    /// How many times clang was run (tests check that cache hits don't).
    public private(set) var clangInvocations = 0

    /// Compiles `source` (or returns the cached library) and returns the library file.
    public func compile(source: String, options: MTLCompileOptions, includeDirectories: [String] = []) throws -> URL {
        let tools = try lock { () throws -> Toolchain in
            if let toolchain { return toolchain }
            let found = try Toolchain.find()
            toolchain = found
            return found
        }
        let flags = compileFlags(options) + includeDirectories.map { "-I\($0)" }
        var digest = SHA256()
        digest.update(tools.identity)
        digest.update(flags.joined(separator: "\u{1}"))
        digest.update("\u{0}")
        digest.update(source)
        let key = digest.hexDigest()
        if let url = lock({ memo[key] }) { return url }

        let cache = Self.cacheDirectory()
        let target = cache.appendingPathComponent("\(key).so")
        if FileManager.default.fileExists(atPath: target.path) {
            lock { memo[key] = target }
            return target
        }
        let work = cache.appendingPathComponent("tmp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }

        // 1. literals, 2. preprocess, 3. front end, 4. compile and link.
        let input = work.appendingPathComponent("program_source.metal")
        try ("#line 1 \"program_source\"\n" + Literals.rewrite(source)).write(to: input, atomically: false, encoding: .utf8)
        let preprocessed = work.appendingPathComponent("preprocessed.ii")
        let headerFlags = tools.headerDirectories.flatMap { ["-isystem", $0] }
        try run(tools.clang, ["-x", "c++", "-std=c++20", "-E", "-fsigned-char"] + headerFlags
                + ["-include", "pm_msl/prelude.h", "-include", "metal_stdlib"] + flags + [input.path, "-o", preprocessed.path],
                workDirectory: work)
        let text = try String(contentsOf: preprocessed, encoding: .utf8)
        let output: FrontEndOutput
        do {
            output = try FrontEnd.run(preprocessed: text)
        } catch let diagnostics as CompileDiagnostics {
            throw MTLLibraryError(code: .compileFailure, message: diagnostics.messages.joined(separator: "\n"))
        }
        let unit = work.appendingPathComponent("unit.ii")
        try (output.text + LauncherGenerator.generate(output.kernels)).write(to: unit, atomically: false, encoding: .utf8)
        let library = work.appendingPathComponent("library.so")
        try run(tools.clang, ["-x", "c++-cpp-output", "-std=c++20", "-O2", Self.cpuFlag, "-fPIC", "-shared",
                              "-fvisibility=hidden", "-fno-exceptions", "-fno-rtti",
                              "-fsigned-char", // MSL char is signed, also on arm64
                              "-Werror=unknown-attributes"] + flags.filter { $0.hasPrefix("-f") }
                // After the math mode: -fno-fast-math turns math-errno back on, and a
                // libm call that may set errno is never vectorised (nor is a loop around it).
                + ["-fno-math-errno", unit.path, "-o", library.path], workDirectory: work)
        // Publish atomically: concurrent compilers of the same source race harmlessly.
        if rename(library.path, target.path) != 0 && !FileManager.default.fileExists(atPath: target.path) {
            throw MTLLibraryError(code: .internalError, message: "cannot write \(target.path)")
        }
        lock { memo[key] = target }
        return target
    }

    private static let cpuFlag: String = {
        #if arch(x86_64)
        return "-march=native"
        #else
        return "-mcpu=native"
        #endif
    }()

    /// glibc's libmvec for the precise sin, cos and tan (pm_msl/vmath.h): it
    /// reduces huge arguments exactly only in the vector lanes that have one,
    /// which branch-free inline code cannot. With -fveclib=libmvec clang turns the
    /// sin, cos, tan, exp, log and pow calls of a vectorised loop (float and
    /// double) into libmvec calls. x86-64 only (clang maps most of libm on arm64,
    /// and glibc added those over several releases), and only when this process
    /// can resolve them: the kernel library is loaded here with RTLD_NOW, and tan
    /// was the last of them to arrive (glibc 2.35). Elsewhere vmath.h's own code
    /// runs (same bounds, slower). The macro comes first so that a user's
    /// -DPM_LIBMVEC=0 (the tests') turns it off.
    private static let vectorMathFlags: [String] = {
        #if os(Linux) && arch(x86_64)
        guard let handle = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL) else { return [] }
        defer { dlclose(handle) }
        return dlsym(handle, "_ZGVbN4v_tanf") != nil && dlsym(handle, "_ZGVdN4v_tan") != nil
            ? ["-DPM_LIBMVEC=1", "-fveclib=libmvec"] : []
        #else
        return []
        #endif
    }()

    private func compileFlags(_ options: MTLCompileOptions) -> [String] {
        var flags: [String] = Self.vectorMathFlags
        for (name, value) in (options.preprocessorMacros ?? [:]).sorted(by: { $0.key < $1.key }) {
            if let number = value as? NSNumber { flags.append("-D\(name)=\(number.stringValue)") }
            else if let string = value as? NSString { flags.append("-D\(name)=\(string)") }
            else { flags.append("-D\(name)=\(value)") }
        }
        let fast = options.mathMode == .fast && options.fastMathEnabled
        flags.append(fast ? "-ffast-math" : "-fno-fast-math")
        return flags
    }

    static func cacheDirectory() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            base = URL(fileURLWithPath: xdg)
        } else {
            base = URL(fileURLWithPath: environment["HOME"] ?? NSTemporaryDirectory()).appendingPathComponent(".cache")
        }
        let directory = base.appendingPathComponent("pymetal/msl")
        if (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil {
            return directory
        }
        let fallback = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("pymetal-msl")
        try? FileManager.default.createDirectory(at: fallback, withIntermediateDirectories: true)
        return fallback
    }

    private func run(_ tool: String, _ arguments: [String], workDirectory: URL) throws {
        lock { clangInvocations += 1 }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw MTLLibraryError(code: .compileFailure, message: "cannot run \(tool): \(error)")
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let log = String(decoding: data, as: UTF8.self)
                .replacingOccurrences(of: workDirectory.path + "/", with: "")
            throw MTLLibraryError(code: .compileFailure, message: log.isEmpty ? "clang++ failed" : log)
        }
    }
}
