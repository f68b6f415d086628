// Functions a source declares, calls and never defines. Xcode compiles every .metal file of a target
// and links them into one library, so a shader may call a function another file defines (a shared
// `half gauss(half, half);` in a header, defined in functions.metal). pymetal compiles one source:
// such a call would fail when the library loads, naming a mangled symbol. Said at compile time instead,
// with how to give pymetal the definition.
extension FrontEnd {
    /// A namespace-scope declaration [start, end] without a body whose parentheses at `paren` follow its
    /// name: a function prototype to check (checkExternalFunctions), unless it binds a builtin (`__asm`),
    /// is `extern`, deleted or defaulted, a typedef, friend or operator.
    func notePrototype(_ start: Int, _ end: Int, paren: Int) {
        guard paren > start, tokens[paren - 1].kind == .identifier, isUser(start) else { return }
        let excluded: Set<String> = ["asm", "__asm", "__asm__", "extern", "typedef", "using", "friend", "operator",
                                     "template", "static_assert", "decltype"]
        let close = matching(paren)
        guard close <= end, !(start...end).contains(where: { tokens[$0].kind == .identifier && excluded.contains(text($0)) }),
              !((close + 1)...max(close + 1, end)).contains(where: { isPunct($0, 61) }) else { return }
        // a parameter list: empty, `void`, or holding a type name (an identifier); `half3 c(0.3, 0.5, 0.2)` is a variable
        guard close == paren + 1 || ((paren + 1)..<close).contains(where: { tokens[$0].kind == .identifier }) else { return }
        prototypes.append(paren - 1)
    }

    /// An error for each function that is declared and called but defined nowhere in the source.
    func checkExternalFunctions() {
        var declared = Set(prototypes.map { text($0) }).subtracting(definitions.keys)
        guard !declared.isEmpty else { return }
        // a redeclaration of a function of Metal's headers (pymetal's, here) is defined there
        for i in 0..<(tokens.count - 1) where tokens[i].kind == .identifier && isPunct(i + 1, 40) && !isUser(i) {
            declared.remove(text(i))
        }
        guard !declared.isEmpty else { return }
        var reported: Set<String> = []
        let declarations = Set(prototypes)
        for i in 0..<(tokens.count - 1) where tokens[i].kind == .identifier && isPunct(i + 1, 40) && !declarations.contains(i) {
            let name = text(i)
            // (a refused entry point's body is not compiled: EntryPoints.swift)
            guard declared.contains(name), isUser(i), !(i > 0 && (text(i - 1) == "." || text(i - 1) == "->")),
                  !refusedRanges.contains(where: { $0.contains(i) }),
                  reported.insert(name).inserted, let at = prototypes.first(where: { text($0) == name }) else { continue }
            error(at, "function '\(name)' is declared and called but not defined in this source: Xcode links it from "
                  + "another .metal file of the library; pymetal compiles one source: include or append the file that "
                  + "defines it")
        }
    }
}
