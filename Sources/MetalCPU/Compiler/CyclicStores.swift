// clang 20 to 22 (the toolchain's is 21) miscompile a loop that stores through an index cycling with the
// loop counter into memory the compiler cannot keep in registers: `t[j % 4] += x[j]` into a threadgroup
// array, a device buffer, or a thread's array that lockstep or the fibers keep in memory. The loop
// vectorizer widens the store as if the index grew with the counter: it writes past the array and the
// sums come out wrong, silently (LLVM issues 191382 and 215690, fixed in clang 23). A kernel cannot avoid
// it, so the front end turns the vectorizer off for such loops: every loop of the user's code whose body
// stores through a subscript and uses `%` or a binary `&` (`t[j & 3]`, `q = j % 4; t[q] += v` too) gets
// `_Pragma("clang loop vectorize(disable)")`, an operator rather than a #pragma line so that no line
// moves. Loops without both stay vectorised: the cost is only where the bug could be.
extension FrontEnd {
    static let noVectorize = "_Pragma(\"clang loop vectorize(disable)\") "

    func guardCyclicStores() {
        for i in tokens.indices where tokens[i].kind == .identifier && !src.files[Int(tokens[i].file)].isSystem {
            let word = text(i)
            guard word == "for" || word == "while" || word == "do", let body = loopBody(i),
                  storesThroughSubscript(body), usesRemainderOrMask(body) else { continue }
            let at = tokens[i].start
            edits.append((at..<at, Self.noVectorize))
        }
    }

    /// The tokens of the loop statement's body at keyword `i` (`for (...) body`, `while (...) body`, `do body`).
    private func loopBody(_ i: Int) -> Range<Int>? {
        var start = i + 1
        if text(i) != "do" {
            guard isPunct(start, 40) else { return nil }
            start = matching(start) + 1
        }
        guard start < tokens.count else { return nil }
        if isPunct(start, 123) { return start..<(matching(start) + 1) }
        var j = start  // a statement: to its `;` (a braced block inside it ends it, or its `else` goes on)
        while j < tokens.count, !isPunct(j, 59) {
            if isPunct(j, 40) || isPunct(j, 91) { j = matching(j) + 1; continue }
            if isPunct(j, 123) {
                j = matching(j)
                if j + 1 < tokens.count, tokens[j + 1].kind == .identifier, text(j + 1) == "else" { j += 2; continue }
                break
            }
            j += 1
        }
        return start..<min(j + 1, tokens.count)
    }

    /// Whether `body` assigns to, or increments, a subscripted element: `a[k] = `, `a[k] += `, `a[k]++`.
    private func storesThroughSubscript(_ body: Range<Int>) -> Bool {
        body.contains { k in
            guard isPunct(k, 93), k + 1 < body.upperBound else { return false }
            if isPunct(k + 1, 61) { return !isPunct(k + 2, 61) }                          // `] =`, not `] ==`
            if isPunct(k + 1, 43) && isPunct(k + 2, 43) || isPunct(k + 1, 45) && isPunct(k + 2, 45) { return true }
            if [43, 45, 42, 47, 37, 38, 124, 94].contains(where: { isPunct(k + 1, $0) }) { return isPunct(k + 2, 61) }
            return (isPunct(k + 1, 60) && isPunct(k + 2, 60) || isPunct(k + 1, 62) && isPunct(k + 2, 62))
                && isPunct(k + 3, 61)                                                      // `<<=`, `>>=`
        }
    }

    /// Whether `body` takes a remainder or a binary bitwise and (an index that cycles: `j % 4`, `j & 3`).
    private func usesRemainderOrMask(_ body: Range<Int>) -> Bool {
        body.contains { k in
            if isPunct(k, 37) { return true }
            guard isPunct(k, 38), !isPunct(k + 1, 38), !isPunct(k - 1, 38), k > body.lowerBound else { return false }
            // binary `&` follows an operand (`j & 3`, `(j + 1) & 3`, `a[i] & m`); a unary one, an operator
            return [.identifier, .number].contains(tokens[k - 1].kind) || isPunct(k - 1, 41) || isPunct(k - 1, 93)
        }
    }
}
