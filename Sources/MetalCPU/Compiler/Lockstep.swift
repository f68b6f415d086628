// SIMD lockstep: a kernel that meets other threads (SIMD-group functions,
// barriers) is rewritten, when its body has a shape the rewrite understands,
// so that one call runs a whole threadgroup statement by statement
// (PM_KERNEL_LOCKSTEP; runtime.h, "LOCKSTEP mode", shows the execution):
//
//   - each statement of the body becomes a loop over the group's threads
//     (x innermost) that runs it with the thread's position values;
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
// Anything else (a `return`, a loop or `switch` around a SIMD-group call,
// simdgroup matrices, templates, locals of unknown size, ...) keeps the kernel
// in FIBERS mode, unchanged. Every copied statement is preceded by a line
// marker, so clang's diagnostics keep the user's lines.

extension FrontEnd {
    /// A local declared at the body's level, kept per thread.
    struct LockstepLocal {
        let name: String
        let array: String   // its per-thread array
        let type: String    // element type, without const
        let extent: String  // "" or "[4]"
    }

    indirect enum LockstepItem {
        case uniform(Range<Int>)   // as it is, once: threadgroup storage, constexpr, typedef, using
        case lane(Range<Int>)      // a statement every thread runs
        case strided(type: Range<Int>, name: String, start: Range<Int>, condition: Range<Int>, step: Range<Int>,
                     body: Range<Int>)
        case locals([LockstepLocal], initialisers: [(String, Range<Int>)])
        case collective(target: Range<Int>?, local: LockstepLocal?, value: Range<Int>, statement: Range<Int>)
        case barrier
        case branch(condition: Range<Int>, then: [LockstepItem], otherwise: [LockstepItem]?)
    }

    /// Rewrites kernel `index` for LOCKSTEP mode if its body allows; returns whether it did.
    func makeLockstep(_ index: Int) -> Bool {
        guard !validation, kernelRoots[index]?.isEmpty ?? true, let body = kernelBodies[index],
              !kernels[index].function.contains("<") else { return false }
        let open = body.lowerBound - 1, close = body.upperBound // the body's tokens are those inside its braces
        guard isPunct(open, 123), isPunct(close, 125) else { return false }
        // A thread that leaves early, or jumps, does not fit statement-by-statement execution.
        for t in body where tokens[t].kind == .identifier {
            if ["return", "goto", "co_return", "co_await", "co_yield", "asm", "__asm__"].contains(text(t)) { return false }
        }
        let positions = kernels[index].bindings.compactMap { binding -> (String, String)? in
            if case let .position(attribute) = binding.kind { return (binding.name, attribute) }
            return nil
        }
        guard positions.allSatisfy({ !$0.0.isEmpty && !assigned($0.0, in: body) }) else { return false }
        var state = LockstepState(positionNames: Set(positions.map(\.0)),
                                  invariant: Set(kernels[index].bindings.filter { !$0.pointer }.map(\.name)))
        guard let items = lockstepBlock((open + 1)..<close, &state), state.bytesPerThread <= 512 else { return false }

        var out = "\n::pm::rt::worker *const __pm_w = ::pm::rt::tls_w; const ::pm::rt::group __pm_g = ::pm::rt::ls_group();"
        out += " bool __pm_m0[::pm::rt::ls_max]; ::pm::rt::ls_all(__pm_m0, __pm_g);"
        for (name, _) in positions { out += " typedef decltype(\(name)) __pm_t_\(name);" }
        var taken: Set<String> = []
        for t in body where isPunct(t, 38) && tokens[t + 1].kind == .identifier
            && !(tokens[t - 1].kind == .identifier || tokens[t - 1].kind == .number || isPunct(t - 1, 41) || isPunct(t - 1, 93)) {
            taken.insert(text(t + 1))
        }
        var emitter = LockstepEmitter(positions: positions, addressTaken: taken)
        guard let text = emit(items, mask: "__pm_m0", &emitter) else { return false }
        out += text + marker(close)
        // The statements' own edits are in the copies now.
        let bytes = tokens[open].end..<tokens[close].start
        edits.removeAll { bytes.contains($0.range.lowerBound) || ($0.range.isEmpty && $0.range.lowerBound == bytes.upperBound) }
        edits.append((bytes, out))
        fiberBodies.remove(body)
        return true
    }

    struct LockstepState {
        let positionNames: Set<String>
        var invariant: Set<String>   // names whose value no thread changes while the kernel runs
        var bytesPerThread = 0
        var counter = 0
    }

    struct LockstepEmitter {
        let positions: [(String, String)]
        let addressTaken: Set<String>   // locals whose address the body takes: used in place, never copied
        var scopes: [[LockstepLocal]] = [[]]
        var counter = 0
        mutating func unique() -> Int { counter += 1; return counter }
    }

    // MARK: - Parsing the body

    private func lockstepBlock(_ range: Range<Int>, _ state: inout LockstepState) -> [LockstepItem]? {
        var items: [LockstepItem] = []
        var memo: [String: Bool] = [:]
        var s = range.lowerBound
        while s < range.upperBound {
            let e = statementExtent(s)
            guard e <= range.upperBound else { return nil }
            defer { s = e }
            if isPunct(s, 59) { continue } // ;
            let meets = meetsOthers(s..<e, &memo)
            if isPunct(s, 123) {
                guard meets else { items.append(.lane(s..<e)); continue }
                guard let inner = lockstepBlock((s + 1)..<(e - 1), &state) else { return nil }
                items.append(.branch(condition: s..<s, then: inner, otherwise: nil)) // a block: runs where the mask says
                continue
            }
            let first = tokens[s].kind == .identifier ? text(s) : ""
            if first == "threadgroup" || first == "constexpr" || first == "typedef" || first == "using"
                || first == "static_assert" {
                guard !meets else { return nil }
                items.append(.uniform(s..<e))
                continue
            }
            if first == "if", isPunct(s + 1, 40) {
                let conditionEnd = matching(s + 1)
                guard meets else { items.append(.lane(s..<e)); continue }
                guard !meetsOthers((s + 2)..<conditionEnd, &memo) else { return nil }
                let thenEnd = statementExtent(conditionEnd + 1)
                guard let then = lockstepStatement((conditionEnd + 1)..<thenEnd, &state) else { return nil }
                var otherwise: [LockstepItem]? = nil
                if thenEnd < e {
                    guard let items = lockstepStatement((thenEnd + 1)..<e, &state) else { return nil }
                    otherwise = items
                }
                items.append(.branch(condition: (s + 2)..<conditionEnd, then: then, otherwise: otherwise))
                continue
            }
            if !meets {
                if let item = lockstepLocals(s..<e, &state) { items.append(item); continue }
                if declaresSomething(s..<e) { return nil } // a local of a shape not kept per thread
                items.append(stridedLoop(s..<e, state) ?? .lane(s..<e))
                continue
            }
            if first == "threadgroup_barrier" || first == "simdgroup_barrier", isPunct(s + 1, 40),
               matching(s + 1) + 2 == e {
                items.append(.barrier)
                continue
            }
            guard let item = collective(s..<e, &state, &memo) else { return nil }
            items.append(item)
        }
        return items
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

    /// `T a = x, b[4];` at the body's level, with T of a known size: kept per thread.
    private func lockstepLocals(_ range: Range<Int>, _ state: inout LockstepState) -> LockstepItem? {
        guard let names = declarators(range) else { return nil }
        var words: [String] = []
        for t in range.lowerBound..<names[0].name {
            guard tokens[t].kind == .identifier || isPunct(t, 42) || text(t) == "::" else { return nil }
            switch text(t) {
            case "device", "thread", "threadgroup": continue // address spaces are gone in C++
            case "constant": words.append("const")
            default: words.append(text(t))
            }
        }
        // The array's elements are assigned: no const of their own (a pointer may point at const).
        let star = words.lastIndex(of: "*") ?? -1
        words = words.enumerated().filter { $0.offset < star || !["const", "volatile"].contains($0.element) }.map(\.element)
        guard let size = Self.lockstepSize(words) else { return nil }
        var locals: [LockstepLocal] = []
        var initialisers: [(String, Range<Int>)] = []
        for d in names {
            let name = text(d.name)
            guard !state.positionNames.contains(name) else { return nil }
            var extent = "", count = 1
            if let open = d.extent {
                guard let n = Self.integerValue(text(open + 1)), matching(open) == open + 2 else { return nil }
                extent = "[\(n)]"
                count = n
            }
            state.counter += 1
            state.bytesPerThread += size * count
            state.invariant.remove(name)
            locals.append(LockstepLocal(name: name, array: "__pm_h\(state.counter)_\(name)",
                                        type: words.joined(separator: " ").replacing(" :: ", with: "::"), extent: extent))
            if let value = d.value { initialisers.append((name, value)) }
        }
        return .locals(locals, initialisers: initialisers)
    }

    /// The declarators of `T a = x, b[4], c;`: each name, its `[n]` and its initialiser;
    /// nil when the statement is not such a declaration.
    private func declarators(_ range: Range<Int>) -> [(name: Int, extent: Int?, value: Range<Int>?)]? {
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
        var result: [(name: Int, extent: Int?, value: Range<Int>?)] = []
        var j = t
        while j < end {
            guard tokens[j].kind == .identifier else { return nil }
            let name = j
            var extent: Int? = nil
            j += 1
            if isPunct(j, 91) { extent = j; j = matching(j) + 1 }
            var value: Range<Int>? = nil
            if isPunct(j, 61) {
                guard !isPunct(j + 1, 123) else { return nil } // = { ... }
                let start = j + 1
                while j < end, !isPunct(j, 44) {
                    if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) }
                    j += 1
                }
                guard start < j else { return nil }
                value = start..<j
            }
            guard extent == nil || value == nil else { return nil }
            result.append((name, extent, value))
            if isPunct(j, 44) { j += 1; continue }
            guard j == end else { return nil }
        }
        return result
    }

    /// Whether a statement that is not a plain expression declares a local (then it must be kept per thread).
    private func declaresSomething(_ range: Range<Int>) -> Bool {
        guard tokens[range.lowerBound].kind == .identifier else { return false }
        let first = text(range.lowerBound)
        if Self.statementWords.contains(first) || first == "if" { return false }
        if ["auto", "const", "struct", "static", "thread", "device", "volatile"].contains(first) { return true }
        // `T name ...` or `T<...> name`, `ns::T name`: a type followed by a name
        var t = range.lowerBound
        while t + 1 < range.upperBound, text(t + 1) == "::", tokens[t + 2].kind == .identifier { t += 2 }
        if isPunct(t + 1, 60) { return true } // T<...> (a comparison statement `a < b;` is pointless)
        return tokens[t + 1].kind == .identifier || isPunct(t + 1, 42) || isPunct(t + 1, 38)
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
        guard let last = name.last, let n = Int(String(last)), [2, 3, 4].contains(n),
              let size = scalars[String(name.dropLast())] else { return nil }
        return size * (n == 3 ? 4 : n)
    }

    /// `for (T i = A; C; i += S) B` whose threads step through memory together: its index is
    /// A + k * S at step k when A and S do not change while it runs and B does not assign i.
    private func stridedLoop(_ range: Range<Int>, _ state: LockstepState) -> LockstepItem? {
        let s = range.lowerBound
        guard isWord(s, "for"), isPunct(s + 1, 40) else { return nil }
        let close = matching(s + 1)
        var semicolons: [Int] = []
        var j = s + 2
        while j < close {
            if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) + 1; continue }
            if isPunct(j, 59) { semicolons.append(j) }
            j += 1
        }
        guard semicolons.count == 2, strided((semicolons[1] + 1)..<close) else { return nil }
        // init: T i = A
        guard let equals = ((s + 2)..<semicolons[0]).first(where: { isPunct($0, 61) }), equals > s + 3,
              tokens[equals - 1].kind == .identifier,
              ((s + 2)..<(equals - 1)).allSatisfy({ tokens[$0].kind == .identifier }) else { return nil }
        let name = text(equals - 1)
        // step: i += S
        let step = semicolons[1] + 1
        guard isWord(step, name), isPunct(step + 1, 43), isPunct(step + 2, 61), step + 3 < close else { return nil }
        let body = (close + 1)..<range.upperBound
        let condition = (semicolons[0] + 1)..<semicolons[1]
        guard !condition.isEmpty, !assigned(name, in: body),
              !body.contains(where: { isWord($0, "break") }),
              invariant((equals + 1)..<semicolons[0], state), invariant((step + 3)..<close, state) else { return nil }
        return .strided(type: (s + 2)..<(equals - 1), name: name, start: (equals + 1)..<semicolons[0],
                        condition: condition, step: (step + 3)..<close, body: body)
    }

    /// An expression of literals, operators and names whose value no thread changes while the kernel runs.
    private func invariant(_ range: Range<Int>, _ state: LockstepState) -> Bool {
        range.allSatisfy { t in
            switch tokens[t].kind {
            case .number: return true
            case .identifier:
                return state.positionNames.contains(text(t)) || state.invariant.contains(text(t)) || isPunct(t - 1, 46)
            default:
                return [43, 45, 42, 47, 37, 60, 62, 38, 124, 94, 40, 41, 46].contains(src.bytes[tokens[t].start])
                    && tokens[t].end - tokens[t].start == 1
            }
        }
    }

    /// Whether `name` is assigned, incremented or has its address taken in `range`.
    func assigned(_ name: String, in range: Range<Int>) -> Bool {
        for t in range where isWord(t, name) && !isPunct(t - 1, 46) && text(t - 1) != "->" {
            if isPunct(t + 1, 61) && !isPunct(t + 2, 61) { return true }                             // =
            if (isPunct(t + 1, 43) && isPunct(t + 2, 43)) || (isPunct(t + 1, 45) && isPunct(t + 2, 45)) { return true }
            if (isPunct(t - 1, 43) && isPunct(t - 2, 43)) || (isPunct(t - 1, 45) && isPunct(t - 2, 45)) { return true }
            if isPunct(t - 1, 38) && !(tokens[t - 2].kind == .identifier || isPunct(t - 2, 41) || isPunct(t - 2, 93)) {
                return true // &name
            }
            for c: UInt8 in [43, 45, 42, 47, 37, 38, 124, 94] where isPunct(t + 1, c) && isPunct(t + 2, 61) { return true }
            if (isPunct(t + 1, 60) && isPunct(t + 2, 60) || isPunct(t + 1, 62) && isPunct(t + 2, 62)) && isPunct(t + 3, 61) {
                return true
            }
            if isPunct(t + 1, 46) || text(t + 1) == "->" || isPunct(t + 1, 91) { // a member or element of it
                var j = t + 1
                while isPunct(j, 46) || text(j) == "->" || isPunct(j, 91) {
                    j = isPunct(j, 91) ? matching(j) + 1 : j + 2
                }
                if isPunct(j, 61) && !isPunct(j + 1, 61) { return true }
                for c: UInt8 in [43, 45, 42, 47, 37, 38, 124, 94] where isPunct(j, c) && isPunct(j + 1, 61) { return true }
            }
        }
        return false
    }

    /// A statement with one SIMD-group call: `[T] target = value;` or `call(...);`, whose value has no
    /// side effects (it runs twice).
    private func collective(_ range: Range<Int>, _ state: inout LockstepState, _ memo: inout [String: Bool]) -> LockstepItem? {
        let calls = range.filter { tokens[$0].kind == .identifier && MSLAttributes.rendezvous.contains(text($0)) }
        guard calls.count == 1, let call = calls.first, text(call).hasPrefix("simd_") || text(call).hasPrefix("quad_"),
              isPunct(call + 1, 40) else { return nil }
        // no other function that meets other threads
        for t in range where t != call && tokens[t].kind == .identifier && reachesRendezvous(text(t), &memo) { return nil }
        let end = range.upperBound - 1
        guard isPunct(end, 59) else { return nil }
        var equals: Int? = nil
        var j = range.lowerBound
        while j < end {
            if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) + 1; continue }
            if isPunct(j, 61), !isPunct(j + 1, 61), !isPunct(j - 1, 61), !isPunct(j - 1, 60), !isPunct(j - 1, 62),
               !isPunct(j - 1, 33) {
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
            guard locals.count == 1, locals[0].extent.isEmpty else { return nil }
            return .collective(target: nil, local: locals[0], value: value, statement: range)
        }
        guard !declaresSomething(range) else { return nil }
        return .collective(target: range.lowerBound..<equals, local: nil, value: value, statement: range)
    }

    /// No assignment, increment or call of a user function in `range`.
    private func pure(_ range: Range<Int>) -> Bool {
        for t in range {
            if isPunct(t, 61), !isPunct(t + 1, 61), !isPunct(t - 1, 61), !isPunct(t - 1, 60), !isPunct(t - 1, 62),
               !isPunct(t - 1, 33) { return false }
            if (isPunct(t, 43) && isPunct(t + 1, 43)) || (isPunct(t, 45) && isPunct(t + 1, 45)) { return false }
            if tokens[t].kind == .identifier, isPunct(t + 1, 40),
               definitions[text(t)] != nil || text(t).hasPrefix("atomic") { return false }
        }
        return true
    }

    // MARK: - Emitting

    private func emit(_ items: [LockstepItem], mask: String, _ e: inout LockstepEmitter) -> String? {
        var out = ""
        e.scopes.append([])
        defer { e.scopes.removeLast() }
        for item in items {
            switch item {
            case let .uniform(range):
                guard let text = edited(range) else { return nil }
                out += marker(range.lowerBound) + text
            case let .lane(range):
                guard let text = edited(range) else { return nil }
                out += lanes(mask, marker(range.lowerBound) + text, e, uses: [range])
            case let .locals(locals, initialisers):
                for local in locals { out += " \(local.type) \(local.array)[::pm::rt::ls_max]\(local.extent);" }
                e.scopes[e.scopes.count - 1].append(contentsOf: locals)
                guard !initialisers.isEmpty else { continue }
                var assignments: [String] = []
                for (name, value) in initialisers {
                    guard let text = edited(value) else { return nil }
                    assignments.append("\(name) = \(text)")
                }
                out += lanes(mask, marker(initialisers[0].1.lowerBound) + assignments.joined(separator: ", ") + ";", e,
                             uses: initialisers.map(\.1), names: locals.map(\.name))
            case let .strided(type, name, start, condition, step, body):
                guard let t = edited(type), let a = edited(start), let c = edited(condition), let s = edited(step),
                      let b = edited(body) else { return nil }
                let n = e.unique()
                func index(_ k: String) -> String { "\(t) \(name) = (\(a)) + (\(t))(\(k)) * (\(s));" }
                let (run, k, going) = ("__pm_r\(n)", "__pm_k\(n)", "__pm_going\(n)")
                let header = [start, condition, step]
                // Which threads take step 0; then each step runs the body and finds who takes the next one.
                out += " { bool \(run)[::pm::rt::ls_max]; __builtin_memcpy(\(run), \(mask), sizeof \(run)); uint32_t \(going) = 0;"
                out += lanes(nil, "", e, uses: header, after: "bool __pm_c = false; if (\(run)[__pm_l]) { \(index("0u"))"
                             + marker(condition.lowerBound) + "__pm_c = (bool)(\(c)); } \(run)[__pm_l] = __pm_c; \(going) += __pm_c;")
                let next = "{ \(index(k + " + 1u")) " + marker(condition.lowerBound) + "\(run)[__pm_l] = (bool)(\(c)); } \(going) += \(run)[__pm_l];"
                let step = index(k) + marker(body.lowerBound) + b
                out += " for (uint32_t \(k) = 0; \(going) != 0; ++\(k)) { const bool __pm_all = \(going) == __pm_g.nthreads; \(going) = 0;"
                out += " if (__pm_all)" + lanes(nil, step, e, uses: header + [body], after: next)
                out += " else" + lanes(run, step, e, uses: header + [body], after: next) + " } }"
            case let .collective(target, local, value, statement):
                guard let v = edited(value) else { return nil }
                var deliver = ""
                if let local {
                    out += " \(local.type) \(local.array)[::pm::rt::ls_max];"
                    e.scopes[e.scopes.count - 1].append(local)
                    deliver = "\(local.name) = \(v);"
                } else if let target {
                    guard let t = edited(target) else { return nil }
                    deliver = "\(t) = \(v);"
                }
                let line = marker(statement.lowerBound)
                out += " ::pm::rt::ls_collect(__pm_w);"
                out += lanes(mask, "::pm::rt::ls_lane(__pm_w, __pm_l);" + line + "(void)(\(v));", e, uses: [value])
                out += " ::pm::rt::ls_complete(__pm_w);"
                out += lanes(mask, "::pm::rt::ls_lane(__pm_w, __pm_l);" + line + deliver, e, uses: [statement])
                out += " ::pm::rt::ls_done(__pm_w);"
            case .barrier:
                continue
            case let .branch(condition, then, otherwise):
                let n = e.unique()
                let taken = "__pm_m\(n)"
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

    /// A loop over the group's threads (x innermost) running `body` for those set in `mask` (nil: all),
    /// with each thread's position values and per-thread locals in scope.
    private func lanes(_ mask: String?, _ body: String, _ e: LockstepEmitter, uses: [Range<Int>],
                       names more: [String] = [], after: String = "") -> String {
        var names = Set(more)
        for range in uses { for t in range where tokens[t].kind == .identifier { names.insert(text(t)) } }
        var out = " for (uint32_t __pm_z = 0; __pm_z < __pm_g.size.z; ++__pm_z)"
        out += " for (uint32_t __pm_y = 0; __pm_y < __pm_g.size.y; ++__pm_y)"
        out += " for (uint32_t __pm_x = 0, __pm_l = (__pm_z * __pm_g.size.y + __pm_y) * __pm_g.size.x;"
        out += " __pm_x < __pm_g.size.x; ++__pm_x, ++__pm_l) {"
        if let mask { out += " if (!\(mask)[__pm_l]) continue;" }
        for (name, attribute) in e.positions where names.contains(name) {
            out += " [[maybe_unused]] __pm_t_\(name) \(name) = ::pm::rt::ls_pos<::pm::rt::attr::\(attribute), __pm_t_\(name)>"
                + "(__pm_g, __pm_x, __pm_y, __pm_z, __pm_l);"
        }
        // Locals are copied in and back out (the compiler then keeps them in registers and turns a
        // conditional assignment into a select), unless they are arrays or their address is taken.
        var seen: Set<String> = []
        var back = ""
        for local in e.scopes.reversed().joined() where names.contains(local.name) && !seen.contains(local.name) {
            seen.insert(local.name)
            if local.extent.isEmpty && !e.addressTaken.contains(local.name) {
                out += " [[maybe_unused]] auto \(local.name) = \(local.array)[__pm_l];"
                back += " \(local.array)[__pm_l] = \(local.name);"
            } else {
                out += " [[maybe_unused]] auto &\(local.name) = \(local.array)[__pm_l];"
            }
        }
        // do/while (0): a `continue` that ended a loop iteration ends this thread's turn here.
        return out + (body.isEmpty ? "" : " do {" + body + "\n } while (0);") + after + back + " }"
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
        inside.sort {
            ($0.element.range.lowerBound, $0.element.range.isEmpty ? 0 : 1, $0.offset)
                < ($1.element.range.lowerBound, $1.element.range.isEmpty ? 0 : 1, $1.offset)
        }
        var out: [UInt8] = []
        var position = bytes.lowerBound
        for (_, edit) in inside {
            guard edit.range.lowerBound >= position else { continue }
            out.append(contentsOf: src.bytes[position..<edit.range.lowerBound])
            out.append(contentsOf: Array(edit.replacement.utf8))
            position = edit.range.upperBound
        }
        out.append(contentsOf: src.bytes[position..<bytes.upperBound])
        return String(decoding: out, as: UTF8.self)
    }
}
