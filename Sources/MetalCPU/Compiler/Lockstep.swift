// SIMD lockstep: a kernel that meets other threads (SIMD-group functions,
// barriers) is rewritten, when its body has a shape the rewrite understands,
// so that one call runs a whole threadgroup statement by statement
// (PM_KERNEL_LOCKSTEP; runtime.h, "LOCKSTEP mode", shows the execution):
//
//   - each statement of the body becomes a loop over the group's threads
//     (x innermost) that runs it with the thread's position values; clang
//     vectorises it as the independent iterations it is (threads, unordered
//     as on a GPU), and under a mask that may have lost threads it has a
//     second copy for when all take part (plain vector code, no masked stores);
//     one that divides by a constant runs a whole simdgroup as 4 runs of 8
//     lanes (x[lane / 8 * n + lane % 8]: 8 neighbours, not 8 addresses);
//   - a local declared at the body's level lives in an array indexed by the
//     thread (`float acc = 0;` -> `float __pm_h1_acc[ls_max];`, and each
//     thread's statements see `auto &acc = __pm_h1_acc[l];`);
//   - a grid- or block-stride loop `for (T i = A; C; i += S) B` runs step by
//     step across the threads, its index recomputed as A + k * S, so that
//     neighbouring threads read neighbouring addresses in one step, as on a
//     GPU, and clang vectorises over the threads;
//   - a statement with a SIMD-group call runs twice: the first pass collects
//     each active lane's operands, the second hands out the results (so its
//     right-hand side must have no side effects);
//   - an `if` around SIMD-group calls runs its branches with a mask of the
//     threads that take them (MSL's active lanes);
//   - barriers are the boundaries between statements.
//   - `if (c) return;` at the body's level removes threads from the mask;
//   - a `for` loop around SIMD-group calls runs while any thread's condition
//     holds, each step under the mask of the threads still in it; when its
//     index starts, steps and stops on what the group shares (constants,
//     constant arguments, the group's position and size), it is one plain
//     loop for the group instead;
//   - `for (j = lane; j < 64; j += 32)` takes 64 / 32 steps in every lane;
//   - simdgroup_load / store / multiply run once per simdgroup on all its
//     lanes' elements (row-major when no thread looks at its own elements).
// Anything else (a return from inside a statement, a `switch` or `while`
// around a SIMD-group call, templates, locals of unknown size, decltype, ...)
// keeps the kernel in FIBERS mode, unchanged. Every copied statement is preceded by a line
// marker, so clang's diagnostics keep the user's lines.
// Where clang's AST of the body was read (LockstepAST.swift), the statement structure comes from it:
// statement extents, declarators, for headers, if / `if (c) return;`, returns, barrier calls, and
// which uses of a variable may change it, the locals of typedef'd array types and the lambdas
// that capture nothing; and (LockstepUniformity.swift) the uniformity facts, by declaration id: a
// group-wide loop's index and bounds, a grid-stride loop's invariant start and stride, the locals
// the group declares once, and which statements meet other threads and which are pure, by clang's
// call graph. Still on tokens: the spelling of a grid-stride step (`i += S`, the emitter's input),
// simdgroup-matrix names (asksLane, matrixOperators), the SIMD-group call of a collective statement
// and the statement kinds (`threadgroup`, `constexpr`, `typedef`, ...); everything where the AST was
// not read (PYMETAL_CLANG_AST=0, clang refused the text, a body its ranges do not tile).
// Token-level special cases the AST retired from the default path: 15 (uses that change a variable:
// `x =` not `x ==`, `>>=`, `++x`/`x++`, `&x`, members and elements, `T &r = x`, arguments of
// functions not known to take values, ?: operands, parentheses; typedef'd arrays; lambdas; ...), then
// 15 (statement extents, `#pragma` lines, declarator scans, `[n]` extents, comma declarators, for
// header semicolons, `if (c) return;`, braces and else, `return` by word, barriers by first word, ...),
// then 14 (uniformity and calls): uniformIndex's name scan (uniformNames/uniform minus locals,
// members after `.`, no `;{}[]`); the index's integer type by its spelling (integerTypes); the
// index unchanged and unaliased by name (uniform and strided loops, 2); invariant()'s name scan
// (positions, state.invariant, the punctuation whitelist); value parameters seeded into invariant and
// uniformNames by name, and a local's name removed from them; uniformStatement's `const T n = e`
// scan with its `sizeof` case; the guard that a uniform statement names no thread's local (for the
// names it declares: they hide a thread's, by id); a loop index made uniform by name; meetsOthers by
// name (a local named like a helper, every overload);
// collective's scan for another name that meets; pure()'s `=`-not-a-comparison and `++`/`--` token
// patterns and its user functions and lambdas by name.

extension FrontEnd {
    /// A local declared at the body's level, kept per thread.
    struct LockstepLocal {
        let name: String
        let array: String   // its per-thread array
        let type: String    // element type, without const
        let extent: String  // "" or "[4]"
        var reference = false // `T &r = x`: its array holds pointers (type `T *`), each thread's `r` is `*array[l]`
    }

    indirect enum LockstepItem {
        case uniform(Range<Int>)   // as it is, once: threadgroup storage, constexpr, typedef, using
        case lane(Range<Int>)      // a statement every thread runs
        case strided(type: Range<Int>, name: String, start: Range<Int>, condition: Range<Int>, step: Range<Int>,
                     body: Range<Int>, steps: Int?)   // steps: how many every thread takes, when that is known
        case locals([LockstepLocal], initialisers: [(String, Range<Int>)])
        case collective(target: Range<Int>?, local: LockstepLocal?, value: Range<Int>, statement: Range<Int>)
        case barrier(Range<Int>, group: Bool)  // group: threadgroup_barrier (not simdgroup_barrier)
        case branch(condition: Range<Int>, then: [LockstepItem], otherwise: [LockstepItem]?)
        case leave(condition: Range<Int>)                      // if (c) return; at the body's level
        case loop(initial: [LockstepItem], condition: Range<Int>, step: Range<Int>, body: [LockstepItem])
        case uniformLoop(index: String, header: Range<Int>, body: [LockstepItem]) // every thread takes the same steps
        case matrix(name: String, arguments: [Range<Int>])    // a simdgroup_matrix operation, once per simdgroup
    }

    /// The parts of `for (init; condition; step) body` (clang's AST's, else the tokens'); nil for other loops.
    private func loopParts(_ range: Range<Int>) -> LockstepAST.Facts.Loop? {
        let s = range.lowerBound
        if lockstepFacts.covers(range) { return lockstepFacts.loops[s] }
        guard isWord(s, "for"), isPunct(s + 1, 40) else { return nil }
        let close = matching(s + 1), semicolons = headerSemicolons(s + 1)
        guard semicolons.count == 2 else { return nil }
        func part(_ r: Range<Int>) -> Range<Int>? { r.isEmpty ? nil : r }
        return LockstepAST.Facts.Loop(initial: part((s + 2)..<(semicolons[0] + 1)).flatMap { $0.count > 1 ? $0 : nil },
                                      condition: part((semicolons[0] + 1)..<semicolons[1]), step: part((semicolons[1] + 1)..<close),
                                      body: (close + 1)..<range.upperBound)
    }

    /// `for (init; condition; step) body` whose body meets other threads: every thread steps
    /// through it while its condition holds (no break or continue).
    private func lockstepLoop(_ range: Range<Int>, _ state: inout LockstepState) -> LockstepItem? {
        var memo: [String: Bool] = [:]
        guard let parts = loopParts(range), let condition = parts.condition,
              !range.contains(where: { isWord($0, "break") || isWord($0, "continue") }),
              !lockstepMeets(range.lowerBound..<parts.body.lowerBound, &memo) else { return nil }
        let index = lockstepFacts.covers(range) ? astUniformIndex(parts, state, declarators: declarators)
            : uniformIndex(parts, state).map { ($0, "") }
        if let (name, id) = index {
            // One index for the group, in scope for the body's statements (a plain C++ local, not
            // kept per thread: constants set from it are the group's too).
            state.uniform.insert(name)
            state.invariant.insert(name)
            state.groupDecls.insert(id)
            defer { state.uniform.remove(name); state.invariant.remove(name); state.groupDecls.remove(id) }
            guard let body = lockstepStatement(parts.body, &state) else { return nil }
            return .uniformLoop(index: name, header: range.lowerBound..<parts.body.lowerBound, body: body)
        }
        var initial: [LockstepItem] = []
        if let statement = parts.initial {
            if let locals = lockstepLocals(statement, &state) { initial = [locals] }
            else if declaresSomething(statement) { return nil }
            else { initial = [.lane(statement)] }
        }
        guard let body = lockstepStatement(parts.body, &state) else { return nil }
        return .loop(initial: initial, condition: condition, step: parts.step ?? parts.body.lowerBound..<parts.body.lowerBound,
                     body: body)
    }

    /// The index of `for (T i = A; C; S) body` when every thread of the group takes the same steps:
    /// an integer index that the body leaves alone, and A, C and S made of it, literals and
    /// values the group shares (arguments, the group's position and size, such constants), by name:
    /// the fallback for astUniformIndex (LockstepUniformity.swift).
    private func uniformIndex(_ parts: LockstepAST.Facts.Loop, _ state: LockstepState) -> String? {
        guard let initial = parts.initial, let condition = parts.condition, let step = parts.step,
              let names = declarators(initial), names.count == 1, let start = names[0].value,
              names[0].extents == nil, !names[0].pointer, !names[0].reference,
              (initial.lowerBound..<names[0].name).allSatisfy({ Self.integerTypes.contains(text($0)) || text($0) == "const" })
        else { return nil }
        let name = text(names[0].name)
        func shared(_ range: Range<Int>) -> Bool {
            range.allSatisfy { t in
                switch tokens[t].kind {
                case .number: return true
                case .identifier:
                    // (a thread's local may hide a shared name)
                    return text(t) == name || isPunct(t - 1, 46) // a member: tgp.x
                        || (state.uniformNames.contains(text(t)) || state.uniform.contains(text(t))) && !state.locals.contains(text(t))
                default: return ![59, 123, 125, 91, 93].contains(src.bytes[tokens[t].start]) // no statements, no subscripts
                }
            }
        }
        guard shared(start), shared(condition), shared(step), !assigned(name, in: parts.body), !aliased(name, in: parts.body)
        else { return nil }
        return name
    }

    static let integerTypes: Set<String> = ["int", "uint", "short", "ushort", "long", "ulong", "unsigned", "signed", "size_t",
                                            "int32_t", "uint32_t", "int64_t", "uint64_t", "int16_t", "uint16_t", "ptrdiff_t"]

    /// The simdgroup-matrix operations lockstep runs once per simdgroup, and how many of their
    /// leading arguments are matrices.
    static let matrixOperands = ["simdgroup_load": 1, "simdgroup_store": 1, "simdgroup_multiply": 3,
                                 "simdgroup_multiply_accumulate": 4]

    /// `simdgroup_load(m, ...);`, `simdgroup_store(m, ...);`, `simdgroup_multiply[_accumulate](d, a, b[, c]);`
    /// with matrices that are locals of the body: run once per simdgroup on all its active lanes' elements.
    private func matrixOperation(_ range: Range<Int>) -> LockstepItem? {
        let s = range.lowerBound
        guard tokens[s].kind == .identifier, let matrices = Self.matrixOperands[text(s)], isPunct(s + 1, 40),
              matching(s + 1) + 2 == range.upperBound, isPunct(range.upperBound - 1, 59) else { return nil }
        var arguments: [Range<Int>] = []
        var start = s + 2, j = s + 2
        let close = matching(s + 1)
        while j <= close {
            if j < close, isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) + 1; continue }
            if j == close || isPunct(j, 44) { arguments.append(start..<j); start = j + 1 }
            j += 1
        }
        var memo: [String: Bool] = [:]
        guard arguments.count >= matrices, arguments.prefix(matrices).allSatisfy({ $0.count == 1 && tokens[$0.lowerBound].kind == .identifier }),
              !(s + 2..<close).contains(where: { tokens[$0].kind == .identifier && reachesRendezvous(text($0), &memo) }),
              pure((s + 2)..<close) else { return nil }
        return .matrix(name: text(s), arguments: arguments)
    }

    /// Rewrites kernel `index` for LOCKSTEP mode if its body allows; returns whether it did.
    func makeLockstep(_ index: Int) -> Bool {
        guard let body = lockstepCandidate(index) else { return false }
        let open = body.lowerBound - 1, close = body.upperBound // the body's tokens are those inside its braces
        guard isPunct(open, 123), isPunct(close, 125) else { return false }
        // A thread that leaves early, or jumps, does not fit statement-by-statement execution.
        for t in body where tokens[t].kind == .identifier {
            // decltype(local) would name a thread's copy or reference, not the local's type
            if ["goto", "co_return", "co_await", "co_yield", "asm", "__asm__", "decltype"].contains(text(t)) { return false }
        }
        let positions = kernels[index].bindings.compactMap { binding -> (String, String)? in
            if case let .position(attribute) = binding.kind { return (binding.name, attribute) }
            return nil
        }
        guard positions.allSatisfy({ !$0.0.isEmpty && !assigned($0.0, in: body) }) else { return false }
        let values = kernels[index].bindings.filter { !$0.pointer }
        var state = LockstepState(positions: Dictionary(positions, uniquingKeysWith: { first, _ in first }),
                                  bindings: Dictionary(kernels[index].bindings.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first }),
                                  body: body, invariant: Set(values.map(\.name)),
                                  uniformNames: Set(values.filter { $0.kind == .buffer && !assigned($0.name, in: body) }.map(\.name)
                                                    + positions.filter { Self.groupPositions.contains($0.1) }.map(\.0)))
        guard let items = lockstepBlock((open + 1)..<close, &state, top: true), state.bytesPerThread <= 512,
              !matrixOperators(items, in: body) else { return false }

        var out = "\n::pm::rt::worker *const __pm_w = ::pm::rt::tls_w; const ::pm::rt::group __pm_g = ::pm::rt::ls_group();"
        out += " bool __pm_m0[::pm::rt::ls_max]; ::pm::rt::ls_all(__pm_m0, __pm_g);"
        for (name, _) in positions { out += " typedef decltype(\(name)) __pm_t_\(name);" }
        var taken = Set(body.compactMap { lockstepFacts.addressed[$0] })
        if !lockstepFacts.covers(body) {
            for t in body where isAddressOf(t) {
                var name = t + 1
                while isPunct(name, 40) { name += 1 } // &(v)
                if tokens[name].kind == .identifier { taken.insert(text(name)) }
            }
        }
        // What a reference local is bound to lives in place, for the reference to point at (`float &r = t`).
        func bound(_ items: [LockstepItem]) {
            for item in items {
                switch item {
                case let .locals(locals, initialisers):
                    for (name, value) in initialisers where locals.contains(where: { $0.name == name && $0.reference }) {
                        for t in value where tokens[t].kind == .identifier { taken.insert(text(t)) }
                    }
                case let .branch(_, then, otherwise): bound(then); bound(otherwise ?? [])
                case let .loop(initial, _, _, loopBody): bound(initial); bound(loopBody)
                case let .uniformLoop(_, _, loopBody): bound(loopBody)
                default: break
                }
            }
        }
        bound(items)
        var emitter = LockstepEmitter(positions: positions, addressTaken: taken)
        emitter.rowMajor = rowMajorMatrices(items, in: body)
        guard let text = emit(items, mask: "__pm_m0", &emitter) else { return false }
        out += emitter.arrays + text + marker(close)
        // The statements' own edits are in the copies now.
        let bytes = tokens[open].end..<tokens[close].start
        edits.removeAll { bytes.contains($0.range.lowerBound) || ($0.range.isEmpty && $0.range.lowerBound == bytes.upperBound) }
        edits.append((bytes, out))
        fiberBodies.remove(body)
        return true
    }

    /// Position attributes whose value is the same for every thread of a group.
    static let groupPositions: Set<String> = ["threadgroup_position_in_grid", "threadgroups_per_grid", "threads_per_threadgroup",
                                              "threads_per_grid", "simdgroups_per_threadgroup", "grid_origin", "grid_size",
                                              "dispatch_threads_per_threadgroup", "threads_per_simdgroup",
                                              "dispatch_simdgroups_per_threadgroup"]

    struct LockstepState {
        let positions: [String: String] // the kernel's position parameters: name -> attribute
        let bindings: [String: KernelBinding] // the kernel's parameters by name
        let body: Range<Int>
        var invariant: Set<String>   // names whose value no thread changes while the kernel runs
        let uniformNames: Set<String> // values every thread of a group shares: arguments, the group's position and size
        var locals: Set<String> = []  // every local kept per thread so far
        var uniform: Set<String> = [] // const locals set from constants, declared once for the group
        var groupDecls: Set<String> = [] // the same from clang's AST, by declaration id: locals and indices the group declares once
        var bytesPerThread = 0
        var counter = 0
    }

    struct LockstepEmitter {
        let positions: [(String, String)]
        let addressTaken: Set<String>   // locals whose address the body takes: used in place, never copied
        var rowMajor: Set<String> = []  // simdgroup matrices kept row-major (see rowMajorMatrices)
        // The per-thread arrays, declared once at the top: a local declared in a loop gets an
        // indeterminate value each iteration anyway, and its array is not made again each time.
        var arrays = ""
        var scopes: [[LockstepLocal]] = [[]]
        // Masks known to hold every thread of the group: the body's own until a thread returns.
        var full: Set<String> = ["__pm_m0"]
        // Masks of an if's branches: often a few threads (lane == 0), not worth a second copy for all.
        var branches: Set<String> = []
        /// Whether statements under `mask` get a copy for when every thread takes part.
        func twice(_ mask: String) -> Bool { !full.contains(mask) && !branches.contains(mask) }
        var counter = 0
        mutating func unique() -> Int { counter += 1; return counter }
    }

    /// Whether a simdgroup matrix local is an operand of `*`, `+` or `-` (`(G * g) * Gt`, MLX's Winograd
    /// transforms): such a product is a rendezvous of the simdgroup (simdgroup_matrix.h) hidden in what
    /// reads as a lane statement, which the lockstep rewrite would run thread by thread.
    private func matrixOperators(_ items: [LockstepItem], in body: Range<Int>) -> Bool {
        var matrices: Set<String> = []
        func walk(_ items: [LockstepItem]) {
            for item in items {
                switch item {
                case let .locals(locals, _):
                    for local in locals where local.type.hasPrefix("simdgroup_") { matrices.insert(local.name) }
                case let .branch(_, then, otherwise): walk(then); walk(otherwise ?? [])
                case let .loop(initial, _, _, loopBody): walk(initial); walk(loopBody)
                case let .uniformLoop(_, _, loopBody): walk(loopBody)
                default: break
                }
            }
        }
        walk(items)
        return body.contains { t in
            tokens[t].kind == .identifier && matrices.contains(text(t))
                && [t - 1, t + 1].contains { isPunct($0, 42) || isPunct($0, 43) || isPunct($0, 45) }
        }
    }

    /// The simdgroup matrices the kernel only declares (empty or filled) and hands to
    /// simdgroup_matrix functions: no thread sees its elements, so they may be kept row-major.
    private func rowMajorMatrices(_ items: [LockstepItem], in body: Range<Int>) -> Set<String> {
        var handed: [String: Int] = [:]
        var layoutBound: Set<String> = []
        func walk(_ items: [LockstepItem]) {
            for item in items {
                switch item {
                case let .locals(locals, initialisers):
                    for local in locals where local.type.hasPrefix("simdgroup_") {
                        handed[local.name, default: 0] += 1
                        if let value = initialisers.first(where: { $0.0 == local.name })?.1,
                           !isWord(value.lowerBound, "make_filled_simdgroup_matrix") { layoutBound.insert(local.name) }
                    }
                case let .matrix(name, arguments):
                    for argument in arguments.prefix(Self.matrixOperands[name]!) { handed[text(argument.lowerBound), default: 0] += 1 }
                case let .branch(_, then, otherwise): walk(then); walk(otherwise ?? [])
                case let .loop(initial, _, _, loopBody): walk(initial); walk(loopBody)
                case let .uniformLoop(_, _, loopBody): walk(loopBody)
                default: break
                }
            }
        }
        walk(items)
        var uses: [String: Int] = [:]
        for t in body where tokens[t].kind == .identifier && !isPunct(t - 1, 46) && text(t - 1) != "->" {
            uses[text(t), default: 0] += 1
        }
        return Set(handed.filter { !layoutBound.contains($0.key) && uses[$0.key] == $0.value }.keys)
    }

    // MARK: - Parsing the body

    /// `top`: the body's own block, where `if (c) return;` may end threads.
    private func lockstepBlock(_ range: Range<Int>, _ state: inout LockstepState, top: Bool = false) -> [LockstepItem]? {
        var items: [LockstepItem] = []
        var memo: [String: Bool] = [:]
        let ast = lockstepFacts.covers(range) // read from clang's AST (LockstepAST.structure), else from the tokens
        guard let statements = ast ? astStatements(range) : tokenStatements(range) else { return nil }
        for statement in statements {
            let (s, e) = (statement.lowerBound, statement.upperBound)
            if isPunct(s, 59) { continue } // ;
            // `if (c) return;` (`{ return; }`, `else S`): the threads for which c holds leave
            if top, let leave = leaving(s..<e, ast: ast) {
                guard !lockstepMeets(leave.condition, &memo) else { return nil }
                items.append(.leave(condition: leave.condition))
                if let otherwise = leave.otherwise {
                    guard let inner = lockstepStatement(otherwise, &state) else { return nil }
                    items.append(.branch(condition: s..<s, then: inner, otherwise: nil)) // a block of its own
                }
                continue
            }
            // A lambda that captures nothing (clang's AST says; its body may return): a value the group shares.
            // (none that meets other threads or reads the lane, as simdgroup matrices do: a call runs it thread by thread)
            if let name = lockstepFacts.lambdas[s], !lockstepMeets(s..<e, &memo), !asksLane([s..<e]) {
                state.uniform.insert(name)
                items.append(.uniform(s..<e))
                continue
            }
            // Any other return (a thread leaving from inside a statement) does not fit.
            if ast ? (s..<e).contains(where: lockstepFacts.returns.contains) : (s..<e).contains(where: { isWord($0, "return") }) {
                return nil
            }
            let meets = lockstepMeets(s..<e, &memo)
            if isPunct(s, 123) {
                guard meets else { items.append(.lane(s..<e)); continue }
                guard let inner = lockstepBlock((s + 1)..<(e - 1), &state) else { return nil }
                items.append(.branch(condition: s..<s, then: inner, otherwise: nil)) // a block: runs where the mask says
                continue
            }
            let first = tokens[s].kind == .identifier ? text(s) : ""
            // Once for the group: kernel-scope threadgroup storage (rewritten to tg_var), constexpr
            // and const locals set from constants (from clang's AST: locals set from uniform values and
            // never changed), types, static_assert; none may name a thread's local (but for the names it
            // declares, from the AST: they hide a thread's from here on, see emit).
            if uniformStatement(s..<e, state) {
                let declared = ast ? Set((declarators(s..<e) ?? []).map(\.name)) : []
                guard !meets, !(s..<e).contains(where: { tokens[$0].kind == .identifier && state.locals.contains(text($0))
                                                        && !declared.contains($0) })
                else { return nil }
                if let names = declarators(s..<e) {
                    for d in names {
                        state.uniform.insert(text(d.name))
                        if ast, let id = lockstepFacts.declared[d.name] { state.groupDecls.insert(id) }
                    }
                }
                items.append(.uniform(s..<e))
                continue
            }
            // A pragma stays with a statement every thread runs; anything else after one does not fit.
            if tokens[s].kind == .punctuation, src.bytes[tokens[s].start] == 35 {
                guard !meets, !declaresSomething((s + 1)..<e), declarators((s + 1)..<e) == nil else { return nil }
                items.append(.lane(s..<e))
                continue
            }
            if ast ? lockstepFacts.branches[s] != nil || isWord(s, "if") : first == "if" && isPunct(s + 1, 40) {
                guard meets else { items.append(.lane(s..<e)); continue }
                // no declaration in the condition, nothing that meets other threads
                guard let branch = ast ? lockstepFacts.branches[s] : tokenBranch(s..<e),
                      !lockstepMeets(branch.condition, &memo), pure(branch.condition) else { return nil }
                guard let then = lockstepStatement(branch.then, &state) else { return nil }
                var otherwise: [LockstepItem]? = nil
                if let other = branch.otherwise {
                    guard let items = lockstepStatement(other, &state) else { return nil }
                    otherwise = items
                }
                items.append(.branch(condition: branch.condition, then: then, otherwise: otherwise))
                continue
            }
            if meets, ast ? isWord(s, "for") : first == "for" && isPunct(s + 1, 40) {
                guard let item = lockstepLoop(s..<e, &state) else { return nil }
                items.append(item)
                continue
            }
            if meets, let item = matrixOperation(s..<e) {
                items.append(item)
                continue
            }
            if !meets {
                if let item = lockstepLocals(s..<e, &state) { items.append(item); continue }
                if declaresSomething(s..<e) { return nil } // a local of a shape not kept per thread
                items.append(stridedLoop(s..<e, state) ?? .lane(s..<e))
                continue
            }
            // a call of a barrier, as clang resolved it (`metal::threadgroup_barrier`, through a macro)
            if let group = ast ? lockstepFacts.barriers[s]
                : (first == "threadgroup_barrier" || first == "simdgroup_barrier") && isPunct(s + 1, 40) && matching(s + 1) + 2 == e
                    ? first == "threadgroup_barrier" : nil {
                items.append(.barrier(s..<e, group: group))
                continue
            }
            guard let item = collective(s..<e, &state, &memo) else { return nil }
            items.append(item)
        }
        return items
    }

    /// The statements of `range` as clang's AST says: a block's (the range inside its braces) or one statement's.
    private func astStatements(_ range: Range<Int>) -> [Range<Int>]? {
        if isPunct(range.lowerBound - 1, 123), matching(range.lowerBound - 1) == range.upperBound,
           let block = lockstepFacts.blocks[range.lowerBound - 1] { return block }
        return lockstepFacts.statements[range.lowerBound] == range.upperBound ? [range] : nil
    }

    /// The statements of `range` as the tokens say (the fallback).
    private func tokenStatements(_ range: Range<Int>) -> [Range<Int>]? {
        var statements: [Range<Int>] = []
        var s = range.lowerBound
        while s < range.upperBound {
            let e = statementExtent(s)
            guard e <= range.upperBound else { return nil }
            statements.append(s..<e)
            s = e
        }
        return statements
    }

    /// `if (c) S [else T]` as the tokens say (the fallback): no declaration in the condition.
    private func tokenBranch(_ range: Range<Int>) -> LockstepAST.Facts.Branch? {
        let s = range.lowerBound, conditionEnd = matching(s + 1)
        guard declarators((s + 2)..<(conditionEnd + 1)) == nil else { return nil }
        let thenEnd = statementExtent(conditionEnd + 1)
        return LockstepAST.Facts.Branch(condition: (s + 2)..<conditionEnd, then: (conditionEnd + 1)..<thenEnd,
                                        otherwise: thenEnd < range.upperBound ? (thenEnd + 1)..<range.upperBound : nil,
                                        leaves: isWord(conditionEnd + 1, "return") && isPunct(conditionEnd + 2, 59))
    }

    /// `if (c) return;` at the body's level: its condition, and what an `else` runs (the AST reads braces and else;
    /// the tokens only `if (c) return;`).
    private func leaving(_ range: Range<Int>, ast: Bool) -> (condition: Range<Int>, otherwise: Range<Int>?)? {
        if ast {
            guard let branch = lockstepFacts.branches[range.lowerBound], branch.leaves else { return nil }
            return (branch.condition, branch.otherwise)
        }
        guard isWord(range.lowerBound, "if"), isPunct(range.lowerBound + 1, 40), let branch = tokenBranch(range), branch.leaves,
              branch.otherwise == nil else { return nil }
        return (branch.condition, nil)
    }

    /// A branch of an if: a block, or one statement.
    private func lockstepStatement(_ range: Range<Int>, _ state: inout LockstepState) -> [LockstepItem]? {
        if isPunct(range.lowerBound, 123) { return lockstepBlock((range.lowerBound + 1)..<(range.upperBound - 1), &state) }
        return lockstepBlock(range, &state)
    }

    /// The end (exclusive) of the statement starting at `s`.
    func statementExtent(_ s: Int) -> Int {
        guard s < tokens.count else { return tokens.count }
        if isPunct(s, 123) { return matching(s) + 1 }
        if tokens[s].kind == .punctuation, src.bytes[tokens[s].start] == 35 { return statementExtent(s + 1) } // #pragma
        if tokens[s].kind == .identifier {
            switch text(s) {
            case "if":
                var paren = s + 1
                if isWord(paren, "constexpr") { paren += 1 }
                var j = statementExtent(matching(paren) + 1)
                if isWord(j, "else") { j = statementExtent(j + 1) }
                return j
            case "for", "while", "switch": return statementExtent(matching(s + 1) + 1)
            case "do": return statementEnd(statementExtent(s + 1))
            default: break
            }
        }
        var j = s
        while j < tokens.count, !isPunct(j, 59) {
            if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) }
            j += 1
        }
        return min(j + 1, tokens.count)
    }

    func isWord(_ i: Int, _ word: String) -> Bool {
        i >= 0 && i < tokens.count && tokens[i].kind == .identifier && text(i) == word
    }

    /// `T a = x, b[4];` at the body's level, with T of a known size: kept per thread. From clang's AST also
    /// `T a = x, &r = a, *p = &a, c[2][3];`: a reference is kept as a pointer (LockstepLocal.reference).
    private func lockstepLocals(_ range: Range<Int>, _ state: inout LockstepState) -> LockstepItem? {
        guard let names = declarators(range) else { return nil }
        let ast = lockstepFacts.covers(range)
        var words: [String] = []
        var indirection = false // a `*` or `&` before the first name: the AST says whose it is
        for t in range.lowerBound..<names[0].name {
            guard tokens[t].kind == .identifier || isPunct(t, 42) || (ast && isPunct(t, 38)) || text(t) == "::" else { return nil }
            if ast, isPunct(t, 42) || isPunct(t, 38) { indirection = true; continue }
            // (`float *const p`: a const pointer, which the AST reading leaves alone)
            if indirection, ["const", "volatile"].contains(text(t)) { return nil }
            switch text(t) {
            case "device", "thread", "threadgroup": continue // address spaces are gone in C++
            case "constant": words.append("const")
            default: words.append(text(t))
            }
        }
        /// The type of declarator `d`'s per-thread array elements: assigned, so no const of their own (a pointer
        /// may point at const).
        func type(_ d: LockstepAST.Facts.Declarator) -> [String] {
            let indirect = d.pointer || d.reference
            var words = ast && indirect ? words + ["*"] : words
            let star = words.lastIndex(of: "*") ?? -1
            words = words.enumerated().filter { $0.offset < star || !["const", "volatile"].contains($0.element) }.map(\.element)
            return words
        }
        var arrays: [Int: (element: String, extents: [Int])] = [:]
        var element: [String]? = nil
        if Self.lockstepSize(type(names[0])) == nil {
            // a typedef of an array (`row a;`): what it is as clang's AST says
            let resolved = names.compactMap { lockstepFacts.arrays[$0.name] }
            guard resolved.count == names.count, names.allSatisfy({ !isPunct($0.name + 1, 91) && !$0.pointer && !$0.reference }),
                  let first = resolved.first?.element, resolved.allSatisfy({ $0.element == first }) else { return nil }
            element = [first]
            arrays = Dictionary(uniqueKeysWithValues: zip(names.map(\.name), resolved))
        }
        var locals: [LockstepLocal] = []
        var initialisers: [(String, Range<Int>)] = []
        for d in names {
            let name = text(d.name)
            let words = element ?? type(d)
            // (`auto *p`, `thread auto &e = m.thread_elements()`: no type to declare the array with; a reference
            // to a scalar or vector only)
            guard state.positions[name] == nil, let size = Self.lockstepSize(words), !words.contains("auto"),
                  !d.reference || d.value != nil && Self.lockstepSize(words.filter { !["*", "const", "volatile"].contains($0) }) != nil
            else { return nil }
            // a position is a new value in each statement: nothing to point at across statements (one named
            // outside a subscript may be what the reference is bound to: `g = gid`, `c ? gid : lane`)
            if d.reference, let value = d.value {
                var depth = 0
                for t in value {
                    if isPunct(t, 91) { depth += 1 } else if isPunct(t, 93) { depth -= 1 }
                    if depth == 0, tokens[t].kind == .identifier, state.positions[text(t)] != nil { return nil }
                }
            }
            var extent = "", count = 1
            if let extents = arrays[d.name]?.extents ?? d.extents {
                guard !extents.isEmpty, extents.allSatisfy({ $0 > 0 }) else { return nil }
                extent = extents.map { "[\($0)]" }.joined()
                count = extents.reduce(1, *)
            }
            state.counter += 1
            state.bytesPerThread += size * count
            state.invariant.remove(name)
            state.locals.insert(name)
            locals.append(LockstepLocal(name: name, array: "__pm_h\(state.counter)_\(name)",
                                        type: words.joined(separator: " ").replacing(" :: ", with: "::"), extent: extent,
                                        reference: d.reference))
            if let value = d.value { initialisers.append((name, value)) }
        }
        return .locals(locals, initialisers: initialisers)
    }

    /// The declarators of `T a = x, b[4], c;` (clang's AST's, else the tokens'); nil when the statement is not
    /// such a declaration.
    private func declarators(_ range: Range<Int>) -> [LockstepAST.Facts.Declarator]? {
        if lockstepFacts.covers(range) {
            guard lockstepFacts.statements[range.lowerBound] == range.upperBound,
                  let names = lockstepFacts.declarations[range.lowerBound], !names.isEmpty else { return nil }
            return names
        }
        let end = range.upperBound - 1
        guard isPunct(end, 59), tokens[range.lowerBound].kind == .identifier,
              !Self.statementWords.contains(text(range.lowerBound)) else { return nil }
        // The type: identifiers (and ::, *) up to the first name followed by = , ; or [
        var t = range.lowerBound
        while t < end, tokens[t].kind == .identifier || text(t) == "::" || isPunct(t, 42) {
            if tokens[t].kind == .identifier, t > range.lowerBound, isPunct(t + 1, 61) || isPunct(t + 1, 44)
                || isPunct(t + 1, 59) || isPunct(t + 1, 91) { break }
            t += 1
        }
        guard t < end, t > range.lowerBound, tokens[t].kind == .identifier else { return nil }
        if isPunct(t + 1, 61), isPunct(t + 2, 61) { return nil } // a == b;
        let pointer = (range.lowerBound..<t).contains { isPunct($0, 42) } // `float *p, q;`: only p is one
        var result: [LockstepAST.Facts.Declarator] = []
        var j = t
        while j < end {
            guard tokens[j].kind == .identifier else { return nil }
            let name = j
            var extents: [Int]? = nil
            j += 1
            if isPunct(j, 91) {
                // `[n]` with a literal n; anything else is an extent of unknown size
                extents = matching(j) == j + 2 ? Self.integerValue(text(j + 1)).map { [$0] } ?? [] : []
                j = matching(j) + 1
            }
            var value: Range<Int>? = nil
            if isPunct(j, 61) {
                guard !isPunct(j + 1, 123) else { return nil } // = { ... }
                let start = j + 1
                while j < end, !isPunct(j, 44) {
                    if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) }
                    else if isPunct(j, 60), tokens[j - 1].kind == .identifier, let close = templateClose(j, end) { j = close }
                    j += 1
                }
                guard start < j else { return nil }
                value = start..<j
            }
            guard extents == nil || value == nil else { return nil }
            result.append(LockstepAST.Facts.Declarator(name: name, extents: extents, value: value, reference: false, pointer: pointer))
            if isPunct(j, 44) { guard !pointer else { return nil }; j += 1; continue }
            guard j == end else { return nil }
        }
        return result
    }

    /// The `>` closing template arguments opened at `open` (`make_filled_simdgroup_matrix<float, 8, 8>(...)`),
    /// if one comes before `end` with nothing in between that a comparison would need.
    private func templateClose(_ open: Int, _ end: Int) -> Int? {
        var depth = 0, j = open
        while j < end {
            if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) + 1; continue }
            if isPunct(j, 59) || (isPunct(j, 38) && isPunct(j + 1, 38)) || (isPunct(j, 124) && isPunct(j + 1, 124)) { return nil }
            if isPunct(j, 60) { depth += 1 }
            if isPunct(j, 62) { depth -= 1; if depth == 0 { return j } }
            j += 1
        }
        return nil
    }

    /// A statement run once for the group: threadgroup storage (the front end made it a tg_var),
    /// typedef / using / static_assert / constexpr, and `const T n = e;` with e made of literals,
    /// operators and such constants only.
    private func uniformStatement(_ range: Range<Int>, _ state: LockstepState) -> Bool {
        let first = tokens[range.lowerBound].kind == .identifier ? text(range.lowerBound) : ""
        if first == "threadgroup" { return edited(range)?.contains("::pm::rt::tg_var<") ?? false }
        if ["constexpr", "typedef", "using", "static_assert"].contains(first) { return true }
        if lockstepFacts.covers(range) {
            // `[const] T a = e, b = f;`: each a local set from a uniform value that the body never changes
            guard let names = declarators(range), !names.isEmpty else { return false }
            return names.allSatisfy { d in
                guard d.extents == nil, !d.pointer, !d.reference, let value = d.value, let id = lockstepFacts.declared[d.name],
                      !(lockstepFacts.changed[id] ?? []).contains(where: { state.body.contains($0) }) else { return false }
                return astUniform(value, state)
            }
        }
        guard first == "const", let names = declarators(range),
              names.allSatisfy({ $0.extents == nil && $0.value != nil && !$0.pointer && !$0.reference }),
              !(range.lowerBound..<names[0].name).contains(where: { isPunct($0, 42) }) else { return false }
        return names.allSatisfy { d in
            d.value!.allSatisfy { t in
                tokens[t].kind == .number || (tokens[t].kind == .punctuation && !isPunct(t, 61) && !isPunct(t, 44))
                    || (tokens[t].kind == .identifier && (state.uniform.contains(text(t)) && !state.locals.contains(text(t))
                                                          || text(t) == "sizeof"))
            }
        }
    }

    /// Whether a statement that is not a plain expression declares a local (then it must be kept per thread).
    private func declaresSomething(_ range: Range<Int>) -> Bool {
        if text(range.lowerBound) == "::" { return true } // ::metal::float2 v = ...
        guard tokens[range.lowerBound].kind == .identifier else { return false }
        let first = text(range.lowerBound)
        if Self.statementWords.contains(first) || first == "if" { return false }
        if ["auto", "const", "struct", "static", "thread", "device", "volatile", "threadgroup", "constant",
            "decltype", "typename"].contains(first) { return true }
        // `T name ...` or `T<...> name`, `ns::T name`: a type followed by a name
        var t = range.lowerBound
        while t + 1 < range.upperBound, text(t + 1) == "::", tokens[t + 2].kind == .identifier { t += 2 }
        if isPunct(t + 1, 60) { return true } // T<...> (a comparison statement `a < b;` is pointless)
        // T name, T *name, T &name (but not `a *= b`, `a & b`)
        if isPunct(t + 1, 42) || isPunct(t + 1, 38) { return tokens[t + 2].kind == .identifier || isPunct(t + 2, 42) }
        return tokens[t + 1].kind == .identifier
    }

    static let statementWords: Set<String> = ["return", "for", "while", "do", "switch", "break", "continue", "else",
                                              "case", "default", "goto", "throw", "delete", "new", "sizeof"]

    /// Bytes of a scalar or vector MSL type (a pointer is 8), nil for others.
    static func lockstepSize(_ words: [String]) -> Int? {
        if words.contains("*") { return 8 }
        guard words.count >= 1 else { return nil }
        var name = words.joined(separator: " ")
        if name.hasPrefix("metal::") { name.removeFirst(7) }
        if name.hasPrefix("packed_") { name.removeFirst(7) }
        let scalars: [String: Int] = ["bool": 1, "char": 1, "uchar": 1, "int8_t": 1, "uint8_t": 1,
                                      "short": 2, "ushort": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "bfloat": 2,
                                      "int": 4, "uint": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4,
                                      "uint32_t": 4, "float": 4, "long": 8, "ulong": 8, "int64_t": 8, "uint64_t": 8,
                                      "size_t": 8, "ptrdiff_t": 8]
        if let size = scalars[name] { return size }
        // a simdgroup matrix: each thread holds two elements
        if let size = ["simdgroup_float8x8": 8, "simdgroup_half8x8": 4, "simdgroup_bfloat8x8": 4][name] { return size }
        guard let last = name.last, let n = Int(String(last)), [2, 3, 4].contains(n),
              let size = scalars[String(name.dropLast())] else { return nil }
        return size * (n == 3 ? 4 : n)
    }

    /// `for (T i = A; C; i += S) B` whose threads step through memory together: its index is
    /// A + k * S at step k when A and S do not change while it runs and B does not assign i.
    private func stridedLoop(_ range: Range<Int>, _ state: LockstepState) -> LockstepItem? {
        // a literal bound (j < 64: a few steps per thread) gains less than stepping across costs
        guard let parts = loopParts(range), let initial = parts.initial, let condition = parts.condition, let step = parts.step,
              strided(step) else { return nil }
        // init: T i = A
        guard let names = declarators(initial), names.count == 1, let start = names[0].value, names[0].extents == nil,
              !names[0].pointer, !names[0].reference, names[0].name > initial.lowerBound,
              (initial.lowerBound..<names[0].name).allSatisfy({ tokens[$0].kind == .identifier }) else { return nil }
        let type = initial.lowerBound..<names[0].name, name = text(names[0].name)
        // step: i += S
        guard step.count > 3, isWord(step.lowerBound, name), isPunct(step.lowerBound + 1, 43), isPunct(step.lowerBound + 2, 61)
        else { return nil }
        let stride = (step.lowerBound + 3)..<step.upperBound, body = parts.body
        guard !body.contains(where: { isWord($0, "break") }) else { return nil }
        if lockstepFacts.covers(range) {
            // the index (by its id: a nested scope's `i` is another variable) unchanged in the body, A and S invariant
            guard let id = lockstepFacts.declared[names[0].name], astInteger(names[0].name),
                  !type.contains(where: { isWord($0, "auto") }), // (the emitter spells the type: `(T)(k) * S`)
                  !(lockstepFacts.changed[id] ?? []).contains(where: { body.contains($0) }),
                  astInvariant(start, state), astInvariant(stride, state) else { return nil }
        } else {
            guard !assigned(name, in: body), type.allSatisfy({ Self.integerTypes.contains(text($0)) || text($0) == "const" }),
                  !aliased(name, in: body), invariant(start, state), invariant(stride, state) else { return nil }
        }
        // `for (j = lane; j < 64; j += 32)`: each lane of a simdgroup takes 64 / 32 steps
        var steps: Int? = nil
        if start.count == 1, let lane = state.positions[text(start.lowerBound)], lane == "thread_index_in_simdgroup",
           stride.count == 1, Self.integerValue(text(stride.lowerBound)) == 32, condition.count == 3,
           isWord(condition.lowerBound, name), isPunct(condition.lowerBound + 1, 60), let bound = Self.integerValue(text(condition.lowerBound + 2)),
           tokens[condition.lowerBound + 2].kind == .number, bound > 0, bound % 32 == 0 {
            steps = bound / 32
        }
        return .strided(type: type, name: name, start: start, condition: condition, step: stride, body: body, steps: steps)
    }

    /// The function or type named before the parentheses around argument token `t`, if any.
    private func callee(ofArgument t: Int) -> String? {
        var depth = 0, j = t - 1
        while j > 0 {
            if isPunct(j, 41) || isPunct(j, 93) { depth += 1 }
            else if isPunct(j, 40) || isPunct(j, 91) {
                guard depth == 0 else { depth -= 1; j -= 1; continue }
                guard isPunct(j, 40) else { return nil }
                var name = j - 1
                if isPunct(name, 62) { // f<...>(: a template (vector constructors are pm_make<T>(...) by now)
                    var angles = 0
                    while name > 0 {
                        if isPunct(name, 62) { angles += 1 } else if isPunct(name, 60) { angles -= 1; if angles == 0 { break } }
                        name -= 1
                    }
                    name -= 1
                }
                // a member function (obj.f(i)) is nobody's to vouch for
                guard tokens[name].kind == .identifier, !isPunct(name - 1, 46), text(name - 1) != "->" else { return nil }
                return text(name)
            } else if isPunct(j, 59) || isPunct(j, 123) || isPunct(j, 125) { return nil }
            j -= 1
        }
        return nil
    }

    /// Whether the token at `t` is a unary `&` (taking an address), not a binary one or half of `&&`.
    private func isAddressOf(_ t: Int) -> Bool {
        isPunct(t, 38) && !isPunct(t - 1, 38)
            && !(tokens[t - 1].kind == .identifier || tokens[t - 1].kind == .number || isPunct(t - 1, 41) || isPunct(t - 1, 93))
    }

    /// Whether `name` may change behind its back in `range`: handed as an argument or initialiser
    /// to anything but a vector constructor or an MSL function that takes values (a user function,
    /// a functor, a method or a reference may take it by reference), used as an operand of ?:
    /// (which may be such an argument), or bound to a reference (`T &r = name`).
    private func aliased(_ name: String, in range: Range<Int>) -> Bool {
        if lockstepFacts.covers(range) { return changed(name, in: range) }
        for t in range where isWord(t, name) && !isPunct(t - 1, 46) && text(t - 1) != "->" {
            // a whole argument or initialiser (not part of an expression, which is no lvalue)
            if isPunct(t - 1, 40) || isPunct(t - 1, 44) || isPunct(t - 1, 123),
               isPunct(t + 1, 41) || isPunct(t + 1, 44) || isPunct(t + 1, 125) {
                guard let callee = callee(ofArgument: t), Self.takesValues(callee) else { return true }
            }
            if isPunct(t - 1, 63) || isPunct(t - 1, 58) && !isPunct(t - 2, 58) { return true } // ? name, : name
            if isPunct(t - 1, 61), isPunct(t - 3, 38) { return true }
        }
        return false
    }

    /// Vector constructors and conversions, and MSL functions whose parameters are all values.
    static func takesValues(_ callee: String) -> Bool {
        callee == "pm_make" || lockstepSize([callee]) != nil || valueFunctions.contains(callee)
    }
    static let valueFunctions: Set<String> = [
        "min", "max", "clamp", "abs", "absdiff", "select", "popcount", "clz", "ctz", "mad", "mix", "fma", "fmin", "fmax",
        "sqrt", "rsqrt", "exp", "exp2", "log", "log2", "pow", "powr", "sin", "cos", "tan", "floor", "ceil", "round",
        "trunc", "fabs", "saturate", "sign", "as_type", "mulhi", "rotate", "extract_bits", "reverse_bits", "step",
        "simd_sum", "simd_max", "simd_min", "simd_shuffle", "simd_shuffle_down", "simd_shuffle_up", "simd_shuffle_xor",
        "simd_broadcast", "simd_broadcast_first", "simd_prefix_exclusive_sum", "simd_prefix_inclusive_sum"]

    /// An expression of literals, operators and names whose value no thread changes while the kernel runs.
    private func invariant(_ range: Range<Int>, _ state: LockstepState) -> Bool {
        range.allSatisfy { t in
            switch tokens[t].kind {
            case .number: return true
            case .identifier:
                return state.positions[text(t)] != nil || state.invariant.contains(text(t)) || isPunct(t - 1, 46)
            default:
                return [43, 45, 42, 47, 37, 60, 62, 38, 124, 94, 40, 41, 46].contains(src.bytes[tokens[t].start])
                    && tokens[t].end - tokens[t].start == 1
            }
        }
    }

    /// Whether `name` is assigned, incremented or has its address taken in `range`.
    func assigned(_ name: String, in range: Range<Int>) -> Bool {
        if lockstepFacts.covers(range) { return changed(name, in: range) }
        for t in range where isWord(t, name) && !isPunct(t - 1, 46) && text(t - 1) != "->" {
            // (name) is name: the tokens around the parentheses (`(j) += 1`, `++(j)`, `&(j)`)
            var (before, after) = (t - 1, t + 1)
            while isPunct(before, 40) { before -= 1 }
            while isPunct(after, 41) { after += 1 }
            if isPunct(after, 61) && !isPunct(after + 1, 61) { return true }                             // =
            // (`if (x) ++y;` increments y)
            if (isPunct(after, 43) && isPunct(after + 1, 43)) || (isPunct(after, 45) && isPunct(after + 1, 45)),
               after == t + 1 || !(tokens[after + 2].kind == .identifier || isPunct(after + 2, 40)) { return true }
            if (isPunct(before, 43) && isPunct(before - 1, 43)) || (isPunct(before, 45) && isPunct(before - 1, 45)) { return true }
            if isAddressOf(before) {
                return true // &name
            }
            for c: UInt8 in [43, 45, 42, 47, 37, 38, 124, 94] where isPunct(after, c) && isPunct(after + 1, 61) { return true }
            if (isPunct(after, 60) && isPunct(after + 1, 60) || isPunct(after, 62) && isPunct(after + 1, 62)) && isPunct(after + 2, 61) {
                return true
            }
            if isPunct(after, 46) || text(after) == "->" || isPunct(after, 91) { // a member or element of it
                var j = after
                while isPunct(j, 46) || text(j) == "->" || isPunct(j, 91) {
                    j = isPunct(j, 91) ? matching(j) + 1 : j + 2
                }
                if isPunct(j, 61) && !isPunct(j + 1, 61) { return true }
                for c: UInt8 in [43, 45, 42, 47, 37, 38, 124, 94] where isPunct(j, c) && isPunct(j + 1, 61) { return true }
            }
        }
        return false
    }

    /// Whether a use of `name` in `range` may change it, as clang's AST says (LockstepAST: assigned and aliased
    /// are one question there).
    private func changed(_ name: String, in range: Range<Int>) -> Bool {
        range.contains { lockstepFacts.changes[$0] == name }
    }

    /// A statement with one SIMD-group call: `[T] target = value;` or `call(...);`, whose value has no
    /// side effects (it runs twice).
    private func collective(_ range: Range<Int>, _ state: inout LockstepState, _ memo: inout [String: Bool]) -> LockstepItem? {
        guard tokens[range.lowerBound].kind == .identifier, !Self.statementWords.contains(text(range.lowerBound)),
              !["if", "while", "do", "for", "switch"].contains(text(range.lowerBound)) else { return nil }
        let calls = range.filter { tokens[$0].kind == .identifier && MSLAttributes.rendezvous.contains(text($0)) }
        guard calls.count == 1, let call = calls.first, text(call).hasPrefix("simd_") || text(call).hasPrefix("quad_"),
              isPunct(call + 1, 40) else { return nil }
        // no other function that meets other threads (clang's call graph: a local named like one is none)
        if lockstepFacts.covers(range) {
            guard !lockstepMeets(range.lowerBound..<call, &memo), !lockstepMeets((call + 1)..<range.upperBound, &memo) else { return nil }
        } else {
            for t in range where t != call && tokens[t].kind == .identifier && reachesRendezvous(text(t), &memo) { return nil }
        }
        let end = range.upperBound - 1
        guard isPunct(end, 59) else { return nil }
        var equals: Int? = nil
        var j = range.lowerBound
        while j < end {
            if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) + 1; continue }
            if isPunct(j, 61), !isComparison(j) {
                equals = j
                break
            }
            j += 1
        }
        let value = equals.map { ($0 + 1)..<end } ?? range.lowerBound..<end
        guard value.contains(call), pure(value) else { return nil }
        guard let equals else { return .collective(target: nil, local: nil, value: value, statement: range) }
        // a compound assignment (x += simd_sum(v)) would run twice
        guard ![43, 45, 42, 47, 37, 38, 124, 94, 60, 62].contains(where: { isPunct(equals - 1, $0) }) else { return nil }
        if let item = lockstepLocals(range, &state), case let .locals(locals, _) = item {
            guard locals.count == 1, locals[0].extent.isEmpty, !locals[0].reference else { return nil }
            return .collective(target: nil, local: locals[0], value: value, statement: range)
        }
        guard !declaresSomething(range) else { return nil }
        return .collective(target: range.lowerBound..<equals, local: nil, value: value, statement: range)
    }

    /// No assignment, increment or call of a user function in `range`.
    private func pure(_ range: Range<Int>) -> Bool {
        if lockstepFacts.covers(range) { return astPure(range) }
        for t in range {
            if isPunct(t, 61), !isComparison(t) { return false }
            if (isPunct(t, 43) && isPunct(t + 1, 43)) || (isPunct(t, 45) && isPunct(t + 1, 45)) { return false }
            // any user function (called, or as f<T>(...)) or lambda, and the atomics
            if tokens[t].kind == .identifier, definitions[text(t)] != nil || text(t).hasPrefix("atomic")
                || lockstepFacts.lambdas.values.contains(text(t)) { return false }
        }
        return true
    }

    /// Whether the `=` at `t` belongs to ==, !=, <= or >= (not to =, <<=, >>= or a compound assignment).
    private func isComparison(_ t: Int) -> Bool {
        if isPunct(t + 1, 61) || isPunct(t - 1, 61) || isPunct(t - 1, 33) { return true }
        if isPunct(t - 1, 60) { return !isPunct(t - 2, 60) }
        if isPunct(t - 1, 62) { return !isPunct(t - 2, 62) }
        return false
    }

    // MARK: - Emitting

    /// `scoped`: the items are a block of their own (their locals go out of scope after them).
    private func emit(_ items: [LockstepItem], mask: String, _ e: inout LockstepEmitter, scoped: Bool = true) -> String? {
        var out = ""
        if scoped { e.scopes.append([]) }
        defer { if scoped { e.scopes.removeLast() } }
        for item in items {
            switch item {
            case let .uniform(range):
                guard let text = edited(range) else { return nil }
                out += marker(range.lowerBound) + text
                // the group's own locals hide a thread's of the same name from here on (threadScope)
                for d in declarators(range) ?? [] {
                    e.scopes[e.scopes.count - 1].append(LockstepLocal(name: self.text(d.name), array: "", type: "", extent: ""))
                }
            case let .lane(range):
                guard let text = edited(range) else { return nil }
                out += statement(mask, marker(range.lowerBound) + text, e, uses: [range])
            case let .locals(locals, initialisers):
                // One declarator after the other: each initialiser sees the locals declared before it.
                for local in locals {
                    e.arrays += storage(local)
                    e.scopes[e.scopes.count - 1].append(local)
                    guard let value = initialisers.first(where: { $0.0 == local.name })?.1 else { continue }
                    if let fill = filledValue(value), local.type.hasPrefix("simdgroup_") {
                        // each thread fills its own elements, where the matrix's layout keeps them
                        guard let text = edited(fill) else { return nil }
                        out += lanes(mask, " ::metal::pm_sgm::ls_fill(::metal::pm_sgm::ls_at<\(e.rowMajor.contains(local.name))>"
                                     + "(&\(local.array)[__pm_l & ~31u]), __pm_l % 32u," + marker(fill.lowerBound) + text + ");",
                                     e, uses: [fill])
                        continue
                    }
                    guard let text = edited(value) else { return nil }
                    if local.reference { // the thread's pointer to what it is bound to
                        out += lanes(mask, " \(local.array)[__pm_l] = &(" + marker(value.lowerBound) + text + ");", e, uses: [value])
                        continue
                    }
                    out += lanes(mask, " \(local.name) =" + marker(value.lowerBound) + text + ";", e,
                                 uses: [value], names: [local.name])
                }
            case let .strided(type, name, start, condition, step, body, steps):
                guard let t = edited(type), let a = edited(start), let c = edited(condition), let s = edited(step),
                      let b = edited(body) else { return nil }
                let n = e.unique()
                func index(_ k: String) -> String {
                    "\(t) \(name) = (" + marker(start.lowerBound) + a + ") + (\(t))(\(k)) * (" + marker(step.lowerBound) + s + ");"
                }
                if let steps {
                    // The same steps for every thread: no thread's condition to ask.
                    let k = "__pm_k\(n)", statement = index(k) + marker(body.lowerBound) + b
                    out += " for (uint32_t \(k) = 0; \(k) < \(steps)u; ++\(k)) {"
                    out += self.statement(mask, statement, e, uses: [start, step, body]) + " }"
                    continue
                }
                let (run, k, going) = ("__pm_r\(n)", "__pm_k\(n)", "__pm_going\(n)")
                let header = [start, condition, step]
                // Which threads take step 0; then each step runs the body and finds who takes the next one.
                out += " { bool \(run)[::pm::rt::ls_max]; __builtin_memcpy(\(run), \(mask), sizeof \(run)); uint32_t \(going) = 0;"
                out += lanes(nil, "", e, uses: header, after: "bool __pm_c = false; if (\(run)[__pm_l]) { \(index("0u"))"
                             + marker(condition.lowerBound) + "__pm_c = (bool)(\(c)); } \(run)[__pm_l] = __pm_c; \(going) += __pm_c;",
                             vectorise: true)
                let next = "{ \(index(k + " + 1u")) " + marker(condition.lowerBound) + "\(run)[__pm_l] = (bool)(\(c)); } \(going) += \(run)[__pm_l];"
                let step = index(k) + marker(body.lowerBound) + b
                out += " for (uint32_t \(k) = 0; \(going) != 0; ++\(k)) { const bool __pm_all = \(going) == __pm_g.nthreads; \(going) = 0;"
                out += " if (__pm_all)" + lanes(nil, step, e, uses: header + [body], after: next, vectorise: true)
                out += " else" + lanes(run, step, e, uses: header + [body], after: next, vectorise: true) + " } }"
            case let .collective(target, local, value, statement):
                // Two passes over one copy of the statement: the first collects each lane's operands
                // (the SIMD-group call returns a placeholder), the second assigns the results.
                guard let v = edited(value) else { return nil }
                var assign = ""
                if let local {
                    e.arrays += storage(local)
                    e.scopes[e.scopes.count - 1].append(local)
                    assign = " \(local.name) ="
                } else if let target {
                    guard let t = edited(target) else { return nil }
                    assign = marker(target.lowerBound) + t + " ="
                }
                let body = assign.isEmpty ? marker(value.lowerBound) + v + ";"
                    : "auto &&__pm_v =" + marker(value.lowerBound) + v + "; if (__pm_p)" + assign + " static_cast<decltype(__pm_v) &&>(__pm_v);"
                out += " ::pm::rt::ls_collect(__pm_w); for (int __pm_p = 0; __pm_p < 2; ++__pm_p) {"
                out += " if (__pm_p && ::pm::rt::ls_complete(__pm_w)) return;"
                out += lanes(mask, body, e, uses: [statement], setsLane: true)
                out += " } ::pm::rt::ls_done(__pm_w);"
            case let .barrier(range, group):
                // between statements every thread has reached it; what is left to do is to
                // report threads that cannot (they returned, or wait elsewhere), as fibers do
                out += " if (" + marker(range.lowerBound) + "::pm::rt::ls_barrier(__pm_w, \(mask), __pm_m0, \(group))) return;\n"
            case let .leave(condition):
                guard let c = edited(condition) else { return nil }
                out += lanes(mask, "", e, uses: [condition], after: "if (" + marker(condition.lowerBound) + c + ") \(mask)[__pm_l] = false;")
                e.full.remove(mask)
            case let .loop(initial, condition, step, body):
                guard let c = edited(condition), let st = edited(step) else { return nil }
                let n = e.unique()
                let going = "__pm_m\(n)"
                e.scopes.append([])
                defer { e.scopes.removeLast() }
                guard let start = emit(initial, mask: mask, &e, scoped: false) else { return nil }
                out += " {" + start + " bool \(going)[::pm::rt::ls_max]; __builtin_memcpy(\(going), \(mask), sizeof \(going)); for (;;) {"
                out += lanes(going, "", e, uses: [condition],
                             after: "\(going)[__pm_l] = (bool)(" + marker(condition.lowerBound) + c + ");")
                out += " if (!::pm::rt::ls_any(\(going), __pm_g)) break;"
                guard let b = emit(body, mask: going, &e) else { return nil }
                out += b + lanes(going, marker(step.lowerBound) + st + ";", e, uses: [step]) + " } }"
            case let .uniformLoop(index, header, body):
                // Threads that left take no steps: when none is left, neither does the group. The
                // index is the group's (it hides a thread's local of that name: no array).
                e.scopes.append([LockstepLocal(name: index, array: "", type: "", extent: "")])
                defer { e.scopes.removeLast() }
                guard let h = edited(header), let b = emit(body, mask: mask, &e) else { return nil }
                let any = e.full.contains(mask) ? "" : " if (::pm::rt::ls_any(\(mask), __pm_g))"
                out += any + marker(header.lowerBound) + h + " {" + b + " }"
            case let .matrix(name, arguments):
                // Once per simdgroup, with the first active lane's values; the matrices are the
                // simdgroup's 32 consecutive elements of their per-thread arrays.
                let count = Self.matrixOperands[name]!
                var call = "::metal::pm_sgm::ls_\(name.dropFirst(10))(__pm_lanes"
                for argument in arguments.prefix(count) {
                    let name = text(argument.lowerBound)
                    guard let local = e.scopes.reversed().joined().first(where: { $0.name == name }),
                          local.extent.isEmpty, !local.array.isEmpty else { return nil }
                    call += ", ::metal::pm_sgm::ls_at<\(e.rowMajor.contains(name))>(&\(local.array)[__pm_s * 32u])"
                }
                for argument in arguments.dropFirst(count) {
                    guard let a = edited(argument) else { return nil }
                    call += ", " + a
                }
                out += " for (uint32_t __pm_s = 0; __pm_s * 32u < __pm_g.nthreads; ++__pm_s) {"
                out += " const uint32_t __pm_lanes = ::pm::rt::ls_lanes(\(mask), __pm_s); if (!__pm_lanes) continue;"
                out += " const uint32_t __pm_i = (uint32_t)__builtin_ctz(__pm_lanes), __pm_l = __pm_s * 32u + __pm_i, __pm_x = __pm_l % __pm_g.size.x,"
                out += " __pm_y = __pm_l / __pm_g.size.x % __pm_g.size.y, __pm_z = __pm_l / (__pm_g.size.x * __pm_g.size.y);"
                out += threadScope(Array(arguments.dropFirst(count)), e, copy: false).prologue
                out += marker(arguments[0].lowerBound) + call + ");\n }"
            case let .branch(condition, then, otherwise):
                let n = e.unique()
                let taken = "__pm_m\(n)"
                e.branches.insert(taken)
                out += " { bool \(taken)[::pm::rt::ls_max] = {};"
                if condition.isEmpty {
                    out += " __builtin_memcpy(\(taken), \(mask), sizeof \(taken));"
                } else {
                    guard let c = edited(condition) else { return nil }
                    out += lanes(mask, "\(taken)[__pm_l] = (bool)(" + marker(condition.lowerBound) + c + ");", e, uses: [condition])
                }
                guard let t = emit(then, mask: taken, &e) else { return nil }
                out += " if (::pm::rt::ls_any(\(taken), __pm_g)) {" + t + " }"
                if let otherwise {
                    guard let o = emit(otherwise, mask: taken, &e) else { return nil }
                    out += lanes(mask, "\(taken)[__pm_l] = !\(taken)[__pm_l];", e, uses: [])
                    out += " if (::pm::rt::ls_any(\(taken), __pm_g)) {" + o + " }"
                }
                out += " }"
            }
        }
        return out
    }

    /// A user's statement for the threads in `mask`: under a mask that may have lost threads, twice,
    /// the first copy for when every thread takes part, as plain vector code (no masked stores,
    /// slow on some CPUs and a stall for the loads after them).
    private func statement(_ mask: String, _ body: String, _ e: LockstepEmitter, uses: [Range<Int>]) -> String {
        let all = e.twice(mask) ? " if (::pm::rt::ls_full(\(mask), __pm_g))" + lanes(nil, body, e, uses: uses, vectorise: true) + " else" : ""
        return all + lanes(mask, body, e, uses: uses, vectorise: true)
    }

    /// A loop over the group's threads (x innermost) running `body` for those set in `mask` (nil: all),
    /// with each thread's position values and per-thread locals in scope.
    /// `vectorise`: whether the loop is worth clang's vectoriser (the user's statements and the
    /// steps of a strided loop are; a local's initialisation, a mask or a SIMD-group statement's
    /// passes run once and only cost compile time).
    private func lanes(_ mask: String?, _ body: String, _ e: LockstepEmitter, uses: [Range<Int>],
                       names more: [String] = [], after: String = "", vectorise: Bool = false, setsLane: Bool = false) -> String {
        let mask = mask.flatMap { e.full.contains($0) ? nil : $0 }
        let setsLane = setsLane || asksLane(uses)
        let hint = !vectorise ? "\n#pragma clang loop vectorize(disable) interleave(disable)\n"
            : setsLane ? "" : "\n#pragma clang loop vectorize(assume_safety)\n"
        var names = Set(more)
        for range in uses { for t in range where tokens[t].kind == .identifier { names.insert(text(t)) } }
        let simd: Set<String> = ["thread_index_in_simdgroup", "simdgroup_index_in_threadgroup"]
        let bySimdgroup = e.positions.contains { names.contains($0.0) && simd.contains($0.1) }
        // One thread's turn: its position values and locals, then the statement.
        var thread = bySimdgroup
            ? " const uint32_t __pm_l = __pm_s * 32u + __pm_i, __pm_x = __pm_x0 + (__pm_i - __pm_i0), __pm_y = __pm_y0, __pm_z = __pm_z0;"
            : " const uint32_t __pm_i = __pm_l % 32u, __pm_s = __pm_l / 32u;"
        if let mask { thread += " if (!\(mask)[__pm_l]) continue;" }
        let scope = threadScope(uses, e, names: more, copy: true)  // (names again: threadScope is shared)
        thread += scope.prologue
        // The runtime's view of which thread runs: for SIMD-group calls, and for what reads it
        // (a simdgroup matrix's constructor, its per-lane loads and stores), also through user functions.
        if setsLane { thread += " ::pm::rt::ls_lane(__pm_w, __pm_l);" }
        // do/while (0): a `continue` that ended a loop iteration ends this thread's turn here.
        thread += (body.isEmpty ? "" : " do {" + body + "\n } while (0);") + after + scope.writeBack + " }"
        guard bySimdgroup else {
            var out = " for (uint32_t __pm_z = 0; __pm_z < __pm_g.size.z; ++__pm_z)"
            out += " for (uint32_t __pm_y = 0; __pm_y < __pm_g.size.y; ++__pm_y)"
            out += hint + " for (uint32_t __pm_x = 0, __pm_l = (__pm_z * __pm_g.size.y + __pm_y) * __pm_g.size.x;"
            return out + " __pm_x < __pm_g.size.x; ++__pm_x, ++__pm_l) {" + thread
        }
        // Simdgroup by simdgroup, each cut where it crosses a row of the group: within a piece
        // x, the lane and the linear index step together (the vectoriser sees them as such)
        // and y, z and the simdgroup are fixed.
        var out = " for (uint32_t __pm_s = 0, __pm_x0 = 0, __pm_y0 = 0, __pm_z0 = 0; __pm_s * 32u < __pm_g.nthreads; ++__pm_s)"
        out += " for (uint32_t __pm_i0 = 0, __pm_n = __pm_g.nthreads - __pm_s * 32u < 32u ? __pm_g.nthreads - __pm_s * 32u : 32u;"
        out += " __pm_i0 < __pm_n;) { const uint32_t __pm_i1 = __pm_n - __pm_i0 < __pm_g.size.x - __pm_x0 ? __pm_n : __pm_i0 + __pm_g.size.x - __pm_x0;"
        let byConstant = uses.contains { $0.contains { (isPunct($0, 47) || isPunct($0, 37)) && tokens[$0 + 1].kind == .number } }
        if mask == nil && vectorise && !setsLane && byConstant {
            // A whole simdgroup's lanes in 4 runs of 8 known at compile time, where the statement
            // divides by a constant: an address like x[(k + lane / 8) * n + lane % 8] is then 8
            // neighbouring elements (one vector load; 8 addresses to gather in the loop over 32,
            // which is the better form otherwise).
            out += " if (__pm_i1 - __pm_i0 == 32u) for (uint32_t __pm_h = 0; __pm_h < 32u; __pm_h += 8u)"
            out += " for (uint32_t __pm_i = __pm_h; __pm_i < __pm_h + 8u; ++__pm_i) {" + thread + " else"
        }
        out += hint + " for (uint32_t __pm_i = __pm_i0; __pm_i < __pm_i1; ++__pm_i) {" + thread
        out += " __pm_x0 += __pm_i1 - __pm_i0; if (__pm_x0 == __pm_g.size.x) { __pm_x0 = 0; if (++__pm_y0 == __pm_g.size.y) { __pm_y0 = 0; ++__pm_z0; } }"
        return out + " __pm_i0 = __pm_i1; }"
    }

    /// A thread's position values and locals, for the names used in `uses` (and `more`): its
    /// locals are copied in (and back out by `writeBack`) when `copy`, unless they are arrays or
    /// their address is taken, else used in place.
    private func threadScope(_ uses: [Range<Int>], _ e: LockstepEmitter, names more: [String] = [],
                             copy: Bool) -> (prologue: String, writeBack: String) {
        var names = Set(more)
        for range in uses { for t in range where tokens[t].kind == .identifier { names.insert(text(t)) } }
        var out = ""
        for (name, attribute) in e.positions where names.contains(name) {
            out += " [[maybe_unused]] __pm_t_\(name) \(name) = ::pm::rt::ls_pos<::pm::rt::attr::\(attribute), __pm_t_\(name)>"
                + "(__pm_g, __pm_x, __pm_y, __pm_z, __pm_l, __pm_i, __pm_s);"
        }
        var seen: Set<String> = []
        var back = ""
        for local in e.scopes.reversed().joined() where names.contains(local.name) && !seen.contains(local.name) {
            seen.insert(local.name)
            if local.array.isEmpty { continue } // a group-wide loop's index, in scope as it is
            if local.reference {
                out += " [[maybe_unused]] auto &\(local.name) = *\(local.array)[__pm_l];"
                continue
            }
            if copy && local.extent.isEmpty && !e.addressTaken.contains(local.name) {
                out += " [[maybe_unused]] auto \(local.name) = \(local.array)[__pm_l];"
                back += " \(local.array)[__pm_l] = \(local.name);"
            } else {
                out += " [[maybe_unused]] auto &\(local.name) = \(local.array)[__pm_l];"
            }
        }
        return (out, back)
    }

    /// The argument of `make_filled_simdgroup_matrix<...>(v)` when `value` is that call.
    private func filledValue(_ value: Range<Int>) -> Range<Int>? {
        guard isWord(value.lowerBound, "make_filled_simdgroup_matrix") else { return nil }
        var open = value.lowerBound + 1
        if isPunct(open, 60), let close = templateClose(open, value.upperBound) { open = close + 1 }
        guard isPunct(open, 40), matching(open) == value.upperBound - 1, open + 1 < value.upperBound - 1 else { return nil }
        return (open + 1)..<(value.upperBound - 1)
    }

    /// A local's per-thread array, from the worker's arena (not the stack: a group of 1024
    /// threads would need up to 512 KiB of it, more than a Python thread may have).
    private func storage(_ local: LockstepLocal) -> String {
        " \(local.type) (*\(local.array))\(local.extent) = (\(local.type) (*)\(local.extent))"
            + "::pm::rt::ls_alloc(__pm_w, sizeof(\(local.type)\(local.extent)));"
    }

    /// Whether code in `uses` reads which thread runs (a simdgroup matrix's constructor, its
    /// per-lane loads and stores), also through user functions.
    private func asksLane(_ uses: [Range<Int>]) -> Bool {
        var memo: [String: Bool] = [:]
        return uses.contains { $0.contains { tokens[$0].kind == .identifier && asksLane(text($0), &memo) } }
    }

    /// Whether `name` is a simdgroup-matrix name, or a user function or type that (transitively) uses one.
    private func asksLane(_ name: String, _ memo: inout [String: Bool]) -> Bool {
        if name.hasPrefix("simdgroup_") { return true }
        if let known = memo[name] { return known }
        guard let bodies = definitions[name] else { return false }
        memo[name] = false
        let result = bodies.contains { $0.contains { tokens[$0].kind == .identifier && asksLane(text($0), &memo) } }
        memo[name] = result
        return result
    }

    /// A line marker putting what follows on token `t`'s line.
    private func marker(_ t: Int) -> String {
        let token = tokens[min(t, tokens.count - 1)]
        let file = src.files[Int(token.file)].name.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
        return "\n# \(token.line) \"\(file)\"\n" + String(repeating: " ", count: max(0, Int(token.column) - 1))
    }

    /// The text of tokens `range` with the edits made inside it; nil if an edit crosses its ends.
    private func edited(_ range: Range<Int>) -> String? {
        guard !range.isEmpty else { return "" }
        let bytes = tokens[range.lowerBound].start..<tokens[range.upperBound - 1].end
        var inside: [(offset: Int, element: (range: Range<Int>, replacement: String))] = []
        for (offset, edit) in edits.enumerated() {
            let r = edit.range
            if r.upperBound <= bytes.lowerBound && !(r.isEmpty && r.lowerBound == bytes.lowerBound) { continue }
            if r.lowerBound >= bytes.upperBound { continue }
            guard r.lowerBound >= bytes.lowerBound, r.upperBound <= bytes.upperBound else { return nil }
            inside.append((offset, edit))
        }
        return applyEdits(bytes, inside)
    }
}
