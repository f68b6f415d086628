// Kernel signatures read from clang's own AST. The token front end finds the
// kernels and makes the text edits; what a kernel's launcher binds (the
// parameter list as C++ declares it: names, types as clang resolved them
// through typedefs, aliases and template arguments, pointers and references,
// and the MSL attributes and address spaces, which the front end leaves in
// the AST text as `annotate` attributes) is read from
//   clang -fsyntax-only -Xclang -skip-function-bodies -Xclang -ast-dump
// of the front end's AST text (FrontEnd.astText): the headers come from the
// precompiled header every compile uses, and the bodies are skipped, so the
// run costs tens of milliseconds (MLX-sized 384-kernel file: 0.05 s, a 0.5 MB
// dump). Each kernel is found through `pm_ast::__pm_ast_kernel_<n> =
// &<function>`: clang resolves the expression the launchers take to the very
// declaration or instantiation. Where the AST is unavailable (clang reports
// errors: the compile that follows reports them as before; a validation
// build; a kernel not in the dump) the front end's own reading stands.
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

enum ClangAST {
    /// The name of the pointer to kernel `index` in the AST text's namespace pm_ast.
    static func reference(_ index: Int) -> String { "__pm_ast_kernel_\(index)" }

    /// A parameter of a function in the dump.
    struct Parameter: Equatable {
        var name: String
        var type: String       // as written (after template substitution)
        var canonical: String  // through typedefs and aliases
        var annotations: [String] = []
    }

    /// The parameters of each kernel found in clang's text dump (`-ast-dump`), by kernel index. Read as bytes: a
    /// dump has a line per node (7,000 for 384 kernels), of which only a few kinds are read.
    static func signatures(dump: String) -> [Int: [Parameter]] {
        var functions: [String: [Parameter]] = [:]
        var references: [Int: String] = [:]
        var function: (address: String, depth: Int)? = nil
        var reference: (index: Int, depth: Int)? = nil
        let bytes = Array(dump.utf8)
        var end = -1
        while end + 1 < bytes.count {
            let start = end + 1
            end = start
            while end < bytes.count, bytes[end] != 10 { end += 1 }
            var at = start // the tree's drawing: `| |-`, `` `-``
            while at < end, bytes[at] == 32 || bytes[at] == 124 || bytes[at] == 96 || bytes[at] == 45 { at += 1 }
            let depth = (at - start) / 2
            if let current = function, depth <= current.depth { function = nil }
            if let current = reference, depth <= current.depth { reference = nil }
            var space = at
            while space < end, bytes[space] != 32 { space += 1 }
            let kind = bytes[at..<space]
            func isKind(_ name: String) -> Bool { kind.elementsEqual(name.utf8) }
            guard isKind("FunctionDecl") || isKind("CXXMethodDecl") || isKind("ParmVarDecl") || isKind("AnnotateAttr")
                    || isKind("VarDecl") || isKind("DeclRefExpr") else { continue }
            let line = Substring(String(decoding: bytes[at..<end], as: UTF8.self))
            let words = line.split(separator: " ", maxSplits: 2)
            guard words.count >= 2 else { continue }
            let address = String(words[1])
            switch words[0] {
            case "FunctionDecl", "CXXMethodDecl":
                function = (address, depth)
                functions[address] = []
            case "ParmVarDecl":
                guard let current = function, depth == current.depth + 1, let parameter = parameter(line) else { break }
                functions[current.address]!.append(parameter)
            case "AnnotateAttr":
                guard let current = function, depth == current.depth + 2, let first = line.firstIndex(of: "\""),
                      let last = line.lastIndex(of: "\""), first < last, !functions[current.address]!.isEmpty else { break }
                functions[current.address]![functions[current.address]!.count - 1].annotations
                    .append(String(line[line.index(after: first)..<last]))
            case "VarDecl":
                let prefix = ClangAST.reference(0).dropLast()
                if let name = line.split(separator: " ").first(where: { $0.hasPrefix(prefix) }),
                   let index = Int(name.dropFirst(prefix.count)) {
                    reference = (index, depth)
                }
            default: // DeclRefExpr: `DeclRefExpr 0x.. <..> 'type' lvalue Function 0x5.. 'name' 'type'`
                if let current = reference, let range = line.firstRange(of: " Function 0x") {
                    let start = line.index(range.upperBound, offsetBy: -2)
                    references[current.index] = String(line[start...].prefix { $0 != " " })
                    reference = nil
                }
            }
        }
        return references.compactMapValues { functions[$0] }
    }

    /// `ParmVarDecl 0x.. <col:41, col:48> col:48 used a 'ptr<float>':'float *' cinit`.
    static func parameter(_ line: Substring) -> Parameter? {
        guard var open = line.firstIndex(of: "<") else { return nil }
        var depth = 0
        while open < line.endIndex { // the source range, which may hold `<built-in>`
            if line[open] == "<" { depth += 1 } else if line[open] == ">" { depth -= 1; if depth == 0 { break } }
            open = line.index(after: open)
        }
        guard open < line.endIndex, let quote = line[open...].firstIndex(of: "'") else { return nil }
        // the location, flags, and the name (none for an unnamed parameter)
        let flags: Set<Substring> = ["used", "referenced", "invalid", "implicit", "constexpr"]
        let head = line[line.index(after: open)..<quote].split(separator: " ").dropFirst().filter { !flags.contains($0) }
        var types: [Substring] = []
        var rest = line[quote...]
        while rest.first == "'", let close = rest.dropFirst().firstIndex(of: "'") {
            types.append(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...]
            guard rest.hasPrefix(":'") else { break }
            rest = rest.dropFirst()
        }
        guard let type = types.first else { return nil }
        return Parameter(name: head.last.map(String.init) ?? "", type: String(type), canonical: String(types.last!))
    }

    /// A kernel's bindings as its AST parameters say (Metal's rules, as FrontEnd.parameters applies them); nil
    /// when the annotations are not the front end's.
    static func bindings(_ parameters: [Parameter]) -> [KernelBinding]? {
        var result: [KernelBinding] = []
        var nextBuffer = 0
        for parameter in parameters {
            var binding: KernelBinding? = nil
            var space = ""
            var constant: (name: String, absent: Bool)? = nil
            for annotation in parameter.annotations where annotation.hasPrefix("pm.") {
                let words = annotation.dropFirst(3).split(separator: " ").map(String.init)
                switch (words.first, words.count) {
                case ("buffer", 2), ("threadgroup", 2):
                    guard let index = Int(words[1]) else { return nil }
                    binding = KernelBinding(kind: words[0] == "buffer" ? .buffer : .threadgroup, index: index)
                case ("position", 2): binding = KernelBinding(kind: .position(words[1]), index: 0)
                case ("constant", 3): constant = (words[1], words[2] == "1")
                case ("space", 2): space = words[1]
                default: return nil
                }
            }
            // Without an attribute Metal assigns the next buffer index (FrontEnd.parameters).
            var resolved = binding ?? KernelBinding(kind: .buffer, index: nextBuffer)
            resolved.name = parameter.name
            resolved.typeText = elementType(parameter)
            // what it points at may change (Lockstep): memory it points or refers to, but for a constant reference
            let canonical = parameter.canonical
            resolved.pointer = resolved.kind == .threadgroup
                || (canonical.contains("&") ? space != "constant" : canonical.contains("*") || canonical.contains("["))
            if let constant {
                if case .position = resolved.kind { return nil } // refused by the front end
                (resolved.constant, resolved.absent) = (constant.name, constant.absent)
            }
            if resolved.kind == .buffer {
                guard resolved.index < 31 else { return nil } // refused by the front end
                nextBuffer = resolved.index + 1
            }
            result.append(resolved)
        }
        return result
    }

    /// The element type's name, for reflection (KernelBinding.typeText): without const, volatile, restrict, * and
    /// &, as written (`float4`, `uint`, a template's argument); through a typedef only when it hides the pointer.
    /// A substituted template argument prints as clang's own spelling (`_Float16`, `float
    /// __attribute__((ext_vector_type(4)))`): MSL's name is given (`half`, `float4`).
    static func elementType(_ parameter: Parameter) -> String {
        func strip(_ type: String) -> (String, Bool) {
            var type = type
            var lanes = ""
            let vector = " __attribute__((ext_vector_type("
            if let range = type.firstRange(of: vector) {
                lanes = String(type[range.upperBound...].prefix { $0.isNumber })
                let close = type[range.upperBound...].firstRange(of: ")))")?.upperBound ?? type.endIndex
                type.removeSubrange(range.lowerBound..<close)
            }
            // a declarator's parentheses and extents: `const float (&)[4]`
            type = type.replacing("(*)", with: " * ").replacing("(&&)", with: " & ").replacing("(&)", with: " & ")
            while let open = type.firstIndex(of: "["), let close = type[open...].firstIndex(of: "]") {
                type.removeSubrange(open...close)
            }
            var words = type.replacing("*", with: " * ").replacing("&", with: " & ").split(separator: " ")
            let indirect = words.contains("*") || words.contains("&")
            let qualifiers: Set<Substring> = ["const", "volatile", "restrict", "__restrict", "__restrict__", "*", "&"]
            words.removeAll { qualifiers.contains($0) }
            let name = words.joined(separator: " ")
            return ((mslNames[name] ?? name) + lanes, indirect)
        }
        let (written, indirect) = strip(parameter.type)
        let (canonical, canonicalIndirect) = strip(parameter.canonical)
        return canonicalIndirect && !indirect ? canonical : written
    }

    private static let mslNames = ["_Float16": "half", "__bf16": "bfloat", "unsigned int": "uint", "unsigned short": "ushort",
                                   "unsigned char": "uchar", "signed char": "char", "unsigned long": "ulong",
                                   "long long": "long", "unsigned long long": "ulong"]

    /// The bindings of each kernel that clang's text dump `dump` shows, by kernel index.
    static func bindings(dump: String) -> [Int: [KernelBinding]] {
        signatures(dump: dump).compactMapValues(bindings)
    }
}

extension MSLCompiler {
    /// The kernels' bindings read from clang's AST of `text` (FrontEnd.astText), by kernel index: one clang run
    /// against the precompiled header (built here when the cache has none: the compile uses it next). None
    /// when clang reports errors (the compile reports them) or PYMETAL_CLANG_AST=0 (the front end's own reading:
    /// a comparison, or a clang that cannot dump its AST).
    func astBindings(_ text: String, input: String, codegen: [String], tools: Toolchain, cache: String, work: URL,
                     job: Job) throws -> [Int: [KernelBinding]] {
        guard Toolchain.environment("PYMETAL_CLANG_AST") != "0" else { return [:] }
        let dumpFlags = ["-fsyntax-only", "-w", "-Xclang", "-skip-function-bodies", "-Xclang", "-ast-dump"]
        let dump: String
        do {
            if let (_, pch, _, rest) = try precompiledHeader(text, input: input, codegen: codegen, tools: tools, cache: cache,
                                                             work: work, job: job) {
                let file = work.appendingPathComponent("ast.cpp")
                try KernelCache.writeFile(Array(rest), to: file.path)
                dump = try run(tools.clang, ["-x", "c++"] + dumpFlags + codegen + ["-include-pch", pch, file.path],
                               work: work, job: job, output: nil)
            } else {
                let file = work.appendingPathComponent("ast.ii")
                try KernelCache.writeFile(Array(text.utf8), to: file.path)
                dump = try run(tools.clang, ["-x", "c++-cpp-output"] + dumpFlags + codegen + [file.path],
                               work: work, job: job, output: nil)
            }
        } catch let error as MTLLibraryError where error.code == .compileFailure {
            return [:]
        }
        lock { astReads += 1 }
        return ClangAST.bindings(dump: dump)
    }
}

