// Direct-initialisation of a vector in a declaration, `short2 offset(a, b);` (MLX's reduce_col.h,
// steel_conv.h): Metal's vector constructors are functions, so the declaration builds the vector from
// its components, while a clang ext vector takes exactly one value in parentheses ("excess elements in
// scalar initializer"). In a block the declarator becomes `offset = ::metal::pm_construct<short2>(a, b)`
// (types.h), which builds it as `short2(a, b)` does. In a block, and at namespace scope where the values
// are literals (`constant half3 luma(0.299, 0.587, 0.114);`, Apple's samples): there `float4 f(float4 x);`
// declares a function, and so does a parameter list in a block, which is left.
extension FrontEnd {
    func rewriteVectorDirectInitialisations() {
        var blocks: [Bool] = []   // per open `{`: whether it opens a block (a function body or statement)
        var namespaceDepth = 0    // how many of the open `{` from the outermost are namespace bodies
        var i = 0
        while i < tokens.count {
            defer { i += 1 }
            if isPunct(i, 123) {
                if namespaceDepth == blocks.count, opensNamespace(i) { namespaceDepth += 1 }
                blocks.append(opensBlock(i))
                continue
            }
            if isPunct(i, 125) { _ = blocks.popLast(); namespaceDepth = min(namespaceDepth, blocks.count); continue }
            let atNamespaceScope = namespaceDepth == blocks.count
            guard blocks.last == true || atNamespaceScope, tokens[i].kind == .identifier, Self.vectorTypes.contains(text(i)),
                  !src.files[Int(tokens[i].file)].isSystem, startsDeclaration(i) else { continue }
            let type = text(i)
            var name = i + 1
            // each declarator `name(args)`: `int2 a(0, r), b(0, c);`
            while name + 1 < tokens.count, tokens[name].kind == .identifier, isPunct(name + 1, 40),
                  atNamespaceScope ? holdsLiteralsOnly(name + 1) : !looksLikeParameters(name + 1) {
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

    /// Whether the `{` at `open` opens a namespace body (`namespace n {`, `namespace {`, `extern "C" {`).
    private func opensNamespace(_ open: Int) -> Bool {
        var j = open - 1
        while j >= 2, tokens[j].kind == .identifier, text(j - 1) == "::" { j -= 2 } // namespace a::b {
        if j >= 0, tokens[j].kind == .identifier, text(j) == "namespace" { return true }
        if j >= 1, tokens[j].kind == .identifier, text(j - 1) == "namespace" { return true }
        return open >= 2 && tokens[open - 1].kind == .string && text(open - 2) == "extern"
    }

    /// Whether the parentheses at `open` hold numbers alone (with signs, arithmetic and commas): values, never
    /// a parameter list.
    private func holdsLiteralsOnly(_ open: Int) -> Bool {
        let close = matching(open)
        guard close > open + 1 else { return false }
        return ((open + 1)..<close).allSatisfy { tokens[$0].kind == .number || tokens[$0].kind == .punctuation }
    }

    /// Whether the vector type at `i` starts a declaration statement: after `;`, `{` or `}`,
    /// with only `const`, `constexpr`, `static`, `thread` and `constant` (and `metal::`) before it.
    private func startsDeclaration(_ i: Int) -> Bool {
        var j = i - 1
        while j >= 0 {
            if j >= 1, text(j) == "::", text(j - 1) == "metal" { j -= 2; continue }
            if tokens[j].kind == .identifier, ["const", "constexpr", "static", "thread", "constant"].contains(text(j)) { j -= 1; continue }
            break
        }
        // or after a directive line (`#include <metal_stdlib>` kept by -dI, `#pragma unroll`): one token (Lexer)
        return j < 0 || isPunct(j, 59) || isPunct(j, 123) || isPunct(j, 125)
            || (tokens[j].kind == .punctuation && src.bytes[tokens[j].start] == 35)
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
