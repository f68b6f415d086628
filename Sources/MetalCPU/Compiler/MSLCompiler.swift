// Compiles MSL into a kernel library (a shared object) with clang++, through
// the front end, and caches the result on disk (KernelCache) by a hash of
// everything that goes into it.
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

public final class MSLCompiler: @unchecked Sendable {
    public static let shared = MSLCompiler()

    let lock = CPUFork.leaf(Lock())
    private var toolchain: Toolchain?
    var memo: [String: (url: URL, dependencies: [Dependency])] = [:]
    /// The lazily compiled libraries this process made or loaded (LazyLibrary.swift), by key.
    var plans: [String: LazyPlan] = [:]
    /// Held while a lazy library's source goes through the front end again (once per library and constant values).
    let prepareLock = CPUFork.leaf(Lock())
    /// A library with more kernels than this is checked whole and compiled kernel by kernel when they are asked
    /// for (LazyCPULibrary); a smaller one is compiled whole, in one clang run, cheaper than a check and a run per kernel.
    static let lazyThreshold = 16
    /// A socket whose byte SIGINT stops the compiles (-1: none; watchInterrupts).
    private var interrupts: Int32 = -1
    /// Shader validation for every compile (PYMETAL_VALIDATION=1), else per compile through the macro (runtime.h).
    static let validationFlag = "-DPM_VALIDATION=1"
    /// PYMETAL_VALIDATION is a list of words (`1`, `1,nan`), each turning validation on (runtime_validation.h):
    /// `1` every check (bounds, barrier divergence, uninitialized reads, data races in threadgroup and device
    /// memory; `race` says the same), `bounds` the bounds checks alone (the cheap level), `nan` NaN origins
    /// besides the threadgroup checks (with `1`: besides every check).
    private static let validation: [String] = {
        let words = (Toolchain.environment("PYMETAL_VALIDATION") ?? "").split(separator: ",").map { String($0.filter { $0 != " " }) }
        guard words.contains(where: { ["1", "race", "nan", "bounds"].contains($0) }) else { return [] }
        let all = words.contains("1") || words.contains("race")
        let boundsOnly = !all && !words.contains("nan")  // `bounds` alone
        return [validationFlag] + (all ? ["-DPM_VALIDATION_DEVICE_RACE=1"] : [])
            + (boundsOnly ? ["-DPM_VALIDATION_BOUNDS_ONLY=1"] : [])
            + (words.contains("nan") ? ["-DPM_VALIDATION_NAN=1"] : [])
    }()

    /// How many times clang was run (tests check that cache hits don't).
    public private(set) var clangInvocations = 0
    /// How many times kernel signatures were read from clang's AST (ClangAST).
    public internal(set) var astReads = 0
    /// How many precompiled headers it built (tests check when they are rebuilt).
    public private(set) var pchBuilds = 0

    /// Compiles `source` (or returns the cached library) and returns the library file.
    /// `constantValues`: the function constants' values by index (makeFunction(name:constantValues:)); nil compiles
    /// every function constant undefined.
    public func compile(source: String, options: MTLCompileOptions, includeDirectories: [String] = [],
                        constantValues: [Int: FunctionConstantValue]? = nil) throws -> URL {
        do {
            guard case let .library(url, _) = try compileOrStop(source: source, options: options,
                includeDirectories: includeDirectories, constantValues: constantValues, load: nil, lazy: false) else {
                fatalError("a compile without lazy returns a library")
            }
            return url
        } catch let stopped as CompileStopped {
            throw MTLLibraryError(code: .compileFailure, message: stopped.message)
        }
    }

    /// Compiles `source` as compile(...) does and loads the library with `load`,
    /// giving it a file that exists: another thread or process may clear the
    /// cache (or evict from it) at any moment, so a new library is loaded from
    /// its work folder before it is published, and a cached one that vanishes
    /// before it is loaded is compiled again.
    public func compile<T>(source: String, options: MTLCompileOptions, includeDirectories: [String] = [],
                           constantValues: [Int: FunctionConstantValue]? = nil, load: (URL) throws -> T) throws -> T {
        do {
            return try withoutActuallyEscaping(load) { load in
                guard case let .library(_, loaded) = try compileOrStop(source: source, options: options,
                    includeDirectories: includeDirectories, constantValues: constantValues, load: { try load($0) as Any },
                    lazy: false) else { fatalError("a compile without lazy returns a library") }
                return loaded as! T
            }
        } catch let stopped as CompileStopped {
            throw MTLLibraryError(code: .compileFailure, message: stopped.message)
        }
    }

    /// makeLibrary(source:options:): a library of at most lazyThreshold kernels is compiled whole (as
    /// compile(...) does); a bigger one is checked whole (every error of the source is thrown here) and each
    /// kernel compiled when it is first asked for (LazyCPULibrary).
    public func makeLibrary(source: String, options: MTLCompileOptions) throws -> any MTLLibrary {
        do {
            switch try compileOrStop(source: source, options: options, includeDirectories: [], constantValues: nil,
                                     load: { try CPULibrary(loading: $0, origin: (source, options)) }, lazy: true) {
            case let .library(_, loaded): return loaded as! CPULibrary
            case let .lazy(plan): return LazyCPULibrary(plan: plan, options: options)
            }
        } catch let stopped as CompileStopped {
            throw MTLLibraryError(code: .compileFailure, message: stopped.message)
        }
    }

    /// What a compile made: a library (its file, and what `load` made of it), or a lazy library's plan.
    enum Built {
        case library(URL, Any?)
        case lazy(LazyPlan)
    }

    func tools() throws -> Toolchain {
        try lock { () throws -> Toolchain in
            if let toolchain { return toolchain }
            let found = try Toolchain.find()
            toolchain = found
            return found
        }
    }

    private func compileOrStop(source: String, options: MTLCompileOptions, includeDirectories: [String],
                               constantValues: [Int: FunctionConstantValue]?,
                               load: ((URL) throws -> Any)?, lazy: Bool) throws -> Built {
        let tools = try tools()
        let flags = compileFlags(options) + includeDirectories.map { "-I\($0)" } + Self.validation
        var digest = SHA256()
        digest.update(tools.identity)
        digest.update(flags.joined(separator: "\u{1}"))
        digest.update("\u{0}")
        digest.update(source)
        for (index, value) in (constantValues ?? [:]).sorted(by: { $0.key < $1.key }) {
            digest.update("\u{0}\(index):\(value.type):\(value.bytes)")
        }
        let key = digest.hexDigest()
        if lazy, let plan = lazyPlan(key, source: source, flags: flags, tools: tools) { return .lazy(plan) }
        var cache = KernelCache.current
        if let done = try compiled(key, in: cache, load: { Built.library($0, try load?($0)) }) { return done }
        _ = try KernelCache.maxBytes() // a bad PYMETAL_CACHE_MAX fails before the work, not after
        let job = Job(limits: try CompileLimits.fromEnvironment())
        do {
            return try build(source, key: key, flags: flags, constantValues: constantValues, tools: tools, cache: cache,
                             job: job, load: load, lazy: lazy)
        } catch let error where cache.persistent && Self.storageFailure(error, in: cache.path) != nil {
            // A full disk, a read-only or otherwise unwritable cache: this process compiles in a private folder.
            cache = KernelCache.fallBack(from: cache, reason: Self.storageFailure(error, in: cache.path)!)
            return try build(source, key: key, flags: flags, constantValues: constantValues, tools: tools, cache: cache,
                             job: job, load: load, lazy: lazy)
        }
    }

    /// The library of entry `key` compiled before (known to this process, or found in `cache`), loaded with
    /// `load`; nil when there is none, or it vanished meanwhile: the caller compiles it.
    func compiled<Loaded>(_ key: String, in cache: KernelCache, load: (URL) throws -> Loaded) throws -> Loaded? {
        /// The library `url` loaded (nil: it vanished meanwhile, and is compiled again).
        func use(_ url: URL) throws -> Loaded? {
            do {
                return try load(url)
            } catch where access(url.path, F_OK) != 0 {
                return nil
            }
        }
        // The memo's file may have been evicted by another process since, or a file it read changed.
        if let known = lock({ memo[key] }), access(known.url.path, F_OK) == 0, Dependency.unchanged(known.dependencies),
           let done = try use(known.url) {
            return done
        }
        guard let hit = cache.lookup(key) else { return nil }
        let url = URL(fileURLWithPath: hit.file)
        lock { memo[key] = (url, hit.dependencies) }
        return try use(url)
    }

    /// What `error` says when it is that the cache cannot take a file (our own writes, or clang's), else nil.
    static func storageFailure(_ error: any Error, in folder: String) -> String? {
        if let error = error as? KernelCache.Unwritable { return error.description }
        guard let error = error as? MTLLibraryError else { return nil }
        return [ENOSPC, EDQUOT, EROFS].lazy.map { String(cString: strerror($0)) }.first { error.message.contains($0) }
            .map { "clang++ cannot write in \(folder): \($0)" }
    }

    /// Compiles `source` in a work folder of `cache`, loads it (`load`) and publishes it as the entry `key`;
    /// with `lazy`, a library of more than lazyThreshold kernels is checked and published as a plan instead.
    private func build(_ source: String, key: String, flags: [String], constantValues: [Int: FunctionConstantValue]?,
                       tools: Toolchain, cache: KernelCache, job: Job,
                       load: ((URL) throws -> Any)?, lazy: Bool) throws -> Built {
        cache.removeLeftovers()
        let work = URL(fileURLWithPath: try cache.makeWorkFolder())
        defer { try? FileManager.default.removeItem(at: work) }
        let prepared = try prepare(source, flags: flags, constantValues: constantValues, tools: tools, cache: cache.path,
                                   work: work, job: job)
        let unit = prepared.unit + LauncherGenerator.generate(prepared.kernels, constants: prepared.constants)
        if lazy && prepared.kernels.count > Self.lazyThreshold {
            // clang's semantic analysis of the whole unit (every instantiation and launcher) without code:
            // what rejects a bad source, in a fraction of an optimised build's time
            let precompiled = try emit(unit, prepared, tools: tools, cache: cache, work: work, job: job, output: nil)
            let plan = try publishPlan(key, prepared: prepared, source: source, flags: flags, tools: tools, cache: cache,
                                       work: work, keep: precompiled)
            return .lazy(plan)
        }
        let library = work.appendingPathComponent("library.so")
        let precompiled = try emit(unit, prepared, tools: tools, cache: cache, work: work, job: job, output: library)
        try cache.seal(library.path, dependencies: prepared.dependencies)
        let loaded = try load?(library) // before it is published: a clear of the cache cannot take it first
        let target = URL(fileURLWithPath: try cache.publish(library.path, key: key))
        try cache.evict(keep: Set([key] + (precompiled.map { [$0] } ?? [])))
        lock { memo[key] = (target, prepared.dependencies) }
        return .library(target, loaded)
    }

    /// The front end's output for a source, and what compiling it needs.
    struct Prepared {
        let unit: String
        let kernels: [Kernel]
        let constants: [FunctionConstant]
        /// The path of the source file in the preprocessed text (where the headers end: compileWithPCH).
        let input: String
        let dependencies: [Dependency]
        let codegen: [String]
        /// The user's source (for diagnostics).
        let source: String
        /// The kernels' bindings as clang's AST gave them (astBindings; a lazy library's plan keeps them: PlanBindings).
        var ast: [Int: [KernelBinding]] = [:]
    }

    /// Preprocesses `source` in `work` and runs the front end over it (steps 1 to 3 of a compile); `ast`: the
    /// kernels' bindings as an earlier reading of the same source's AST gave them (no AST dump then).
    func prepare(_ source: String, flags: [String], constantValues: [Int: FunctionConstantValue]?, tools: Toolchain,
                 cache: String, work: URL, job: Job, ast known: [Int: [KernelBinding]]? = nil) throws -> Prepared {
        // 1. literals, 2. preprocess, 3. front end, 4. compile and link (emit).
        let input = work.appendingPathComponent("program_source.metal")
        try KernelCache.writeFile(Array(("#line 1 \"program_source\"\n" + Literals.rewrite(source)).utf8), to: input.path)
        let preprocessed = work.appendingPathComponent("preprocessed.ii")
        let dependencyFile = work.appendingPathComponent("dependencies.d")
        let headerFlags = tools.headerDirectories.flatMap { ["-isystem", $0] }
        // -dI: #include lines stay in the output (FrontEnd checks that the source includes <metal_stdlib>)
        // -MD: the files it reads (the entry's dependencies).
        try run(tools.clang, ["-x", "c++", "-std=c++20", "-E", "-dI", "-fsigned-char"] + headerFlags
                + ["-DPM_ADDRESS_SPACE_WORDS", "-include", "pm_msl/prelude.h", "-include", "metal_stdlib"] + flags
                + ["-MD", "-MF", dependencyFile.path, "-MT", "unit", input.path, "-o", preprocessed.path],
                work: work, job: job, output: preprocessed.path)
        guard let text = String(validating: try Self.contents(preprocessed.path), as: UTF8.self) else {
            throw MTLLibraryError(code: .compileFailure, message: "the source, or a file it includes, is not UTF-8 text")
        }
        // pymetal's headers are in the key (Toolchain.identity); the rest is checked at every use.
        let dependencies = Dependency.files(inMakeRule: String(decoding: try Self.contents(dependencyFile.path), as: UTF8.self),
                                            excluding: tools.headerDirectories + [work.path]).map(Dependency.init(path:))
        // -fno-math-errno after the math mode: -fno-fast-math turns math-errno back on, and a
        // libm call that may set errno is never vectorised (nor is a loop around it).
        let codegen = ["-std=c++20", "-O2"] + Self.cpuFlags + ["-fPIC", "-fvisibility=hidden", "-fno-exceptions", "-fno-rtti",
                       "-fsigned-char", // MSL char is signed, also on arm64
                       "-Werror=unknown-attributes",
                       // a loop that never ends hangs (and the watchdog reports it), as on a GPU: not removed
                       "-fno-finite-loops"] + flags.filter { $0.hasPrefix("-f") } + ["-fno-math-errno"]
            // Validation builds probe each page of a big frame, so that a stack overflow hits the guard page
            // (guard.c) instead of jumping over it; not by default: it halves the reductions' speed here.
            + (flags.contains(Self.validationFlag) ? ["-fstack-clash-protection"] : [])
        let output: FrontEndOutput
        var ast: [Int: [KernelBinding]] = [:]
        do {
            output = try FrontEnd.run(preprocessed: text, constantValues: constantValues, requireMetalHeader: true,
                                      validation: flags.contains(Self.validationFlag),
                                      lockstep: !flags.contains { $0.hasPrefix("-DPM_NO_LOCKSTEP") }) { astText in
                ast = try known ?? self.astBindings(astText, input: input.path, codegen: codegen, tools: tools, cache: cache,
                                                    work: work, job: job)
                return ast
            } bodies: { astText, names in
                try self.astBodies(astText, names: names, input: input.path, codegen: codegen, tools: tools, cache: cache,
                                   work: work, job: job)
            }
        } catch let diagnostics as CompileDiagnostics {
            throw MTLLibraryError(code: .compileFailure,
                                  message: Diagnostics.userColumns(diagnostics.messages.joined(separator: "\n"), source: source))
        }
        return Prepared(unit: output.text, kernels: output.kernels, constants: output.constants, input: input.path,
                        dependencies: dependencies, codegen: codegen, source: source, ast: ast)
    }

    /// Compiles `unit` (a prepared unit with launchers) in `work` into the shared library `output`, or with
    /// `output` nil only checks it (clang -fsyntax-only); returns the stem of the precompiled header used.
    func emit(_ unit: String, _ prepared: Prepared, tools: Toolchain, cache: KernelCache, work: URL, job: Job,
              output: URL?) throws -> String? {
        do {
            if let precompiled = try compileWithPCH(unit, input: prepared.input, codegen: prepared.codegen, tools: tools,
                                                    cache: cache.path, work: work, output: output, job: job) {
                return precompiled
            }
            let file = work.appendingPathComponent("unit.ii")
            try KernelCache.writeFile(Array(unit.utf8), to: file.path)
            try run(tools.clang, ["-x", "c++-cpp-output"] + (output == nil ? ["-fsyntax-only"] : ["-shared"]) + prepared.codegen
                    + [file.path] + (output.map { ["-o", $0.path] } ?? []), work: work, job: job, output: output?.path)
            return nil
        } catch let error as MTLLibraryError where error.code == .compileFailure {
            // clang saw the rewritten text: show the user's lines and columns (Diagnostics.swift)
            throw MTLLibraryError(code: .compileFailure, message: Diagnostics.userColumns(error.message, source: prepared.source))
        }
    }

    /// A file clang wrote (as bytes: Foundation's error would be a CocoaError dump).
    static func contents(_ path: String) throws -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MTLLibraryError(code: .internalError, message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        return data
    }

    /// Where the disk cache is, how full, and its bound (PYMETAL_CACHE_MAX).
    public func cacheInfo() throws -> KernelCacheInfo { try KernelCache.current.info() }

    /// Empties the disk cache (libraries already loaded stay loaded); returns
    /// how many kernel libraries it deleted.
    public func clearCache() -> Int {
        lock {
            memo.removeAll()
            plans.removeAll()
        }
        return KernelCache.current.clear()
    }

    /// While `socket` is set (-1: none), a compile stops (its clang++ killed,
    /// throwing "compile interrupted") when the socket holds the byte SIGINT, as
    /// Python's signal wakeup socket does after Ctrl-C: the thread that waits in
    /// clang++ is the one Python needs back to raise KeyboardInterrupt.
    public func watchInterrupts(_ socket: Int32) { lock { interrupts = socket } }

    /// One compile's limits.
    struct Job {
        let limits: CompileLimits
    }

    /// Parsing the MSL headers is most of clang's front-end time, and compiling
    /// the runtime's functions much of its back end's: the part of the
    /// preprocessed unit that comes from the headers (everything before the
    /// user's source) is compiled once into a precompiled header with code
    /// generation (its inline functions compiled once into an object file that
    /// every library links), cached under a hash of its exact text, clang and
    /// the flags; the rest of the unit is compiled against it. Any change of the
    /// headers changes that text, hence the key. Returns the stem of the
    /// precompiled header's files, or nil when the unit cannot take this path
    /// (the caller then compiles it whole).
    private func compileWithPCH(_ unit: String, input: String, codegen: [String], tools: Toolchain,
                                cache: String, work: URL, output: URL?, job: Job) throws -> String? {
        guard let (stem, pch, object, rest) = try precompiledHeader(unit, input: input, codegen: codegen, tools: tools,
                                                                    cache: cache, work: work, job: job) else { return nil }
        let base = cache + "/" + stem
        // The rest is preprocessed text: compiled as C++ (a precompiled header needs that), it preprocesses to
        // itself, since the PCH, made from preprocessed text too, defines no macros.
        let file = work.appendingPathComponent("unit.cpp")
        try KernelCache.writeFile(Array(rest), to: file.path)
        do {
            if let output {
                try run(tools.clang, ["-x", "c++", "-shared"] + codegen + ["-include-pch", pch, file.path, "-x", "none", object,
                                                                         "-o", output.path], work: work, job: job, output: output.path)
            } else {
                try run(tools.clang, ["-x", "c++", "-fsyntax-only"] + codegen + ["-include-pch", pch, file.path],
                        work: work, job: job, output: nil)
            }
        } catch let error as MTLLibraryError where error.message.contains(base) {
            // Unreadable, stale or missing (clang says so, naming it): built again by the next compile.
            unlink(pch)
            unlink(object)
            return nil
        }
        return stem
    }

    /// The precompiled header of `unit`'s headers (compileWithPCH), built now unless the cache has it: its stem,
    /// its .pch and .o files, and the rest of the unit (the user's part); nil when the unit cannot take this path.
    func precompiledHeader(_ unit: String, input: String, codegen: [String], tools: Toolchain, cache: String, work: URL,
                           job: Job) throws -> (stem: String, pch: String, object: String, rest: ArraySlice<UInt8>)? {
        // The preprocessor returns from the force-included headers to the source with this line marker.
        let bytes = Array(unit.utf8)
        let marker = Array("\n# 1 \"\(input)\" 2\n".utf8)
        guard let start = bytes.firstIndex(of: 10), let end = Self.lastOffset(of: marker, in: bytes), start < end else {
            return nil
        }
        let headers = bytes[(start + 1)..<end] // without the line naming the work folder
        var digest = SHA256()
        digest.update(tools.identity)
        digest.update(codegen.joined(separator: "\u{1}"))
        digest.update(String(headers.withUnsafeBytes { Toolchain.contentHash($0) }, radix: 16))
        let stem = "pch-\(digest.hexDigest())"
        let base = cache + "/" + stem
        let (pch, object) = (base + ".pch", base + ".o")
        if !Self.isOwnFile(pch) || !Self.isOwnFile(object) || !Self.isOwnFile(base + ".ii") {
            for file in [pch, object, base + ".ii"] { KernelCache.remove(file) } // missing, a symlink, a folder, a stranger's: rebuilt
            // The PCH refers to its source file, so that lives next to it. Same key, same bytes: racing writers agree.
            let source = work.appendingPathComponent("headers.ii")
            try KernelCache.writeFile(Array(headers), to: source.path)
            let (builtPCH, builtObject) = (work.appendingPathComponent("headers.pch").path, work.appendingPathComponent("headers.o").path)
            do {
                guard rename(source.path, base + ".ii") == 0 else { return nil }
                try run(tools.clang, ["-x", "c++-header"] + codegen + ["-fpch-codegen", "-fpch-instantiate-templates",
                                                                       "-Xclang", "-fno-pch-timestamp", base + ".ii", "-o", builtPCH],
                        work: work, job: job, output: builtPCH)
                try run(tools.clang, codegen + ["-c", builtPCH, "-o", builtObject], work: work, job: job, output: builtObject)
            } catch let stopped as CompileStopped {
                throw stopped // not a reason to compile the unit whole
            } catch {
                return nil // the whole unit's compile reports the error
            }
            lock { pchBuilds += 1 }
            // The object first: a PCH in the cache always has its object.
            guard rename(builtObject, object) == 0, rename(builtPCH, pch) == 0 else { return nil }
        } else {
            utimensat(AT_FDCWD, pch, nil, 0) // used now (eviction goes by the .pch, the newest of the three)
        }
        return (stem, pch, object, bytes[(end + marker.count)...])
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

    private static let cpuFlags: [String] = {
        #if arch(x86_64)
        // Not the AVX-512 BF16 / AVX-NE-CONVERT float -> bfloat instructions: they flush
        // subnormals to zero (whatever MXCSR says), where a GPU and the software conversion
        // (pm_msl/types.h) keep them.
        return ["-march=native", "-mno-avx512bf16", "-mno-avxneconvert"]
        #else
        return ["-mcpu=native"]
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
            flags.append("-D\(name)=\(value)")
        }
        // __METAL_VERSION__ as Metal defines it for the language version (3.2 -> 320).
        let version = options.languageVersion.rawValue
        flags.append("-D__METAL_VERSION__=\((version >> 16) * 100 + ((version & 0xffff) * 10))")
        let fast = options.mathMode == .fast && options.fastMathEnabled
        flags.append(fast ? "-ffast-math" : "-fno-fast-math")
        return flags
    }

    static func cacheDirectory() -> URL { URL(fileURLWithPath: KernelCache.current.path) }

    /// A regular file (not a symlink) of this user's.
    private static func isOwnFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_uid == geteuid()
    }

    /// Runs `tool` under the job's limits (Toolchain.run); it must write `output` (nil: a check, which writes nothing).
    @discardableResult
    func run(_ tool: String, _ arguments: [String], work: URL, job: Job, output: String?) throws -> String {
        lock { clangInvocations += 1 }
        let written = try Toolchain.run(tool, arguments, work: work.path, limits: job.limits, interrupts: lock { interrupts })
        guard let output else { return written }
        guard access(output, F_OK) == 0 else { // PYMETAL_CLANG=/bin/true, say
            let setting = Toolchain.environment("PYMETAL_CLANG") == tool ? " (PYMETAL_CLANG)" : ""
            throw MTLLibraryError(code: .compileFailure, message: "the compiler \(tool)\(setting) succeeded but wrote no "
                + "\(URL(fileURLWithPath: output).lastPathComponent): it does not work as clang++; "
                + (setting.isEmpty ? "install clang" : "set PYMETAL_CLANG to a clang++, or unset it"))
        }
        return written
    }
}
