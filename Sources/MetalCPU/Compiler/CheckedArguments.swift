// Validation builds: a checked pointer or threadgroup array passed whole to a function template. A
// kernel's buffer and threadgroup pointer parameters are a class there (`::pm::rt::vptr`,
// checkedPointer), and so are its threadgroup arrays (`tg_view`, storageDeclaration), from which a
// template parameter cannot be deduced (`T` of `const device T* x` or of `device T*& y`, MLX's
// fp_quantized.h `adjust_matrix_offsets(x, w, scales, y, ...)`; `threadgroup T* xs` given an array,
// its `gemm_loop_aligned(Xs, Ws, ...)`), and a `T*&` cannot bind one even when `T` is given. So in a
// kernel's body such an argument, passed to a function template the source declares, becomes
// `::pm::rt::vref(x)` (runtime_validation.h): the checked pointer's own `T*` lvalue, the array
// itself, so the callee deduces what Metal deduces, and advancing a pointer through the reference
// advances the checked one (its bounds stay). Accesses inside the callee are not checked, as for any
// function that takes a plain pointer; calls of other functions convert as before.
extension FrontEnd {
    func rewriteCheckedPointerArguments() {
        guard validation, !kernelBodies.isEmpty else { return }
        let templates = functionTemplateNames()
        guard !templates.isEmpty else { return }
        // the names of checked parameters and of threadgroup arrays (checked views)
        let checked = Set(checkedTypes.values.map { text($0.end + 1) }).union(checkedArrays)
        var done: Set<Int> = [] // a template kernel's body serves all its instantiations
        for body in kernelBodies.values where done.insert(body.lowerBound).inserted {
            // a bare name between `(`/`,` and `,`/`)` directly inside such a call
            var stack: [Bool] = []
            for i in body {
                if tokens[i].kind == .punctuation {
                    if isPunct(i, 40) || isPunct(i, 91) || isPunct(i, 123) {
                        stack.append(isPunct(i, 40) && callee(before: i).map { templates.contains($0) } == true)
                    } else if isPunct(i, 41) || isPunct(i, 93) || isPunct(i, 125) {
                        _ = stack.popLast()
                    }
                    continue
                }
                guard tokens[i].kind == .identifier, stack.last == true, checked.contains(text(i)),
                      isPunct(i - 1, 40) || isPunct(i - 1, 44), isPunct(i + 1, 41) || isPunct(i + 1, 44) else { continue }
                wrap(tokens[i].start, tokens[i].end, in: "::pm::rt::vref")
            }
        }
    }

    /// The source bytes `start..<end` become `function(...)` in the compiled text (the AST reads them as written).
    func wrap(_ start: Int, _ end: Int, in function: String) {
        edits.append((start..<start, function + "("))
        compileOnly.insert(start..<start)
        edits.append((end..<end, ")"))
        compileOnly.insert(end..<end)
    }

    /// The name called by the `(` at `open`: `f(`, `f<T>(`, `obj.f(`, `ns::f<T, 2>(`; nil for a
    /// keyword (`if (`, `sizeof (`) or anything that is no name.
    private func callee(before open: Int) -> String? {
        var j = open - 1
        if isPunct(j, 62) { // skip back over `<...>`
            var depth = 0
            while j >= 0 {
                if isPunct(j, 62) { depth += 1 } else if isPunct(j, 60) { depth -= 1; if depth == 0 { break } }
                else if isPunct(j, 59) || isPunct(j, 123) || isPunct(j, 125) { return nil }
                j -= 1
            }
            j -= 1
        }
        guard j >= 0, tokens[j].kind == .identifier else { return nil }
        let name = text(j)
        return ["if", "for", "while", "switch", "return", "sizeof", "alignof", "decltype"].contains(name) ? nil : name
    }

    /// Names of the function templates the user's files declare (members too): `template <...>`,
    /// then a declaration whose first `(` at its own level follows a name.
    private func functionTemplateNames() -> Set<String> {
        var names: Set<String> = []
        for i in tokens.indices where tokens[i].kind == .identifier && text(i) == "template" && isPunct(i + 1, 60)
            && !src.files[Int(tokens[i].file)].isSystem {
            var depth = 0, j = i + 1
            while j < tokens.count { // the template's parameter list
                if isPunct(j, 60) { depth += 1 } else if isPunct(j, 62) { depth -= 1; if depth == 0 { break } }
                else if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) }
                j += 1
            }
            j += 1
            while j < tokens.count, !isPunct(j, 59), !isPunct(j, 123), !isPunct(j, 61) {
                if isPunct(j, 91) { j = matching(j) + 1; continue } // attributes
                if isPunct(j, 40) {
                    // not a name's `(`: `decltype(auto) f(`, `__attribute__((...)) f(` (METAL_FUNC)
                    guard let name = callee(before: j), !name.hasPrefix("__"), name != "alignas" else {
                        j = matching(j) + 1
                        continue
                    }
                    names.insert(name)
                    break
                }
                j += 1
            }
        }
        return names
    }
}

// Validation builds: `reinterpret_cast<const device vec<T, 4>*>(a + i)` (MLX's dot.h) of a checked
// pointer, a class, which no reinterpret_cast takes. In a kernel's body the operand becomes
// `::pm::rt::vref(...)`: a checked pointer's own `T*` lvalue (the cast gives a plain pointer, as a
// C-style cast of a checked pointer does), a threadgroup array's array; anything else as it was.
extension FrontEnd {
    func rewriteCheckedReinterpretCasts() {
        guard validation else { return }
        var done: Set<Int> = []
        for body in kernelBodies.values where done.insert(body.lowerBound).inserted {
            for i in body where tokens[i].kind == .identifier && text(i) == "reinterpret_cast" && isPunct(i + 1, 60) {
                var depth = 0, j = i + 1 // past the `<...>`
                while j < body.upperBound {
                    if isPunct(j, 60) { depth += 1 } else if isPunct(j, 62) { depth -= 1; if depth == 0 { break } }
                    else if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) }
                    j += 1
                }
                guard isPunct(j + 1, 40) else { continue }
                wrap(tokens[j + 1].end, tokens[matching(j + 1)].start, in: "::pm::rt::vref")
            }
        }
    }
}

// Validation builds: a helper function (not a kernel) that takes a pointer sees a plain one, to
// which a checked pointer converts at the call (MLX's gemv: `GEMVKernel::run(..., device T*
// out_vec, ...)` writes `out_vec[out_row + tm]`). In its body, `p[i]` on such a parameter becomes
// `::pm::rt::vsub(p)[i]` (runtime_validation.h): checked against the array the pointer points
// into when that array left a checked pointer (the conversion records it), unchecked otherwise.
// Left as written: `&p[i]` (an address one past the end is allowed), `x.p[i]`, declarations.
extension FrontEnd {
    func rewriteHelperSubscripts() {
        guard validation else { return }
        let notNames: Set<String> = ["if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "decltype",
                                     "static_assert", "alignas", "__attribute__", "defined"]
        let trailing: Set<String> = ["const", "volatile", "thread", "device", "constant", "threadgroup", "noexcept",
                                     "override", "final"]
        let kernelStarts = Set(kernelBodies.values.map { $0.lowerBound })
        var wrapped: Set<Int> = []
        for open in tokens.indices where isPunct(open, 40) && open > 0 && !src.files[Int(tokens[open].file)].isSystem {
            // a function's parameter list: `name(` or `name<...>(`, then `)`, qualifiers, `{` or `: inits {`
            guard tokens[open - 1].kind == .identifier ? !notNames.contains(text(open - 1)) : isPunct(open - 1, 62)
            else { continue }
            let close = matching(open)
            var j = close + 1
            while j < tokens.count {
                if tokens[j].kind == .identifier, trailing.contains(text(j)) { j += 1 }
                else if isPunct(j, 91), isPunct(j + 1, 91) { j = matching(j) + 1 }
                else { break }
            }
            guard let bodyOpen = functionBody(at: j), !kernelStarts.contains(bodyOpen + 1) else { continue }
            let names = pointerParameters(open, close)
            guard !names.isEmpty else { continue }
            for k in (bodyOpen + 1)..<matching(bodyOpen) where tokens[k].kind == .identifier && names.contains(text(k))
                && isPunct(k + 1, 91) && !isPunct(k + 2, 91) && !wrapped.contains(k) {
                let before = k > 0 ? text(k - 1) : ""
                guard tokens[k - 1].kind != .identifier || ["return", "case", "else", "do"].contains(before),
                      ![".", "->", "::", "&"].contains(before) else { continue }
                wrapped.insert(k)
                wrap(tokens[k].start, tokens[k].end, in: "::pm::rt::vsub")
            }
        }
    }

    /// The `{` of the body that starts at `j` (after a parameter list and its qualifiers): `{`, or a
    /// constructor's `: a(x), b{y} {`. Nil for anything else (a call, a prototype, `= default`).
    private func functionBody(at j: Int) -> Int? {
        if isPunct(j, 123) { return j }
        guard isPunct(j, 58), !isPunct(j + 1, 58) else { return nil }
        var k = j + 1
        while k < tokens.count, !isPunct(k, 59) {
            if isPunct(k, 40) { k = matching(k) + 1; continue }
            if isPunct(k, 123) {
                // a member's braced initializer (`b{y}`) is followed by `,` or the body's `{`
                let after = matching(k) + 1
                if tokens[k - 1].kind == .identifier || isPunct(k - 1, 62), isPunct(after, 44) || isPunct(after, 123) {
                    k = after
                    continue
                }
                return k
            }
            k += 1
        }
        return nil
    }

    /// The `(`, `[` or `{` that the bracket at `close` closes (searching back to `floor`).
    private func opening(_ close: Int, after floor: Int) -> Int {
        var depth = 0, m = close
        while m > floor {
            if isPunct(m, 41) || isPunct(m, 93) || isPunct(m, 125) { depth += 1 }
            else if isPunct(m, 40) || isPunct(m, 91) || isPunct(m, 123) { depth -= 1; if depth == 0 { return m } }
            m -= 1
        }
        return floor
    }

    /// The names of the parameters declared `... * name` (attributes after it allowed) between `open` and `close`.
    private func pointerParameters(_ open: Int, _ close: Int) -> Set<String> {
        var names: Set<String> = []
        var start = open + 1
        var k = open + 1
        while k <= close {
            if k < close, isPunct(k, 40) || isPunct(k, 91) || isPunct(k, 123) { k = matching(k) + 1; continue }
            if k < close, isPunct(k, 60), k > start, tokens[k - 1].kind == .identifier { // template arguments
                var depth = 0, m = k
                while m < close {
                    if isPunct(m, 60) { depth += 1 } else if isPunct(m, 62) { depth -= 1; if depth == 0 { break } }
                    else if isPunct(m, 40) || isPunct(m, 91) { m = matching(m) }
                    m += 1
                }
                k = m + 1
                continue
            }
            if k == close || isPunct(k, 44) { // one parameter: [start, k)
                var last = k - 1
                while last > start, isPunct(last, 93), isPunct(last - 1, 93) { last = opening(last, after: start) - 1 } // `[[...]]`
                if last > start, tokens[last].kind == .identifier {
                    var star = last - 1
                    while star > start, tokens[star].kind == .identifier, ["const", "volatile", "restrict", "__restrict"].contains(text(star)) {
                        star -= 1
                    }
                    if isPunct(star, 42) { names.insert(text(last)) }
                }
                start = k + 1
            }
            k += 1
        }
        return names
    }
}

// Validation builds: `&p[i]` on a checked pointer parameter in a kernel's body becomes
// `::pm::rt::vaddr(p, i)` (runtime_validation.h): the element's address without an access, so that
// the address one past the end, which C++ allows (`device float *end = &a[n];`), is not reported and
// is the real one (through operator[] it was an out-of-bounds access, whose scratch memory became the
// loop's end). Left as written, so checked as an access of the element: `&p[i]` as a call's argument
// (an atomic's `&counts[b]` is about to be accessed: one past the end is an error there), `&p[i][j]`,
// `&p[i].m`, `&p[i]->m`; and a binary `x & p[i]`.
extension FrontEnd {
    func rewriteCheckedAddresses() {
        guard validation, !kernelBodies.isEmpty else { return }
        let checked = Set(checkedTypes.values.map { text($0.end + 1) })
        guard !checked.isEmpty else { return }
        var done: Set<Int> = []
        for body in kernelBodies.values where done.insert(body.lowerBound).inserted {
            for i in body where isPunct(i, 38) && tokens[i + 1].kind == .identifier && checked.contains(text(i + 1))
                && isPunct(i + 2, 91) {
                // unary: after an operator or an opening, not after an operand
                guard tokens[i - 1].kind == .punctuation ? !(isPunct(i - 1, 41) || isPunct(i - 1, 93))
                        : tokens[i - 1].kind == .identifier && ["return", "case"].contains(text(i - 1)) else { continue }
                // an argument (`atomic_fetch_add_explicit(&counts[b], ...)`, `f(x, &a[i])`) is about to be
                // accessed through: it stays an access, checked as one
                guard !isPunct(i - 1, 44), !(isPunct(i - 1, 40) && (isPunct(i - 2, 62) || tokens[i - 2].kind == .identifier
                        && !["if", "while", "for", "switch", "return"].contains(text(i - 2)))) else { continue }
                let close = matching(i + 2)
                guard close < body.upperBound, !isPunct(close + 1, 91), !isPunct(close + 1, 46),
                      !(close + 1 < tokens.count && text(close + 1) == "->") else { continue }
                for (at, replacement) in [(i, "::pm::rt::vaddr("), (i + 2, ", "), (close, ")")] {
                    edits.append((tokens[at].start..<tokens[at].end, replacement))
                    compileOnly.insert(tokens[at].start..<tokens[at].end)
                }
            }
        }
    }
}

// Validation builds: Metal's atomic functions are templates over `atomic<T> *`, from which a checked
// pointer (a class) deduces nothing: ggml's `atomic_fetch_add_explicit(dst, total, ...)` on a
// `device atomic_int *dst` parameter. In a kernel's body the first argument of an `atomic_*` call
// becomes `::pm::rt::vatom(...)` (runtime_validation.h): a checked pointer's element, as an access
// checked where it points, else the argument as written.
extension FrontEnd {
    func rewriteCheckedAtomicArguments() {
        guard validation, !checkedTypes.isEmpty else { return }
        var done: Set<Int> = []
        for body in kernelBodies.values where done.insert(body.lowerBound).inserted {
            for i in body where tokens[i].kind == .identifier && text(i).hasPrefix("atomic_") && isPunct(i + 1, 40)
                && !isPunct(i - 1, 46) && !(i > 0 && text(i - 1) == "->") {
                let close = matching(i + 1)
                var end = i + 2 // the first argument: up to a `,` at its own level
                while end < close && !isPunct(end, 44) {
                    end = isPunct(end, 40) || isPunct(end, 91) || isPunct(end, 123) ? matching(end) + 1 : end + 1
                }
                guard end > i + 2 else { continue }
                wrap(tokens[i + 2].start, tokens[end - 1].end, in: "::pm::rt::vatom")
            }
        }
    }
}
