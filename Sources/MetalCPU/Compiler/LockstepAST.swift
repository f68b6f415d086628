// Lockstep's facts about a kernel body read from clang's AST instead of its tokens.
// Which uses of a variable may change it is a question about C++'s expression
// grammar (precedence, parentheses, references, overloads, casts), which the
// token reading answered with patterns (`x =` but not `x ==`, `x >>=`, `++x`,
// `&x`, `x.m[i] +=`, `T &r = x`, an argument of a function that is not known to
// take values, an operand of ?:, ...) and got wrong where a pattern did not
// cover the spelling (`(x) += 1`, `T &r(x)`, `&(x)`). clang knows: a use of a
// variable that is only read is the operand of an lvalue-to-rvalue conversion
// (or of a conversion to const, binding a const reference, or of sizeof);
// every other use (assigned, incremented, its address taken, bound to a
// non-const reference, handed to a method, ...) may change it.
//
// The lockstep candidates (kernels that meet other threads and whose body the
// rewrite may take: not templates) are dumped with their bodies,
//   clang -fsyntax-only -Xclang -ast-dump [-Xclang -ast-dump-filter=<name>]
// on the front end's AST text (FrontEnd.astText) against the headers' PCH, the
// text's line markers blanked so that clang's locations are the text's own
// lines and columns, which FrontEnd.astSource maps back to the tokens. The cost
// (measured on the lockstep test files, 19 and 30 kernels: 0.04-0.1 s, a 0.4 MB
// dump; none for a file without candidates) is paid only when there are
// candidates. Where the dump is not available (PYMETAL_CLANG_AST=0, clang
// reports errors, a body not in the dump, a node that maps to no token) the
// token reading (Lockstep.swift: assigned, aliased) stands.
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

enum LockstepAST {
    /// A text dump of clang's AST of `content`, which clang read as `file`; `content` starts at `base` in the AST text.
    struct Dump {
        let text: String
        let file: String
        let content: [UInt8]
        let base: Int
    }

    /// What the AST says of the lockstep candidates' bodies.
    struct Facts {
        var bodies: [Range<Int>] = []   // the bodies (token ranges) read from the AST
        var changes: [Int: String] = [:] // token -> variable, at each use of a variable that may change it
        var addressed: [Int: String] = [:] // those of them that take its address (`&x`, `&(x)`, `&x.m`)
        /// Locals of an array type the tokens do not spell (`typedef float row[4]; row a;`), by their name's token:
        /// the element's MSL name and the extents, as clang resolved the type.
        var arrays: [Int: (element: String, extents: [Int])] = [:]
        /// `auto f = [](T a) { ... };`, a lambda that captures nothing, by the token its statement starts at: the name.
        var lambdas: [Int: String] = [:]

        /// Whether `range` lies in a body read from the AST.
        func covers(_ range: Range<Int>) -> Bool {
            bodies.contains { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }
        }
    }

    /// A node of the dump: its kind, the rest of its line, where it starts (a token), its parent and children.
    struct Node {
        let kind: Substring
        let line: Substring
        var token: Int?
        var location: Int? // a declaration's own location (its name)
        let parent: Int?
        var children: [Int] = []
    }

    /// The dump's nodes, in order, each with the token it starts at (`token(file, line, column)`; clang prints
    /// a location relative to the one printed before: `col:C`, `line:L:C`, `file:L:C`).
    static func nodes(_ dump: String, token: (Substring, Int, Int) -> Int?) -> [Node] {
        var nodes: [Node] = []
        var stack: [(depth: Int, node: Int)] = []
        var file: Substring = "", lineNumber = 0
        /// A location's token, remembering its file and line for the next.
        func location(_ text: Substring) -> Int? {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count >= 2, let column = Int(parts[parts.count - 1]) else { return nil }
            if parts.count == 2, parts[0] == "col" {
            } else if parts.count == 3, parts[0] == "line", let l = Int(parts[1]) {
                lineNumber = l
            } else if let l = Int(parts[parts.count - 2]) {
                file = text[text.startIndex..<parts[parts.count - 3].endIndex]
                lineNumber = l
            } else { return nil }
            return token(file, lineNumber, column)
        }
        for line in dump.split(separator: "\n", omittingEmptySubsequences: true) {
            // the tree's drawing: `| |-`, `` `-``
            guard let at = line.firstIndex(where: { $0 != " " && $0 != "|" && $0 != "`" && $0 != "-" }),
                  line[at].isLetter else { continue } // `Dumping f:`, `<<<NULL>>>`
            let depth = line.distance(from: line.startIndex, to: at) / 2
            let head = line[at...]
            let kind = head.prefix { $0 != " " }
            var rest = head.dropFirst(kind.count).drop { $0 == " " }
            if rest.hasPrefix("0x") { rest = rest.drop { $0 != " " }.dropFirst() }
            var start: Int? = nil, own: Int? = nil
            if rest.first == "<" { // <begin[, end]> [location]
                var level = 0, close = rest.startIndex
                for i in rest.indices {
                    if rest[i] == "<" { level += 1 } else if rest[i] == ">" { level -= 1; if level == 0 { close = i; break } }
                }
                let range = rest[rest.index(after: rest.startIndex)..<close]
                for (n, part) in range.split(separator: ",").enumerated() {
                    let token = location(part.trimmingPrefix(" "))
                    if n == 0 { start = token }
                }
                rest = rest[rest.index(after: close)...].drop { $0 == " " }
                let next = rest.prefix { $0 != " " }
                if next.hasPrefix("col:") || next.hasPrefix("line:") || (next.first == "/" && next.contains(":")) {
                    own = location(next)
                }
            }
            while let last = stack.last, last.depth >= depth { stack.removeLast() }
            let parent = stack.last?.node
            nodes.append(Node(kind: kind, line: head, token: start, location: own, parent: parent))
            if let parent { nodes[parent].children.append(nodes.count - 1) }
            stack.append((depth, nodes.count - 1))
        }
        return nodes
    }

    /// The first quoted text of a node's line: its type (`'const float'`), or for a reference, the name.
    static func quoted(_ text: Substring) -> Substring? {
        guard let open = text.firstIndex(of: "'") else { return nil }
        let after = text.index(after: open)
        guard let close = text[after...].firstIndex(of: "'") else { return nil }
        return text[after..<close]
    }

    /// The variable a DeclRefExpr names (`... lvalue Var 0x.. 'acc' 'float'`), nil for functions and others.
    static func variable(_ node: Node) -> String? {
        for kind in [" Var 0x", " ParmVar 0x", " Binding 0x"] {
            if let range = node.line.firstRange(of: kind) { return quoted(node.line[range.upperBound...]).map(String.init) }
        }
        return nil
    }

    enum Use { case read, change, address }

    /// How DeclRefExpr `index` uses its variable: a read, a use that may change it (see the top), or taking its address.
    static func use(_ nodes: [Node], _ index: Int) -> Use {
        var n = index
        func type(_ i: Int) -> Substring { quoted(nodes[i].line.drop { $0 != "'" }) ?? "" }
        // Up through what names a part of it: (x), x.m, x.xy, x[i] (an array decays to a pointer first).
        while let p = nodes[n].parent {
            let kind = nodes[p].kind
            if kind == "ParenExpr" || kind == "ExtVectorElementExpr"
                || (kind == "MemberExpr" && !nodes[p].line.contains(" ->"))
                || (kind == "ArraySubscriptExpr" && nodes[p].children.first == n) {
                n = p
            } else if kind == "ImplicitCastExpr", nodes[p].line.contains("<ArrayToPointerDecay>"),
                      let q = nodes[p].parent, nodes[q].kind == "ArraySubscriptExpr", nodes[q].children.first == p {
                n = q
            } else { break }
        }
        guard let p = nodes[n].parent else { return .read }
        if nodes[p].kind == "UnaryOperator", nodes[p].line.contains(" '&'") { return .address }
        if type(n).hasPrefix("const ") { return .read } // no use changes a const object
        switch nodes[p].kind {
        case "ImplicitCastExpr":
            let line = nodes[p].line
            return line.contains("<LValueToRValue>") || (line.contains("<NoOp>") && type(p).hasPrefix("const ")) ? .read : .change
        case "UnaryExprOrTypeTraitExpr", "CXXTypeidExpr": return .read // sizeof, alignof: not evaluated
        default: return .change
        }
    }

    /// `float[4][2]` as ("float", [4, 2]); the element by its MSL name (`_Float16`: half). Nil for other types.
    static func array(_ canonical: String) -> (element: String, extents: [Int])? {
        guard let open = canonical.firstIndex(of: "["), canonical.last == "]" else { return nil }
        let extents = canonical[open...].dropFirst().dropLast().split(separator: "][", omittingEmptySubsequences: false).map { Int($0) }
        guard !extents.isEmpty, extents.allSatisfy({ ($0 ?? 0) > 0 }) else { return nil }
        var element = canonical[..<open]
        while element.last == " " { element = element.dropLast() }
        return (["_Float16": "half", "__bf16": "bfloat"][String(element)] ?? String(element), extents.map { $0! })
    }

    /// The facts of clang's dump `dump` for the bodies `bodies` (token ranges inside the braces), with `position`
    /// the token starting at an offset of the AST text, if one does.
    static func facts(_ dump: Dump, bodies: [Range<Int>], position: (Int) -> Int?) -> Facts {
        var starts = [0] // the offsets of the lines of what clang read
        for (i, byte) in dump.content.enumerated() where byte == 10 { starts.append(i + 1) }
        let nodes = nodes(dump.text) { file, line, column in
            guard file == dump.file, line >= 1, line <= starts.count, column >= 1 else { return nil }
            return position(dump.base + starts[line - 1] + column - 1)
        }
        var facts = Facts()
        // a body is read from the AST when its braces are a function's CompoundStmt there
        let read = Set(nodes.compactMap { node -> Int? in
            guard node.kind == "CompoundStmt", let parent = node.parent, nodes[parent].kind == "FunctionDecl" else { return nil }
            return node.token
        })
        facts.bodies = bodies.filter { read.contains($0.lowerBound - 1) }
        for node in nodes where node.kind == "VarDecl" {
            guard let token = node.location, facts.covers(token..<(token + 1)), let declared = ClangAST.parameter(node.line),
                  let array = array(declared.canonical) else { continue }
            facts.arrays[token] = array
        }
        for node in nodes where node.kind == "DeclStmt" {
            guard let token = node.token, facts.covers(token..<(token + 1)), node.children.count == 1,
                  case let variable = nodes[node.children[0]], variable.kind == "VarDecl",
                  let lambda = variable.children.first(where: { nodes[$0].kind == "LambdaExpr" }),
                  nodes[lambda].children.allSatisfy({ ["CXXRecordDecl", "CompoundStmt"].contains(nodes[$0].kind) }),
                  let name = ClangAST.parameter(variable.line)?.name else { continue }
            facts.lambdas[token] = name
        }
        for index in nodes.indices where nodes[index].kind == "DeclRefExpr" {
            guard let token = nodes[index].token, facts.covers(token..<(token + 1)), let name = variable(nodes[index]) else { continue }
            switch use(nodes, index) {
            case .read: break
            case .change: facts.changes[token] = name
            case .address: facts.changes[token] = name; facts.addressed[token] = name
            }
        }
        return facts
    }
}

extension FrontEnd {
    /// Whether kernel `index` is one the lockstep rewrite may take (makeLockstep): not a template, with a body.
    func lockstepCandidate(_ index: Int) -> Range<Int>? {
        guard !validation, lockstepAllowed, kernels[index].usesFibers, kernelRoots[index]?.isEmpty ?? true,
              !kernels[index].function.contains("<") else { return nil }
        return kernelBodies[index]
    }

    /// Reads lockstepFacts from clang's AST of the lockstep candidates' bodies, when the AST text is there.
    func readLockstepFacts() throws {
        let candidates = kernels.indices.compactMap { index in lockstepCandidate(index).map { (index, $0) } }
        guard !candidates.isEmpty, let bodies, let source = astSource else { return }
        var names = candidates.map { kernels[$0.0].function }
        names = names.map { $0.hasPrefix("::") ? String($0.dropFirst(2)) : $0 }
        guard let dump = try bodies(source.text, names) else { return }
        let runs = source.runs
        lockstepFacts = LockstepAST.facts(dump, bodies: candidates.map(\.1)) { offset in
            // the run of the source that the offset is in, then the token starting there
            var (low, high) = (0, runs.count)
            while low < high { let mid = (low + high) / 2; if runs[mid].at + runs[mid].count <= offset { low = mid + 1 } else { high = mid } }
            guard low < runs.count, runs[low].at <= offset else { return nil }
            let byte = runs[low].source + offset - runs[low].at
            (low, high) = (0, tokens.count)
            while low < high { let mid = (low + high) / 2; if tokens[mid].start < byte { low = mid + 1 } else { high = mid } }
            return low < tokens.count && tokens[low].start == byte ? low : nil
        }
    }
}

extension MSLCompiler {
    /// clang's text dump of the AST of `text` (FrontEnd.astText) with function bodies: of `names` alone when one
    /// (-ast-dump-filter matches a qualified name's part, one string), else of all. Its line markers are blanked
    /// (same length), so that clang's locations are the text's own. Nil when clang reports errors or
    /// PYMETAL_CLANG_AST=0.
    func astBodies(_ text: String, names: [String], input: String, codegen: [String], tools: Toolchain, cache: String,
                   work: URL, job: Job) throws -> LockstepAST.Dump? {
        guard Toolchain.environment("PYMETAL_CLANG_AST") != "0" else { return nil }
        let flags = ["-fsyntax-only", "-w", "-Xclang", "-ast-dump"] + (names.count == 1 ? ["-Xclang", "-ast-dump-filter=" + names[0]] : [])
        func blanked(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var out = Array(bytes)
            var start = 0
            while start < out.count {
                var end = start
                while end < out.count, out[end] != 10 { end += 1 }
                if end > start + 1, out[start] == 35, out[start + 1] == 32 { // `# 12 "file" 2`
                    for i in start..<end { out[i] = 32 }
                }
                start = end + 1
            }
            return out
        }
        do {
            if let (_, pch, _, rest) = try precompiledHeader(text, input: input, codegen: codegen, tools: tools, cache: cache,
                                                             work: work, job: job) {
                let file = work.appendingPathComponent("ast-bodies.cpp"), content = blanked(rest)
                try KernelCache.writeFile(content, to: file.path)
                let dump = try run(tools.clang, ["-x", "c++"] + flags + codegen + ["-include-pch", pch, file.path],
                                   work: work, job: job, output: nil)
                return LockstepAST.Dump(text: dump, file: file.path, content: content, base: rest.startIndex)
            }
            let file = work.appendingPathComponent("ast-bodies.ii"), content = blanked(Array(text.utf8)[...])
            try KernelCache.writeFile(content, to: file.path)
            let dump = try run(tools.clang, ["-x", "c++-cpp-output"] + flags + codegen + [file.path], work: work, job: job, output: nil)
            return LockstepAST.Dump(text: dump, file: file.path, content: content, base: 0)
        } catch let error as MTLLibraryError where error.code == .compileFailure {
            return nil
        }
    }
}
