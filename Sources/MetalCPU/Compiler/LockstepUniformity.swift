// Lockstep's uniformity facts and "which statements meet other threads", from clang's AST of the
// candidates' bodies (LockstepAST: Facts.nodes, declared, changed, variables, parameters, functions), where the
// token reading (Lockstep.swift: uniformIndex, invariant, uniformStatement, meetsOthers) went by names:
//
//   - an expression is uniform (the same in every thread of the group, all along: a group-wide loop's
//     bounds, a local the group declares once) when each name in it is a declaration clang resolved to
//     (its id, so a name a nested scope shadows is another declaration) that is: a literal's constant, an
//     enumerator, a constant declared outside the body, a kernel parameter that is a value (or a constant
//     reference) or the group's position or size and that the body never changes, a local the group
//     declares once (LockstepState.groupDecls: it was set from a uniform value and is never changed), or
//     the loop's own index; its operators have no side effects; its calls are of the pure MSL functions
//     (`min`, `metal::max`, ...); and it reads no memory (no subscript, `*` or `->`: device and threadgroup
//     memory may change, by this thread or another);
//   - a grid-stride loop's start and stride are invariant (no thread changes them while the loop runs:
//     A + k * S is its index at step k) under the same rules, but a position may be in them (it differs
//     between threads, and changes in none) and so may any local or parameter the body never changes;
//   - a statement meets other threads when a function it calls (clang's resolved callee: `metal::`, a
//     macro, an overload, a template's instantiation, a method, a lambda) is a SIMD-group function or a
//     barrier, or a function whose body (in the dump) calls one, transitively; a call of something clang
//     does not resolve to a function (a pointer) meets, to be safe; a user function the dump has no
//     body of is asked of the token reading (by name). A name that only spells a helper's name (a local
//     named like one) meets nobody.
// Where the body was not read from the AST (PYMETAL_CLANG_AST=0, clang refused the text, a body its
// ranges do not tile), the token reading stands.

extension FrontEnd {
    /// The nodes of the expression or statement spanning tokens `range`: those that start and end in it.
    private func astNodes(_ range: Range<Int>) -> [Int] {
        var result: [Int] = []
        for t in range {
            for n in lockstepFacts.starting[t] ?? [] where (lockstepFacts.nodes[n].end ?? Int.max) < range.upperBound {
                result.append(n)
            }
        }
        return result
    }

    /// The last quoted word of node `n`'s line: an operator's opcode (`'<'`, `postfix '++'`).
    private func opcode(_ n: Int) -> Substring {
        let line = lockstepFacts.nodes[n].line
        guard let close = line.lastIndex(of: "'"), let open = line[..<close].lastIndex(of: "'") else { return "" }
        return line[line.index(after: open)..<close]
    }

    /// Whether node `n` (through implicit casts and parentheses) names the variable `id`.
    private func names(_ n: Int, _ id: String?) -> Bool {
        let nodes = lockstepFacts.nodes
        var n = n
        while ["ImplicitCastExpr", "ParenExpr"].contains(nodes[n].kind), let child = nodes[n].children.first { n = child }
        return id != nil && nodes[n].kind == "DeclRefExpr" && LockstepAST.referent(nodes[n].line).map { String($0.id) } == id
    }

    /// MSL functions of values only, without side effects (valueFunctions but the SIMD-group ones), and the
    /// front end's vector constructor.
    static let pureFunctions = valueFunctions.subtracting(MSLAttributes.rendezvous).union(["pm_make"])

    /// Whether the expression spanning `range` is made of literals, operators without side effects, casts,
    /// `.` members, calls of pure functions and declarations `accept` takes (by id, kind, name); `step`: the
    /// step of a loop whose index is `index` (which it may assign, increment or decrement).
    private func astExpression(_ range: Range<Int>, index: String? = nil, step: Bool = false,
                               _ accept: (_ id: String, _ kind: Substring, _ line: Substring) -> Bool) -> Bool {
        let nodes = lockstepFacts.nodes
        let found = astNodes(range)
        guard !found.isEmpty else { return false }
        for n in found {
            let node = nodes[n]
            switch node.kind {
            case "IntegerLiteral", "FloatingLiteral", "CXXBoolLiteralExpr", "CharacterLiteral", "ParenExpr", "ImplicitCastExpr",
                 "CStyleCastExpr", "CXXFunctionalCastExpr", "CXXStaticCastExpr", "ConstantExpr", "ExtVectorElementExpr",
                 "ConditionalOperator", "UnaryExprOrTypeTraitExpr":
                continue
            case "CallExpr": // of a function clang resolved (checked as its DeclRefExpr), not through a pointer
                guard let callee = node.children.first, let child = nodes[callee].children.first,
                      nodes[callee].kind == "ImplicitCastExpr", nodes[child].kind == "DeclRefExpr",
                      LockstepAST.referent(nodes[child].line)?.kind == "Function" else { return false }
            case "BinaryOperator":
                let op = opcode(n)
                if op == "," { return false }
                if op == "=", !(step && names(node.children[0], index)) { return false }
            case "UnaryOperator":
                let op = opcode(n)
                if op == "++" || op == "--" {
                    guard step, let child = node.children.first, names(child, index) else { return false }
                } else if !["-", "+", "~", "!"].contains(op) { return false } // `*p`, `&x`: memory, addresses
            case "CompoundAssignOperator":
                guard step, let child = node.children.first, names(child, index) else { return false }
            case "MemberExpr": // a member of a value (`p.count`), not through a pointer, not a method
                guard let member = LockstepAST.referent(node.line), !node.line.contains(" ->"),
                      !node.line.contains("<bound member function type>"), member.kind == "member" else { return false }
            case "DeclRefExpr":
                guard let referent = LockstepAST.referent(node.line) else { return false }
                switch referent.kind {
                case "EnumConstant", "NonTypeTemplateParm": continue
                case "Function": if !libraryPure(referent) { return false }
                case "Var", "ParmVar":
                    if String(referent.id) != index, !accept(String(referent.id), referent.kind, node.line) { return false }
                default: return false
                }
            default: return false
            }
        }
        return true
    }

    /// Whether a function is one of the pure MSL functions (by name, and not the user's own of that name).
    private func libraryPure(_ referent: (kind: Substring, id: Substring, name: Substring)) -> Bool {
        Self.pureFunctions.contains(String(referent.name)) && definitions[String(referent.name)] == nil
            && lockstepFacts.functions[String(referent.id)] == nil
    }

    /// Whether the body changes variable `id` anywhere (assigns it, takes its address, binds a reference to it, ...).
    private func changedInBody(_ id: String, _ state: LockstepState) -> Bool {
        (lockstepFacts.changed[id] ?? []).contains { state.body.contains($0) }
    }

    /// A constant declared outside the body (`constant uint N = 4;`, const in the C++ the front end makes): the
    /// type that follows the name in a DeclRefExpr's line is const, and no pointer or reference.
    private func outsideConstant(_ id: String, _ line: Substring) -> Bool {
        guard lockstepFacts.variables[id] == nil, lockstepFacts.parameters[id] == nil,
              let name = LockstepAST.referent(line)?.name, let at = line.firstRange(of: "'\(name)' '") else { return false }
        let type = line[at.upperBound...].prefix { $0 != "'" }
        return type.hasPrefix("const ") && !type.contains("*") && !type.contains("&")
    }

    /// Whether the expression at `range` has the same value in every thread of the group (see the top).
    func astUniform(_ range: Range<Int>, _ state: LockstepState, index: String? = nil, step: Bool = false) -> Bool {
        astExpression(range, index: index, step: step) { id, _, line in
            if state.groupDecls.contains(id) { return true }
            if let name = lockstepFacts.parameters[id] {
                guard let binding = state.bindings[name], !binding.pointer, !changedInBody(id, state) else { return false }
                if case let .position(attribute) = binding.kind { return Self.groupPositions.contains(attribute) }
                return binding.kind == .buffer
            }
            return outsideConstant(id, line)
        }
    }

    /// Whether no thread changes the expression at `range` while the kernel runs (see the top).
    func astInvariant(_ range: Range<Int>, _ state: LockstepState) -> Bool {
        astExpression(range) { id, _, line in
            // the group's (an enclosing group-wide loop's index steps between the statements of its body)
            if state.groupDecls.contains(id) { return true }
            if let name = lockstepFacts.parameters[id] {
                guard let binding = state.bindings[name] else { return false }
                if case .position = binding.kind { return true }
                return !binding.pointer && binding.kind == .buffer && !changedInBody(id, state)
            }
            if let local = lockstepFacts.variables[id] { return !local.reference && !changedInBody(id, state) }
            return outsideConstant(id, line)
        }
    }

    static let integerCanonical: Set<String> = ["int", "unsigned int", "short", "unsigned short", "long", "unsigned long",
                                                "long long", "unsigned long long", "char", "signed char", "unsigned char"]

    /// Whether local `declarator` (a name token) is an integer, as clang's type says (through typedefs: `size_t`, `index_t`).
    func astInteger(_ declarator: Int) -> Bool {
        guard let id = lockstepFacts.declared[declarator], let local = lockstepFacts.variables[id] else { return false }
        var type = local.canonical
        if type.hasPrefix("const ") { type.removeFirst(6) }
        return Self.integerCanonical.contains(type)
    }

    /// The index of `for (T i = A; C; S) body` (its name and id) when every thread of the group takes the same steps:
    /// an integer that the body never changes, A, C and S uniform but for the index, S changing only the index.
    func astUniformIndex(_ parts: LockstepAST.Facts.Loop, _ state: LockstepState,
                         declarators: (Range<Int>) -> [LockstepAST.Facts.Declarator]?) -> (name: String, id: String)? {
        guard let initial = parts.initial, let condition = parts.condition, let step = parts.step,
              let names = declarators(initial), names.count == 1, let start = names[0].value,
              names[0].extents == nil, !names[0].pointer, !names[0].reference,
              let id = lockstepFacts.declared[names[0].name], astInteger(names[0].name),
              astUniform(start, state), astUniform(condition, state, index: id), astUniform(step, state, index: id, step: true),
              !(lockstepFacts.changed[id] ?? []).contains(where: { parts.body.contains($0) })
        else { return nil }
        return (text(names[0].name), id)
    }

    /// Whether the expression at `range` has no side effects as clang reads it: no assignment, increment or
    /// decrement, and no call of a user function (clang's callee: not a local named like one), a lambda, an
    /// atomic function or something clang does not resolve to a function (a statement with a SIMD-group call
    /// runs twice).
    func astPure(_ range: Range<Int>) -> Bool {
        let nodes = lockstepFacts.nodes
        for n in astNodes(range) {
            let node = nodes[n]
            switch node.kind {
            case "CompoundAssignOperator": return false
            case "BinaryOperator": if opcode(n) == "=" { return false }
            case "UnaryOperator": if ["++", "--"].contains(opcode(n)) { return false }
            case "CallExpr", "CXXOperatorCallExpr", "CXXMemberCallExpr":
                var callee = node.children.first
                while let c = callee, ["ImplicitCastExpr", "ParenExpr"].contains(nodes[c].kind) { callee = nodes[c].children.first }
                guard let c = callee, ["DeclRefExpr", "MemberExpr"].contains(nodes[c].kind) else { return false }
            case "DeclRefExpr", "MemberExpr":
                guard let referent = LockstepAST.referent(node.line), ["Function", "CXXMethod", "member"].contains(referent.kind),
                      referent.kind != "member" || node.line.contains("<bound member function type>") else { continue }
                let name = String(referent.name)
                if name.hasPrefix("atomic") || lockstepFacts.functions[String(referent.id)] != nil || definitions[name] != nil
                    || referent.kind != "Function" { return false } // (a method: a user type's, or a lambda)
                // an operator function that assigns (`operator+=` of a class type is no CompoundAssignOperator)
                if name.hasPrefix("operator"), name.hasSuffix("++") || name.hasSuffix("--")
                    || name.hasSuffix("=") && !["operator==", "operator!=", "operator<=", "operator>="].contains(name) { return false }
            default: continue
            }
        }
        return true
    }

    /// Whether tokens `range` meet other threads (see the top): clang's call graph where the body was read
    /// from the AST, else the names (meetsOthers).
    func lockstepMeets(_ range: Range<Int>, _ memo: inout [String: Bool]) -> Bool {
        guard lockstepFacts.covers(range) else { return meetsOthers(range, &memo) }
        var visited: Set<Int> = []
        return astNodes(range).contains { astMeets($0, &visited, &memo) }
    }

    /// Whether node `n` or a node under it calls (or names) a function that meets other threads.
    private func astMeets(_ n: Int, _ visited: inout Set<Int>, _ memo: inout [String: Bool]) -> Bool {
        guard visited.insert(n).inserted else { return false }
        let nodes = lockstepFacts.nodes, node = nodes[n]
        switch node.kind {
        case "DeclRefExpr", "MemberExpr":
            if let referent = LockstepAST.referent(node.line),
               ["Function", "CXXMethod"].contains(referent.kind)
                || (referent.kind == "member" && node.line.contains("<bound member function type>")),
               calleeMeets(String(referent.id), String(referent.name), &memo) { return true }
        case "CallExpr", "CXXOperatorCallExpr", "CXXMemberCallExpr":
            // the callee: a function or method clang resolved; anything else (a pointer) may be anything
            var callee = node.children.first
            while let c = callee, ["ImplicitCastExpr", "ParenExpr"].contains(nodes[c].kind) { callee = nodes[c].children.first }
            guard let c = callee, ["DeclRefExpr", "MemberExpr"].contains(nodes[c].kind),
                  let referent = LockstepAST.referent(nodes[c].line),
                  ["Function", "CXXMethod", "member"].contains(referent.kind) else { return true }
        case "CXXConstructExpr", "CXXTemporaryObjectExpr":
            // a constructor of a user type: by the type's name, as the tokens read it
            let type = LockstepAST.quoted(node.line.drop { $0 != "'" }).map(String.init) ?? ""
            if definitions[type] != nil, reachesRendezvous(type, &memo) { return true }
        default: break
        }
        return node.children.contains { astMeets($0, &visited, &memo) }
    }

    /// Whether a call of function `id` (named `name`) meets other threads.
    private func calleeMeets(_ id: String, _ name: String, _ memo: inout [String: Bool]) -> Bool {
        if MSLAttributes.rendezvous.contains(name) { return true }
        let key = "ast " + id
        if let known = memo[key] { return known }
        guard let body = lockstepFacts.functions[id] else {
            // not in the dump: a user function by its name, as the tokens read it; a library function meets by its name only
            return definitions[name] != nil && reachesRendezvous(name, &memo)
        }
        memo[key] = false // a recursive call meets nothing through itself
        var visited: Set<Int> = []
        let result = astMeets(body, &visited, &memo)
        memo[key] = result
        return result
    }
}
