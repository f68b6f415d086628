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
    /// How many precompiled headers it built (tests check when they are rebuilt).
    public private(set) var pchBuilds = 0

    /// Compiles `source` (or returns the cached library) and returns the library file.
    /// `constantValues`: the function constants' values by index (makeFunction(name:constantValues:)); nil compiles
    /// every function constant undefined.
    public func compile(source: String, options: MTLCompileOptions, includeDirectories: [String] = [],
                        constantValues: [Int: FunctionConstantValue]? = nil) throws -> URL {
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
        for (index, value) in (constantValues ?? [:]).sorted(by: { $0.key < $1.key }) {
            digest.update("\u{0}\(index):\(value.type):\(value.bytes)")
        }
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
        // -dI: #include lines stay in the output (FrontEnd checks that the source includes <metal_stdlib>)
        try run(tools.clang, ["-x", "c++", "-std=c++20", "-E", "-dI", "-fsigned-char"] + headerFlags
                + ["-DPM_ADDRESS_SPACE_WORDS", "-include", "pm_msl/prelude.h", "-include", "metal_stdlib"] + flags + [input.path, "-o", preprocessed.path],
                work: work)
        let text = try String(contentsOf: preprocessed, encoding: .utf8)
        let output: FrontEndOutput
        do {
            output = try FrontEnd.run(preprocessed: text, constantValues: constantValues, requireMetalHeader: true)
        } catch let diagnostics as CompileDiagnostics {
            throw MTLLibraryError(code: .compileFailure,
                                  message: Diagnostics.userColumns(diagnostics.messages.joined(separator: "\n"), source: source))
        }
        let unit = output.text + LauncherGenerator.generate(output.kernels, constants: output.constants)
        // -fno-math-errno after the math mode: -fno-fast-math turns math-errno back on, and a
        // libm call that may set errno is never vectorised (nor is a loop around it).
        let codegen = ["-std=c++20", "-O2", Self.cpuFlag, "-fPIC", "-fvisibility=hidden", "-fno-exceptions", "-fno-rtti",
                       "-fsigned-char", // MSL char is signed, also on arm64
                       "-Werror=unknown-attributes"] + flags.filter { $0.hasPrefix("-f") } + ["-fno-math-errno"]
        let library = work.appendingPathComponent("library.so")
        do {
            if !(try compileWithPCH(unit, input: input, codegen: codegen, tools: tools, cache: cache, output: library)) {
                let file = work.appendingPathComponent("unit.ii")
                try unit.write(to: file, atomically: false, encoding: .utf8)
                try run(tools.clang, ["-x", "c++-cpp-output", "-shared"] + codegen + [file.path, "-o", library.path], work: work)
            }
        } catch let error as MTLLibraryError where error.code == .compileFailure {
            // clang saw the rewritten text: show the user's lines and columns (Diagnostics.swift)
            throw MTLLibraryError(code: .compileFailure, message: Diagnostics.userColumns(error.message, source: source))
        }
        // Publish atomically: concurrent compilers of the same source race harmlessly.
        if rename(library.path, target.path) != 0 && !FileManager.default.fileExists(atPath: target.path) {
            throw MTLLibraryError(code: .internalError, message: "cannot write \(target.path)")
        }
        lock { memo[key] = target }
        return target
    }

    /// Parsing the MSL headers is most of clang's front-end time, and compiling
    /// the runtime's functions much of its back end's: the part of the
    /// preprocessed unit that comes from the headers (everything before the
    /// user's source) is compiled once into a precompiled header with code
    /// generation (its inline functions compiled once into an object file that
    /// every library links), cached under a hash of its exact text, clang and
    /// the flags; the rest of the unit is compiled against it. Any change of the
    /// headers changes that text, hence the key. Returns false when the unit
    /// cannot take this path (the caller then compiles it whole).
    private func compileWithPCH(_ unit: String, input: URL, codegen: [String], tools: Toolchain,
                                cache: URL, output: URL) throws -> Bool {
        // The preprocessor returns from the force-included headers to the source with this line marker.
        let bytes = Array(unit.utf8)
        let marker = Array("\n# 1 \"\(input.path)\" 2\n".utf8)
        guard let start = bytes.firstIndex(of: 10), let end = Self.lastOffset(of: marker, in: bytes), start < end else {
            return false
        }
        let headers = bytes[(start + 1)..<end] // without the line naming the work folder
        var digest = SHA256()
        digest.update(tools.identity)
        digest.update(codegen.joined(separator: "\u{1}"))
        digest.update(String(headers.withUnsafeBytes { Toolchain.contentHash($0) }, radix: 16))
        let base = cache.appendingPathComponent("pch-\(digest.hexDigest())").path
        let (pch, object) = (base + ".pch", base + ".o")
        let work = input.deletingLastPathComponent()
        if !FileManager.default.fileExists(atPath: pch) {
            // The PCH refers to its source file, so that lives next to it. Same key, same bytes: racing writers agree.
            try Data(headers).write(to: URL(fileURLWithPath: base + ".ii"), options: .atomic)
            let (builtPCH, builtObject) = (work.appendingPathComponent("headers.pch").path, work.appendingPathComponent("headers.o").path)
            do {
                try run(tools.clang, ["-x", "c++-header"] + codegen + ["-fpch-codegen", "-fpch-instantiate-templates",
                                                                       "-Xclang", "-fno-pch-timestamp", base + ".ii", "-o", builtPCH],
                        work: work)
                try run(tools.clang, codegen + ["-c", builtPCH, "-o", builtObject], work: work)
            } catch {
                return false // the whole unit's compile reports the error
            }
            lock { pchBuilds += 1 }
            // The object first: a PCH in the cache always has its object.
            guard rename(builtObject, object) == 0, rename(builtPCH, pch) == 0 else { return false }
        }
        // The rest is preprocessed text: compiled as C++ (a precompiled header needs that), it preprocesses to
        // itself, since the PCH, made from preprocessed text too, defines no macros.
        let file = work.appendingPathComponent("unit.cpp")
        try Data(bytes[(end + marker.count)...]).write(to: file)
        do {
            try run(tools.clang, ["-x", "c++", "-shared"] + codegen + ["-include-pch", pch, file.path, "-x", "none", object,
                                                                     "-o", output.path], work: work)
        } catch let error as MTLLibraryError where error.message.contains(base) {
            // Unreadable, stale or missing (clang says so, naming it): built again by the next compile.
            unlink(pch)
            unlink(object)
            return false
        }
        return true
    }

    /// Where `pattern` last occurs in `bytes` (searched from the end: the user's source is short).
    private static func lastOffset(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        return bytes.withUnsafeBytes { all in
            pattern.withUnsafeBytes { wanted in
                stride(from: all.count - wanted.count, through: 0, by: -1).first { offset in
                    all[offset] == wanted[0] && memcmp(all.baseAddress! + offset, wanted.baseAddress!, wanted.count) == 0
                }
            }
        }
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
        // __METAL_VERSION__ as Metal defines it for the language version (3.2 -> 320).
        let version = options.languageVersion.rawValue
        flags.append("-D__METAL_VERSION__=\((version >> 16) * 100 + ((version & 0xffff) * 10))")
        let fast = options.mathMode == .fast && options.fastMathEnabled
        flags.append(fast ? "-ffast-math" : "-fno-fast-math")
        return flags
    }

    static func cacheDirectory() -> URL {
        let base: URL
        if let xdg = Toolchain.environment("XDG_CACHE_HOME"), !xdg.isEmpty {
            base = URL(fileURLWithPath: xdg)
        } else {
            base = URL(fileURLWithPath: Toolchain.environment("HOME") ?? NSTemporaryDirectory()).appendingPathComponent(".cache")
        }
        let directory = base.appendingPathComponent("pymetal/msl")
        if (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil {
            return directory
        }
        let fallback = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("pymetal-msl")
        try? FileManager.default.createDirectory(at: fallback, withIntermediateDirectories: true)
        return fallback
    }

    /// Runs `tool` to completion (posix_spawn + a blocking waitpid: no polling),
    /// its output going to a log file in `work` that becomes the error message.
    private func run(_ tool: String, _ arguments: [String], work: URL) throws {
        lock { clangInvocations += 1 }
        let log = work.appendingPathComponent("clang.log").path
        #if os(Linux)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([tool] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, tool, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw MTLLibraryError(code: .compileFailure, message: "cannot run \(tool): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else {
                throw MTLLibraryError(code: .internalError, message: "cannot wait for \(tool): \(String(cString: strerror(errno)))")
            }
        }
        guard status == 0 else { // exited with 0 (a signal or another code is not 0 either)
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let message = text.replacingOccurrences(of: work.path + "/", with: "")
            throw MTLLibraryError(code: .compileFailure, message: message.isEmpty ? "clang++ failed (status \(status))" : message)
        }
    }
}
