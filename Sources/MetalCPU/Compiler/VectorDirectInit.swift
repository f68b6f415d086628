// Direct-initialisation of a vector in a declaration, `short2 offset(a, b);` (MLX's reduce_col.h,
// steel_conv.h): Metal's vector constructors are functions, so the declaration builds the vector from
// its components, while a clang ext vector takes exactly one value in parentheses ("excess elements in
// scalar initializer"). In a block the declarator becomes `offset = ::metal::pm_construct<short2>(a, b)`
// (types.h), which builds it as `short2(a, b)` does. Only block scope: at namespace or class scope
// `float4 f(float4 x);` declares a function, and so does a parameter list in a block, which is left.
extension FrontEnd {
    func rewriteVectorDirectInitialisations() {
        var blocks: [Bool] = []   // per open `{`: whether it opens a block (a function body or statement)
        var i = 0
        while i < tokens.count {
            defer { i += 1 }
            if isPunct(i, 123) { blocks.append(opensBlock(i)); continue }
            if isPunct(i, 125) { _ = blocks.popLast(); continue }
            guard blocks.last == true, tokens[i].kind == .identifier, Self.vectorTypes.contains(text(i)),
                  !src.files[Int(tokens[i].file)].isSystem, startsDeclaration(i) else { continue }
            let type = text(i)
            var name = i + 1
            // each declarator `name(args)`: `int2 a(0, r), b(0, c);`
            while name + 1 < tokens.count, tokens[name].kind == .identifier, isPunct(name + 1, 40),
                  !looksLikeParameters(name + 1) {
                let close = matching(name + 1)
                guard isPunct(close + 1, 59) || isPunct(close + 1, 44) else { break }
                let at = tokens[name + 1].start
                edits.append((at..<at, " = ::metal::pm_construct<::metal::\(type)>"))
                guard isPunct(close + 1, 44) else { break }
                name = close + 2
            }
        }
    }

    /// Whether the `{` at `open` opens a block: after `)` (a function body, `if (c) {`, a lambda),
    /// after a statement, a label, `else`/`do`, or a member function's qualifiers; not a class,
    /// namespace or enum body, nor a braced initialiser.
    private func opensBlock(_ open: Int) -> Bool {
        let before = open - 1
        guard before >= 0 else { return false }
        if isPunct(before, 41) || isPunct(before, 59) || isPunct(before, 123) || isPunct(before, 125)
            || isPunct(before, 58) || isPunct(before, 93) {
            return true
        }
        return tokens[before].kind == .identifier
            && ["else", "do", "try", "const", "noexcept", "mutable", "thread", "threadgroup", "device", "constant"]
                .contains(text(before))
    }

    /// Whether the vector type at `i` starts a declaration statement: after `;`, `{` or `}`,
    /// with only `const`, `constexpr`, `static` and `thread` (and `metal::`) before it.
    private func startsDeclaration(_ i: Int) -> Bool {
        var j = i - 1
        while j >= 0 {
            if j >= 1, text(j) == "::", text(j - 1) == "metal" { j -= 2; continue }
            if tokens[j].kind == .identifier, ["const", "constexpr", "static", "thread"].contains(text(j)) { j -= 1; continue }
            break
        }
        return j < 0 || isPunct(j, 59) || isPunct(j, 123) || isPunct(j, 125)
    }

    /// Whether the parentheses at `open` hold a parameter list (`float4 f(float a);`, `float4 g();`,
    /// `int2 h(MyType t)`) rather than values.
    private func looksLikeParameters(_ open: Int) -> Bool {
        let first = open + 1, second = open + 2
        guard first < tokens.count, !isPunct(first, 41) else { return true }
        guard tokens[first].kind == .identifier else { return false }
        let word = text(first)
        if ["const", "volatile", "device", "thread", "threadgroup", "constant", "typename", "unsigned", "signed",
            "struct", "class", "void"].contains(word) { return true }
        if second < tokens.count, tokens[second].kind == .identifier { return true }  // `T name`
        let scalar = ["bool", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float",
                      "bfloat", "size_t"].contains(word) || Self.vectorTypes.contains(word)
        return scalar && (isPunct(second, 42) || isPunct(second, 38) || isPunct(second, 44) || isPunct(second, 41)
                          || isPunct(second, 91))
    }
}
