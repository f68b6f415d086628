// Big kernel libraries compiled kernel by kernel, when each is first asked
// for. A library of hundreds of template instantiations (MLX's scan.metal)
// took minutes to compile whole, optimised, though a caller uses a few of its
// kernels. makeLibrary(source:) of a library with more than
// MSLCompiler.lazyThreshold kernels instead checks the whole source once with
// clang -fsyntax-only (every instantiation and launcher analysed, no code:
// every error of the source is still thrown by makeLibrary) and publishes a
// plan (the kernels' names) as the cache entry "<key>.lib". makeFunction(name:)
// then compiles a unit holding that kernel's declaration alone (the others'
// are left out between the front end's KernelMarkers, so clang instantiates
// and optimises only what it uses), cached as its own entry under a key of
// the library's key and the name; requests from several threads compile in
// parallel. pymetal's own shader library (pymetal-metallib) is still built
// whole: compile(source:options:).
import CMetalCPU
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

/// What a lazy library's kernels are compiled from.
final class LazyPlan: @unchecked Sendable {
    let key: String
    let names: [String]
    let source: String
    let flags: [String]
    let tools: Toolchain
    let dependencies: [Dependency]
    /// The kernels' bindings from clang's AST, read by the process that checked the library (PlanBindings).
    let ast: [Int: [KernelBinding]]?
    /// The front end's output by function constant values ("": none), made once (under MSLCompiler.prepareLock).
    var prepared: [String: MSLCompiler.Prepared] = [:]

    init(key: String, names: [String], source: String, flags: [String], tools: Toolchain, dependencies: [Dependency],
         ast: [Int: [KernelBinding]]?) {
        (self.key, self.names, self.source, self.flags, self.tools, self.dependencies) = (key, names, source, flags, tools, dependencies)
        self.ast = ast
    }
}

public final class LazyCPULibrary: MTLLibrary, @unchecked Sendable {
    let plan: LazyPlan
    let options: MTLCompileOptions
    private let known: Set<String>
    /// The kernels compiled so far, each in a library of its own (guarded by MSLCompiler.shared.lock).
    private var loaded: [String: CPULibrary] = [:]

    public var functionNames: [String] { plan.names }

    init(plan: LazyPlan, options: MTLCompileOptions) {
        self.plan = plan
        self.options = options
        known = Set(plan.names)
    }

    /// The library of kernel `name` alone, compiled (or found in the cache) when first asked for; nil for a
    /// name this library does not have.
    func library(for name: String) throws -> CPULibrary? {
        guard known.contains(name) else { return nil }
        let compiler = MSLCompiler.shared
        if let done = compiler.lock({ loaded[name] }) { return done }
        let library = try compiler.compileFunction(plan, name: name, constantValues: nil) {
            try CPULibrary(loading: $0, origin: (plan.source, options), lazyPlan: plan)
        }
        return compiler.lock {
            if let raced = loaded[name] { return raced }
            loaded[name] = library
            return library
        }
    }

    /// makeFunction(name:), throwing what compiling the kernel throws (makeFunction can only return nil).
    public func function(named name: String) throws -> (any MTLFunction)? {
        try library(for: name)?.makeFunction(name: name)
    }

    public func makeFunction(name: String) -> (any MTLFunction)? {
        do {
            return try function(named: name)
        } catch {
            // Metal's makeFunction(name:) cannot fail but for the name: say why this one did
            fputs("MetalCPU: cannot compile kernel '\(name)': \((error as? MTLLibraryError)?.message ?? "\(error)")\n", stderr)
            return nil
        }
    }

    public func makeFunction(name: String, constantValues: MTLFunctionConstantValues) throws -> any MTLFunction {
        guard let library = try library(for: name) else {
            throw MTLLibraryError(code: .functionNotFound, message: "no function named '\(name)' in the library")
        }
        return try library.makeFunction(name: name, constantValues: constantValues)
    }
}

extension MSLCompiler {
    /// The plan of a lazy library compiled before (by this process, or in the cache's "<key>.lib") whose
    /// dependencies are unchanged.
    func lazyPlan(_ key: String, source: String, flags: [String], tools: Toolchain) -> LazyPlan? {
        if let plan = lock({ plans[key] }), Dependency.unchanged(plan.dependencies) { return plan }
        guard let hit = KernelCache.current.lookup(key, suffix: ".lib"), let body = KernelCache.body(hit.file) else { return nil }
        let lines = String(decoding: body, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let end = lines.firstIndex(of: Substring(PlanBindings.marker)) ?? lines.endIndex
        let names = lines[..<end].filter { !$0.isEmpty }.map(String.init)
        guard names.count > Self.lazyThreshold else { return nil }
        let ast = end < lines.endIndex ? PlanBindings.decode(lines[(end + 1)...]) : nil
        let plan = LazyPlan(key: key, names: names, source: source, flags: flags, tools: tools, dependencies: hit.dependencies,
                            ast: ast)
        lock { plans[key] = plan }
        return plan
    }

    /// Publishes the plan of a checked library (its kernels' names and their bindings from clang's AST) as the
    /// entry "<key>.lib".
    func publishPlan(_ key: String, prepared: Prepared, source: String, flags: [String], tools: Toolchain,
                     cache: KernelCache, work: URL, keep: String?) throws -> LazyPlan {
        let file = work.appendingPathComponent("plan.lib")
        let ast = prepared.ast.isEmpty ? [] : [PlanBindings.encode(prepared.ast)]
        try KernelCache.writeFile(Array((prepared.kernels.map(\.hostName) + ast).joined(separator: "\n").utf8), to: file.path)
        try cache.seal(file.path, dependencies: prepared.dependencies)
        _ = try cache.publish(file.path, key: key, suffix: ".lib")
        try cache.evict(keep: Set([key] + (keep.map { [$0] } ?? [])))
        let plan = LazyPlan(key: key, names: prepared.kernels.map(\.hostName), source: source, flags: flags, tools: tools,
                            dependencies: prepared.dependencies, ast: prepared.ast)
        plan.prepared[""] = prepared
        lock { plans[key] = plan }
        return plan
    }

    /// Kernel `name` of a lazy library compiled alone (with function constant values, or none) and loaded
    /// with `load`; cached under the library's key, the name and the values.
    func compileFunction(_ plan: LazyPlan, name: String, constantValues: [Int: FunctionConstantValue]?,
                         load: (URL) throws -> CPULibrary) throws -> CPULibrary {
        let values = (constantValues ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.type):\($0.value.bytes)" }
            .joined(separator: ";")
        var digest = SHA256()
        digest.update(plan.key)
        digest.update("\u{0}function\u{0}\(name)\u{0}\(constantValues == nil ? "-" : values)")
        let key = digest.hexDigest()
        var cache = KernelCache.current
        if let done = try compiled(key, in: cache, load: load) { return done }
        do {
            _ = try KernelCache.maxBytes()
            let job = Job(limits: try CompileLimits.fromEnvironment())
            let prepared = try prepareOnce(plan, constantValues: constantValues, values: values, cache: cache, job: job)
            do {
                return try buildFunction(plan, name: name, prepared: prepared, key: key, cache: cache, job: job, load: load)
            } catch let error where cache.persistent && Self.storageFailure(error, in: cache.path) != nil {
                cache = KernelCache.fallBack(from: cache, reason: Self.storageFailure(error, in: cache.path)!)
                return try buildFunction(plan, name: name, prepared: prepared, key: key, cache: cache, job: job, load: load)
            }
        } catch let stopped as CompileStopped {
            throw MTLLibraryError(code: .compileFailure, message: stopped.message)
        }
    }

    /// The front end's output for the plan's source and values, made once per process (a plan loaded from the
    /// cache has none yet): clang -E and the front end, not the whole check.
    private func prepareOnce(_ plan: LazyPlan, constantValues: [Int: FunctionConstantValue]?, values: String,
                             cache: KernelCache, job: Job) throws -> Prepared {
        let slot = constantValues == nil ? "" : "=" + values
        return try prepareLock {
            if let done = plan.prepared[slot] { return done }
            let work = URL(fileURLWithPath: try cache.makeWorkFolder())
            defer { try? FileManager.default.removeItem(at: work) }
            // the AST's bindings from the plan (no second AST dump) where it read the same text: no constant values
            let done = try prepare(plan.source, flags: plan.flags, constantValues: constantValues, tools: plan.tools,
                                   cache: cache.path, work: work, job: job, ast: constantValues == nil ? plan.ast : nil)
            plan.prepared[slot] = done
            return done
        }
    }

    private func buildFunction(_ plan: LazyPlan, name: String, prepared: Prepared, key: String, cache: KernelCache,
                               job: Job, load: (URL) throws -> CPULibrary) throws -> CPULibrary {
        guard let index = prepared.kernels.firstIndex(where: { $0.hostName == name }) else {
            throw MTLLibraryError(code: .functionNotFound, message: "no function named '\(name)' in the library")
        }
        cache.removeLeftovers()
        let work = URL(fileURLWithPath: try cache.makeWorkFolder())
        defer { try? FileManager.default.removeItem(at: work) }
        let launcher = LauncherGenerator.generate([prepared.kernels[index]], constants: prepared.constants)
        let library = work.appendingPathComponent("library.so")
        var precompiled: String?
        do {
            precompiled = try emit(KernelMarkers.only(index, of: prepared.kernels.count, in: prepared.unit) + launcher, prepared,
                                   tools: plan.tools, cache: cache, work: work, job: job, output: library)
        } catch let error as MTLLibraryError where error.code == .compileFailure {
            // The source names another kernel's declaration (the whole check passed): the whole unit, with
            // this kernel's launcher alone.
            precompiled = try emit(prepared.unit + launcher, prepared, tools: plan.tools, cache: cache, work: work, job: job,
                                   output: library)
        }
        try cache.seal(library.path, dependencies: prepared.dependencies)
        let loaded = try load(library) // before it is published: a clear of the cache cannot take it first
        let target = URL(fileURLWithPath: try cache.publish(library.path, key: key))
        try cache.evict(keep: Set([key, plan.key] + (precompiled.map { [$0] } ?? [])))
        lock { memo[key] = (target, prepared.dependencies) }
        return loaded
    }
}
