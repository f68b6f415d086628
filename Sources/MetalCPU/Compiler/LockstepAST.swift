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
// candidates. The statement structure (structure: each block's statements, declarators, for
// headers, ifs, returns, barrier calls) is read from the same dump, as token ranges: clang's
// range of a node starts at its first token and ends at the start of its last (the lexer's
// `--` and `++` are two tokens; an expression statement's `;` is past it). Where the dump is
// not available (PYMETAL_CLANG_AST=0, clang reports errors, a body not in the dump, a block
// whose statements do not tile its tokens) the token reading (Lockstep.swift) stands.
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

        // The statement structure (lockstepBlock's reading of a body), as token ranges:
        var blocks: [Int: [Range<Int>]] = [:]      // a block's `{` -> its statements
        var statements: [Int: Int] = [:]            // a statement's first token -> its end (exclusive)
        var declarations: [Int: [Declarator]] = [:] // a declaration statement's first token -> its declarators
        var branches: [Int: Branch] = [:]           // an `if`'s first token -> its parts
        var loops: [Int: Loop] = [:]                // a `for`'s first token -> its header's parts and body
        var returns: Set<Int> = []                  // where a return statement is (not one of a lambda's)
        var barriers: [Int: Bool] = [:]             // a statement that is a barrier call -> threadgroup_barrier (not simdgroup_)

        // Names resolved to declarations (clang's ids: the dump's addresses), for uniformity and calls
        // (LockstepUniformity.swift):
        var nodes: [Node] = []
        var starting: [Int: [Int]] = [:]     // a token of a body -> the nodes that start at it
        var changed: [String: [Int]] = [:]   // a variable's id -> its uses that may change it (see `changes`)
        var variables: [String: Variable] = [:] // the bodies' locals by id
        var declared: [Int: String] = [:]    // a local's name token -> its id
        var parameters: [String: String] = [:] // the candidates' parameters: id -> name
        var functions: [String: Int] = [:]   // a function's id (user functions, methods, lambdas, instantiations) -> its body's node

        /// A local of a body: its initialiser's node (`= value`), and whether it is constexpr or a reference.
        struct Variable {
            let initialiser: Int?
            let constexpr: Bool
            let reference: Bool
            let canonical: String
        }

        /// A variable a declaration statement declares: its name's token, the extents of an array (outermost
        /// first, as clang's type says), its initialiser (`= value`), and whether it is a reference or a pointer.
        struct Declarator {
            let name: Int
            let extents: [Int]?
            let value: Range<Int>?
            let reference: Bool
            let pointer: Bool
        }
        /// `if (condition) then [else otherwise]`; `leaves`: `then` is `return;` or `{ return; }`.
        struct Branch {
            let condition: Range<Int>
            let then: Range<Int>
            let otherwise: Range<Int>?
            let leaves: Bool
        }
        /// `for (initial; condition; step) body`, each part nil when empty.
        struct Loop {
            let initial: Range<Int>?
            let condition: Range<Int>?
            let step: Range<Int>?
            let body: Range<Int>
        }

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
        var end: Int? = nil // the token its range ends at (clang's end: the start of its last token)
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
            guard let at = line.firstIndex(where: { $0 != " " && $0 != "|" && $0 != "`" && $0 != "-" }) else { continue }
            let depth = line.distance(from: line.startIndex, to: at) / 2
            guard line[at].isLetter else { // `Dumping f:`; `<<<NULL>>>`: an absent child (a for loop's empty init)
                if line[at...].hasPrefix("<<<NULL>>>"), depth > 0 {
                    while let last = stack.last, last.depth >= depth { stack.removeLast() }
                    if let parent = stack.last?.node {
                        nodes.append(Node(kind: "NULL", line: "", token: nil, location: nil, parent: parent))
                        nodes[parent].children.append(nodes.count - 1)
                    }
                }
                continue
            }
            let head = line[at...]
            let kind = head.prefix { $0 != " " }
            var rest = head.dropFirst(kind.count).drop { $0 == " " }
            if rest.hasPrefix("0x") { rest = rest.drop { $0 != " " }.dropFirst() }
            var start: Int? = nil, own: Int? = nil, end: Int? = nil
            if rest.first == "<" { // <begin[, end]> [location]
                var level = 0, close = rest.startIndex
                for i in rest.indices {
                    if rest[i] == "<" { level += 1 } else if rest[i] == ">" { level -= 1; if level == 0 { close = i; break } }
                }
                let range = rest[rest.index(after: rest.startIndex)..<close]
                for (n, part) in range.split(separator: ",").enumerated() {
                    let token = location(part.trimmingPrefix(" "))
                    if n == 0 { start = token; end = token } else { end = token }
                }
                rest = rest[rest.index(after: close)...].drop { $0 == " " }
                let next = rest.prefix { $0 != " " }
                if next.hasPrefix("col:") || next.hasPrefix("line:") || (next.first == "/" && next.contains(":")) {
                    own = location(next)
                }
            }
            while let last = stack.last, last.depth >= depth { stack.removeLast() }
            let parent = stack.last?.node
            nodes.append(Node(kind: kind, line: head, token: start, location: own, end: end, parent: parent))
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

    /// The declaration a DeclRefExpr (or a member's MemberExpr) refers to: its kind (`Var`, `ParmVar`, `Function`,
    /// `CXXMethod`, `EnumConstant`, ...), its id (the dump's address) and its name; for a member, kind "member".
    static func referent(_ line: Substring) -> (kind: Substring, id: Substring, name: Substring)? {
        if line.hasPrefix("MemberExpr") { // `MemberExpr 0x.. <..> 'T' lvalue .name 0xID`, `->name 0xID`
            let words = line.split(separator: " ")
            guard let at = words.lastIndex(where: { $0.hasPrefix("0x") }), at > 2,
                  case let member = words[at - 1], member.hasPrefix(".") || member.hasPrefix("->") else { return nil }
            return ("member", words[at], member.drop { $0 == "." || $0 == "-" || $0 == ">" })
        }
        // `DeclRefExpr 0x.. <..> 'T' lvalue Var 0xID 'name' 'T'`: the first ` <Kind> 0x` after the type
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        for i in 2..<max(2, words.count - 1) where words[i + 1].hasPrefix("0x") && words[i].first?.isUppercase == true {
            guard i + 2 < words.count, let name = quoted(words[(i + 2)...].joined(separator: " ")[...]) else { return nil }
            return (words[i], words[i + 1], Substring(name))
        }
        return nil
    }

    /// Names resolved to declarations (Facts.nodes ...): the nodes starting at each token of the bodies, the bodies'
    /// locals, the candidates' parameters and every function the dump has a body of.
    static func resolve(_ nodes: [Node], _ facts: inout Facts) {
        facts.nodes = nodes
        let functionKinds: Set<Substring> = ["FunctionDecl", "CXXMethodDecl", "CXXConstructorDecl", "CXXDestructorDecl",
                                             "CXXConversionDecl"]
        func identifier(_ node: Node) -> String? {
            let words = node.line.split(separator: " ", maxSplits: 2)
            return words.count > 1 && words[1].hasPrefix("0x") ? String(words[1]) : nil
        }
        for (index, node) in nodes.enumerated() {
            if functionKinds.contains(node.kind), let body = node.children.last(where: { nodes[$0].kind == "CompoundStmt" }),
               let id = identifier(node), facts.functions[id] == nil {
                facts.functions[id] = body // (a lambda's body is dumped twice: the first)
                if let token = nodes[body].token, facts.bodies.contains(where: { $0.lowerBound - 1 == token }) {
                    for p in node.children where nodes[p].kind == "ParmVarDecl" {
                        if let pid = identifier(nodes[p]), let name = ClangAST.parameter(nodes[p].line)?.name { facts.parameters[pid] = name }
                    }
                }
            }
            guard let token = node.token, facts.covers(token..<(token + 1)) else { continue }
            facts.starting[token, default: []].append(index)
            if node.kind == "VarDecl", let id = identifier(node), let name = node.location, let declared = ClangAST.parameter(node.line) {
                facts.declared[name] = id
                facts.variables[id] = Facts.Variable(initialiser: node.line.contains(" cinit") ? node.children.last : nil,
                                                     constexpr: node.line.contains(" constexpr "),
                                                     reference: declared.canonical.contains("&"), canonical: declared.canonical)
            }
        }
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

    /// The statement structure of the bodies (Facts.blocks ...) as token ranges. A block whose statements do
    /// not tile its tokens (a location that maps to no token: text the front end replaced) is left out, as
    /// is a declaration of a shape the rewrite does not take: the token reading stands for them.
    static func structure(_ nodes: [Node], _ facts: inout Facts, punct: (Int, UInt8) -> Bool, pragma: (Int) -> Bool,
                          removed: (Int) -> Bool, extent: (Int) -> Int) {
        func inBody(_ t: Int) -> Bool { facts.bodies.contains { ($0.lowerBound - 1)...$0.upperBound ~= t } }
        var unread: Set<Int> = [] // blocks whose statements are not all read
        // A body with such a block is read from its tokens, all of it (no mix of the two readings).
        defer { facts.bodies.removeAll { body in unread.contains { ($0 >= body.lowerBound - 1) && $0 < body.upperBound } } }
        func statement(_ i: Int) -> Bool { nodes[i].kind != "NULL" && !nodes[i].kind.hasSuffix("Attr") }
        // The lexer's last token of node i: clang's end is the start of its last token, and the lexer splits
        // `++` and `--` (an expression ending at a `+` or `-` ends with one of them: `k--`).
        func last(_ i: Int) -> Int? {
            guard let end = nodes[i].end else { return nil }
            return punct(end, 43) || punct(end, 45) ? end + 1 : end
        }
        // A statement's end (exclusive): past its last token, and past the `;` that ends it when clang's range
        // stops before (an expression, return, do-while; an if or loop ends where its last statement does).
        func end(_ i: Int) -> Int? {
            let kind = nodes[i].kind
            if ["IfStmt", "ForStmt", "WhileStmt", "AttributedStmt", "CXXForRangeStmt", "SwitchStmt", "LabelStmt"].contains(kind) {
                return nodes[i].children.last(where: statement).flatMap(end)
            }
            guard let last = last(i) else { return nil }
            if kind == "CompoundStmt" || kind == "DeclStmt" { return last + 1 }
            return punct(last + 1, 59) ? last + 2 : last + 1
        }
        func range(_ i: Int) -> Range<Int>? {
            guard let start = nodes[i].token, let end = end(i), start < end else { return nil }
            return start..<end
        }
        // An expression's tokens (no `;`).
        func expression(_ i: Int) -> Range<Int>? {
            guard let start = nodes[i].token, let last = last(i), start <= last else { return nil }
            return start..<(last + 1)
        }
        for (index, node) in nodes.enumerated() {
            guard let token = node.token, inBody(token) else { continue }
            switch node.kind {
            case "CompoundStmt":
                guard punct(token, 123), let close = node.end, punct(close, 125) else { continue }
                var ranges: [Range<Int>] = []
                var at = token + 1, tiled = true
                for child in node.children {
                    // A statement whose start the front end rewrote starts where the one before ended; one it
                    // replaced whole (`threadgroup float t[4];` -> tg_var) ends where the tokens say.
                    guard let e = end(child) ?? (nodes[child].token == nil ? extent(at) : nil), case let r = (nodes[child].token ?? at)..<e, r.lowerBound >= at, r.lowerBound < e,
                          r.upperBound <= close else { tiled = false; break }
                    // between two statements: `;`s ending the one before (`x = T{1};`: clang's range stops at the
                    // brace), then what goes with the next: `#pragma` lines clang kept no node for, words the
                    // front end removed (`threadgroup float &r = ...`)
                    var gap = at
                    while gap < r.lowerBound, punct(gap, 59), !ranges.isEmpty { gap += 1 }
                    guard (gap..<r.lowerBound).allSatisfy({ pragma($0) || removed($0) }) else { tiled = false; break }
                    if gap > at { ranges[ranges.count - 1] = ranges[ranges.count - 1].lowerBound..<gap }
                    ranges.append(gap..<r.upperBound)
                    at = r.upperBound
                    if nodes[child].kind == "DeclStmt" {
                        facts.declarations[gap] = declarators(nodes, child, expression: expression, punct: punct)
                    }
                }
                while tiled, at < close, punct(at, 59), !ranges.isEmpty { at += 1; ranges[ranges.count - 1] = ranges[ranges.count - 1].lowerBound..<at }
                guard tiled, at == close else { unread.insert(token); continue }
                facts.blocks[token] = ranges
                for r in ranges { facts.statements[r.lowerBound] = r.upperBound }
            case "IfStmt":
                // no init statement, no declaration in the condition
                let parts = node.children.filter(statement)
                guard !node.line.contains("has_init"), !node.line.contains("has_var"), parts.count == 2 || parts.count == 3,
                      let condition = expression(parts[0]), let then = range(parts[1]) else { continue } // (not taken: fibers)
                let otherwise = parts.count == 3 ? range(parts[2]) : nil
                guard parts.count == 2 || otherwise != nil else { unread.insert(token); continue }
                let returns = { (i: Int) in nodes[i].kind == "ReturnStmt" && nodes[i].children.isEmpty }
                let leaves = returns(parts[1])
                    || (nodes[parts[1]].kind == "CompoundStmt" && nodes[parts[1]].children.count == 1 && returns(nodes[parts[1]].children[0]))
                facts.branches[token] = Facts.Branch(condition: condition, then: then, otherwise: otherwise, leaves: leaves)
                for r in [then, otherwise].compactMap({ $0 }) { facts.statements[r.lowerBound] = r.upperBound }
            case "ForStmt":
                // init, condition variable, condition, step, body
                guard node.children.count == 5, nodes[node.children[1]].kind == "NULL", let body = range(node.children[4]) else { continue }
                let initial = nodes[node.children[0]].kind == "NULL" ? nil : range(node.children[0])
                let condition = nodes[node.children[2]].kind == "NULL" ? nil : expression(node.children[2])
                let step = nodes[node.children[3]].kind == "NULL" ? nil : expression(node.children[3])
                guard (initial != nil) == (nodes[node.children[0]].kind != "NULL"), (condition != nil) == (nodes[node.children[2]].kind != "NULL"),
                      (step != nil) == (nodes[node.children[3]].kind != "NULL") else { continue }
                facts.loops[token] = Facts.Loop(initial: initial, condition: condition, step: step, body: body)
                for r in [initial, body].compactMap({ $0 }) { facts.statements[r.lowerBound] = r.upperBound }
            case "DeclStmt": // (a block's are read with its statements)
                if facts.declarations[token] == nil {
                    facts.declarations[token] = declarators(nodes, index, expression: expression, punct: punct)
                }
            case "ReturnStmt":
                // (a lambda's return ends a call, not a thread)
                var p = node.parent
                while let q = p, nodes[q].kind != "LambdaExpr" { p = nodes[q].parent }
                if p == nil { facts.returns.insert(token) }
            case "CallExpr":
                // a statement that is a call of a barrier, by the function clang resolved (`metal::`, macros)
                guard let parent = node.parent, ["CompoundStmt", "AttributedStmt"].contains(nodes[parent].kind)
                        || (nodes[parent].kind == "IfStmt" && nodes[parent].children.first != index)
                        || (nodes[parent].kind == "ForStmt" && nodes[parent].children.last == index),
                      let callee = node.children.first, nodes[callee].kind == "ImplicitCastExpr",
                      let name = nodes[callee].children.first, nodes[name].kind == "DeclRefExpr",
                      let range = nodes[name].line.firstRange(of: " Function 0x"),
                      let function = quoted(nodes[name].line[range.upperBound...]),
                      function == "threadgroup_barrier" || function == "simdgroup_barrier" else { continue }
                facts.barriers[token] = function == "threadgroup_barrier"
            default: break
            }
        }
    }

    /// The declarators of DeclStmt `index`; empty when one is of a shape lockstep does not keep per thread
    /// (`T a(x)`, `T a{x}`, `= {...}`, `T &&r`, a static or a function).
    static func declarators(_ nodes: [Node], _ index: Int, expression: (Int) -> Range<Int>?,
                            punct: (Int, UInt8) -> Bool) -> [Facts.Declarator] {
        var result: [Facts.Declarator] = []
        for child in nodes[index].children {
            let node = nodes[child]
            guard node.kind == "VarDecl", let name = node.location, let declared = ClangAST.parameter(node.line),
                  !declared.type.contains("&&"), !node.line.contains(" static"), !node.line.contains(" listinit") else { return [] }
            let extents = array(declared.canonical)?.extents
            let pointer = declared.canonical.hasSuffix("*"), reference = declared.type.hasSuffix("&")
            // one level of pointer, a reference to a scalar or vector: the element types lockstep spells
            guard declared.canonical.filter({ $0 == "*" }).count <= (pointer ? 1 : 0),
                  !reference || !declared.type.contains("*") && !declared.type.contains("(") else { return [] }
            var value: Range<Int>? = nil
            if node.line.contains(" cinit") {
                // `= value`: the initialiser's tokens, from after the `=` to the `,` or `;`
                // a reference is bound to an object (not to a temporary it would extend the life of)
                var bound = node.children.last
                while let b = bound, ["ImplicitCastExpr", "ExprWithCleanups"].contains(nodes[b].kind) { bound = nodes[b].children.first }
                guard !reference || bound.map({ nodes[$0].kind != "MaterializeTemporaryExpr" }) == true else { return [] }
                guard let initial = node.children.last.flatMap(expression), punct(initial.lowerBound - 1, 61),
                      !punct(initial.lowerBound, 123), punct(initial.upperBound, 44) || punct(initial.upperBound, 59) else { return [] }
                value = initial
            } else if node.line.contains(" callinit") {
                // a default construction (`simdgroup_float8x8 m;`), not `T a(x)`
                guard !punct(name + 1, 40), !punct(name + 1, 123) else { return [] }
            }
            result.append(Facts.Declarator(name: name, extents: extents, value: value, reference: reference, pointer: pointer))
        }
        return result
    }

    /// The facts of clang's dump `dump` for the bodies `bodies` (token ranges inside the braces), with `position`
    /// the token starting at an offset of the AST text, if one does, `punct(t, c)` whether token t is the
    /// punctuation c, `pragma(t)` whether it is a `#pragma` line, `removed(t)` whether the front end left it out of
    /// the AST text, and `extent(t)` the end of the statement starting
    /// at token t as the tokens say (for a statement the front end replaced whole).
    static func facts(_ dump: Dump, bodies: [Range<Int>], position: (Int) -> Int?, punct: (Int, UInt8) -> Bool,
                      pragma: (Int) -> Bool, removed: (Int) -> Bool, extent: (Int) -> Int) -> Facts {
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
        structure(nodes, &facts, punct: punct, pragma: pragma, removed: removed, extent: extent)
        resolve(nodes, &facts)
        for index in nodes.indices where nodes[index].kind == "DeclRefExpr" {
            guard let token = nodes[index].token, facts.covers(token..<(token + 1)), let name = variable(nodes[index]) else { continue }
            let id = referent(nodes[index].line).map { String($0.id) }
            switch use(nodes, index) {
            case .read: continue
            case .change: facts.changes[token] = name
            case .address: facts.changes[token] = name; facts.addressed[token] = name
            }
            if let id { facts.changed[id, default: []].append(token) }
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
        } punct: { isPunct($0, $1) } pragma: { tokens[$0].kind == .punctuation && src.bytes[tokens[$0].start] == 35 }
          removed: { t in
            // not copied into the AST text: in no run of the source
            let byte = tokens[t].start
            var (low, high) = (0, runs.count)
            while low < high { let mid = (low + high) / 2; if runs[mid].source + runs[mid].count <= byte { low = mid + 1 } else { high = mid } }
            return !(low < runs.count && runs[low].source <= byte)
          } extent: { statementExtent($0) }
    }
}

extension MSLCompiler {
    /// clang's text dump of the AST of `text` (FrontEnd.astText) with function bodies: of the source's own
    /// declarations, with the helpers lockstep's call graph walks (the headers are in the PCH, which -ast-dump
    /// does not print); without a PCH, of `names` alone when one (-ast-dump-filter matches a qualified name's
    /// part, one string). Its line markers are blanked (same length), so that clang's locations are the text's
    /// own. Nil when clang reports errors or PYMETAL_CLANG_AST=0.
    func astBodies(_ text: String, names: [String], input: String, codegen: [String], tools: Toolchain, cache: String,
                   work: URL, job: Job) throws -> LockstepAST.Dump? {
        guard Toolchain.environment("PYMETAL_CLANG_AST") != "0" else { return nil }
        let flags = ["-fsyntax-only", "-w", "-Xclang", "-ast-dump"]
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
            let filter = names.count == 1 ? ["-Xclang", "-ast-dump-filter=" + names[0]] : []
            let dump = try run(tools.clang, ["-x", "c++-cpp-output"] + flags + filter + codegen + [file.path], work: work, job: job,
                               output: nil)
            return LockstepAST.Dump(text: dump, file: file.path, content: content, base: 0)
        } catch let error as MTLLibraryError where error.code == .compileFailure {
            return nil
        }
    }
}
