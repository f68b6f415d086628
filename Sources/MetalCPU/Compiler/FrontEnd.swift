// The MSL front end: reads preprocessed MSL, records kernels and their
// bindings, and rewrites what C++ cannot parse (see MSL/README.md):
// kernel markers and MSL attributes are removed, `threadgroup` qualifiers are
// dropped, and kernel-scope threadgroup storage becomes ::pm::rt::tg_var.
// The kernels' signatures are then read from clang's AST of the rewritten
// text (ClangAST.swift); the reading of parameter lists here is the fallback.
// Every newline is kept, so clang's diagnostics keep the user's lines.

struct KernelBinding {
    enum Kind: Equatable { case buffer, threadgroup, position(String) }
    let kind: Kind
    let index: Int
    var name = ""     // the parameter's name, for reflection
    var typeText = "" // its element type as written (without const, *, &), for reflection
    var pointer = false // a pointer, a device reference or threadgroup memory: what it points at may change
    /// `[[buffer(n), function_constant(c)]]`: the bool function constant that declares the parameter.
    var constant: String? = nil
    /// Its constant is false: as in Metal the parameter is not part of the signature (nothing binds
    /// it and reflection does not list it); the kernel is still called with a null pointer there.
    var absent = false
}

struct Kernel {
    let hostName: String
    let function: String          // fully qualified C++ expression, e.g. ::ns::add<float>
    var bindings: [KernelBinding]
    let maxTotalThreads: Int
    /// A max_total_threads_per_threadgroup that is not a literal (`BLOCK_THREADS`, a template
    /// parameter): a C++ constant expression the launcher table evaluates.
    var maxThreadsExpression: String? = nil
    var usesFibers = false
    var lockstep = false          // rewritten to run a group statement by statement (Lockstep.swift)
    var sites: [Int] = []
    var constants: [Int] = []     // indices of the function constants whose value it needs
}

struct TemplateParameter {
    let name: String
    let isType: Bool
    let defaultValue: String?
}

/// `constant T name [[function_constant(index)]];`
struct FunctionConstant {
    let name: String
    let index: Int
    let qualifiedName: String     // e.g. ::ns::has_w
}

/// A function constant's value: MTLDataType raw value and the value's bytes.
public struct FunctionConstantValue: Hashable, Sendable {
    public let type: UInt
    public let bytes: [UInt8]
    public init(type: UInt, bytes: [UInt8]) { self.type = type; self.bytes = bytes }
}

struct FrontEndOutput {
    let text: String
    let kernels: [Kernel]
    var constants: [FunctionConstant] = []
}

struct CompileDiagnostics: Error { let messages: [String] }

enum MSLAttributes {
    static let positions: Set<String> = [
        "thread_position_in_grid", "threads_per_grid", "thread_position_in_threadgroup",
        "threads_per_threadgroup", "threadgroup_position_in_grid", "threadgroups_per_grid",
        "thread_index_in_threadgroup", "thread_index_in_simdgroup", "simdgroup_index_in_threadgroup",
        "threads_per_simdgroup", "simdgroups_per_threadgroup", "thread_index_in_quadgroup",
        "quadgroup_index_in_threadgroup", "quadgroups_per_threadgroup", "dispatch_threads_per_threadgroup",
    ]
    /// Metal attributes MetalCPU does not run (graphics, textures, argument buffers...).
    static let unsupported: Set<String> = [
        "texture", "sampler", "stage_in", "vertex", "fragment", "visible", "function_constant", "id",
        "user", "position", "color", "raster_order_group", "imageblock_data", "payload", "object", "mesh",
        "intersection", "stitchable", "point_size", "clip_distance", "vertex_id", "instance_id",
        "base_vertex", "base_instance", "amplification_id", "render_target_array_index", "sample_id",
        "front_facing", "point_coord", "primitive_id", "grid_origin", "grid_size",
        "dispatch_simdgroups_per_threadgroup", "dispatch_quadgroups_per_threadgroup", "extern",
    ]
    static let declaration: Set<String> = ["kernel", "host_name", "max_total_threads_per_threadgroup"]
    static let bindings: Set<String> = ["buffer", "threadgroup"]

    static func isMSL(_ name: String) -> Bool {
        positions.contains(name) || unsupported.contains(name) || declaration.contains(name) || bindings.contains(name)
    }

    /// Calls that make the threads of a group (or simdgroup) meet: such kernels run as fibers.
    static let rendezvous: Set<String> = {
        var names: Set<String> = ["threadgroup_barrier", "simdgroup_barrier", "simdgroup_load", "simdgroup_store",
                                  "simdgroup_multiply", "simdgroup_multiply_accumulate"]
        for base in ["sum", "product", "min", "max", "and", "or", "xor", "prefix_exclusive_sum",
                     "prefix_inclusive_sum", "prefix_exclusive_product", "prefix_inclusive_product",
                     "broadcast", "broadcast_first", "shuffle", "shuffle_up", "shuffle_down", "shuffle_xor",
                     "shuffle_rotate_up", "shuffle_rotate_down", "shuffle_and_fill_up", "shuffle_and_fill_down",
                     "ballot", "all", "any", "is_first", "active_threads_mask", "is_helper_thread"] {
            names.insert("simd_" + base)
            names.insert("quad_" + base)
            names.insert("__metal_simd_" + base) // Apple's builtins (pm_msl/builtins.h)
            names.insert("__metal_quad_" + base)
        }
        return names
    }()
}

/// One attribute inside `[[...]]`.
struct Attribute {
    let name: String
    let arguments: Range<Int>? // token indices inside the parentheses
    let token: Token
}

final class FrontEnd {
    let src: LexedSource
    var tokens: [Token] { src.tokens }
    var edits: [(range: Range<Int>, replacement: String)] = []
    /// Edits of the text clang's AST is read from (ClangAST.swift) alone, made where `edits` remove what clang
    /// cannot parse: a kernel parameter's MSL attributes and address space become `annotate` attributes, so that
    /// the AST carries them. Not in the compiled text: clang emits code for annotations of parameters.
    var astEdits: [(range: Range<Int>, replacement: String)] = []
    /// The byte ranges of edits left out of the AST text (validation's checked pointers).
    var compileOnly: Set<Range<Int>> = [] // edits the AST text leaves out (CheckedAuto.swift too)
    private var astRuns: [(at: Int, source: Int, count: Int)] = []
    private var errors: [String] = []
    var kernels: [Kernel] = []
    var kernelBodies: [Int: Range<Int>] = [:]       // kernel index -> body tokens
    var kernelRoots: [Int: [String]] = [:]          // kernel index -> extra identifiers (template args)
    var definitions: [String: [Range<Int>]] = [:]   // user definitions by name -> body tokens
    private typealias TemplateKernel = (bindings: [KernelBinding], body: Range<Int>, maxThreads: Int,
                                        maxExpression: String?, parameters: [TemplateParameter])
    // every kernel template of a name, in source order (MLX overloads block_masked_gemm): templateOverload
    private var templateKernels: [String: [TemplateKernel]] = [:]
    private var sites: [(token: Int, id: Int)] = []
    var fiberBodies: Set<Range<Int>> = []              // code reachable from FIBERS kernels
    private(set) var namespaces: [String] = []
    var enumerators: [String: Int]? = nil   // the user's enumerators' values (enumeratorValue), once read
    var prototypes: [Int] = []               // the name tokens of function prototypes (ExternalFunctions.swift)
    var refusedRanges: [ClosedRange<Int>] = [] // the declarations of refused entry points (EntryPoints.swift)
    private let constantValues: [Int: FunctionConstantValue]?  // nil: compiled without values
    private var constants: [FunctionConstant] = []
    private var definedQueries: Set<Int> = []                   // names inside is_function_constant_defined(...)
    private var seenHeads: Set<String> = []                      // namespace-scope declaration heads as written
    private var seenDeclarations: [String: String] = [:]        // addressSpaceFreeKey of namespace-scope declarations -> body

    private let requireMetalHeader: Bool

    private init(_ src: LexedSource, constantValues: [Int: FunctionConstantValue]?, requireMetalHeader: Bool) {
        self.src = src
        self.constantValues = constantValues
        self.requireMetalHeader = requireMetalHeader
    }

    /// `requireMetalHeader`: the text comes from clang -E -dI (its #include lines show whether the
    /// source includes a Metal header; MSLCompiler); tests may pass other text.
    /// `validation`: a shader-validation build (PM_VALIDATION): pointer parameters are checked (checkedPointer).
    /// `signatures`: reads the kernels' bindings from clang's AST of the text it is given (ClangAST), by kernel
    /// index; a kernel it does not return keeps the bindings read here.
    static func run(preprocessed text: String, constantValues: [Int: FunctionConstantValue]? = nil,
                    requireMetalHeader: Bool = false, validation: Bool = false, lockstep: Bool = true,
                    signatures: ((String) throws -> [Int: [KernelBinding]])? = nil,
                    bodies: ((String, [String]) throws -> LockstepAST.Dump?)? = nil) throws -> FrontEndOutput {
        let frontEnd = FrontEnd(Lexer.lex(text), constantValues: constantValues, requireMetalHeader: requireMetalHeader)
        frontEnd.validation = validation
        frontEnd.lockstepAllowed = lockstep
        frontEnd.signatures = signatures
        frontEnd.bodies = bodies
        return try frontEnd.process()
    }
    private var signatures: ((String) throws -> [Int: [KernelBinding]])?
    /// Dumps clang's AST with the bodies of the named functions (LockstepAST), from the AST text.
    var bodies: ((String, [String]) throws -> LockstepAST.Dump?)?
    /// The AST text (astText) and, for each run of it copied from the source unchanged, (its offset, the
    /// source's offset, its length): where a node of clang's dump is among the tokens.
    var astSource: (text: String, runs: [(at: Int, source: Int, count: Int)])?
    var lockstepFacts = LockstepAST.Facts() // what clang's AST says of the lockstep candidates' bodies
    var validation = false
    var lockstepAllowed = true
    /// Validation: checkedPointer's parameter types by their first token (through the `*`), for deducedSpecialization.
    var checkedTypes: [Int: (end: Int, text: String)] = [:] // (CheckedArguments.swift too)
    /// Validation: the names of threadgroup arrays declared as checked views (storageDeclaration), for CheckedArguments.
    var checkedArrays: Set<String> = []
    /// Validation: by kernel name, the buffer indices of its absent optional parameters (checkedPointer).
    private var absentIndices: [String: Set<Int>] = [:]
    /// Validation: while an explicit instantiation's own parameter list is read, its template's bindings (checkedPointer).
    private var primaryBindings: [KernelBinding]? = nil

    private func process() throws -> FrontEndOutput {
        var i = 0
        _ = parseScope(&i)
        checkExternalFunctions()
        removeParameterAttributes()
        removeStageAttributes()
        rewriteConversions()
        rewriteBracedArguments()
        rewriteVectorDirectInitialisations()
        rewriteCheckedAutoPointers() // before removeAddressSpaces: its edits of the qualifiers win
        rewriteCheckedPointerArguments()
        rewriteCheckedReinterpretCasts()
        rewriteCheckedAddresses()
        rewriteCheckedAtomicArguments()
        rewriteHelperSubscripts()
        guardCyclicStores()
        removeAddressSpaces()
        refuseWhatMetalRefuses()
        rewriteConstantQueries()
        // The signatures as clang reads them, before the analyses that use them (lockstep's positions and values).
        if errors.isEmpty, let signatures, let text = astText() {
            astSource = (text, astRuns)
            for (index, bindings) in try signatures(text)
            where kernels.indices.contains(index) {
                kernels[index].bindings = bindings
            }
        }
        try analyse()
        if !errors.isEmpty { throw CompileDiagnostics(messages: errors) }
        return FrontEndOutput(text: applyEdits(), kernels: kernels, constants: constants)
    }

    // MARK: - Helpers

    func text(_ i: Int) -> String { src.text(tokens[i]) }
    func isPunct(_ i: Int, _ c: UInt8) -> Bool {
        guard i >= 0, i < tokens.count else { return false }
        let t = tokens[i]
        return t.kind == .punctuation && t.end - t.start == 1 && src.bytes[t.start] == c
    }
    func isUser(_ i: Int) -> Bool { !src.files[Int(tokens[i].file)].isSystem }
    /// An error at token i, with clang's excerpt layout (the preprocessed line and a caret), which
    /// MSLCompiler turns into the user's line and column (Diagnostics.swift).
    func error(_ i: Int, _ message: String) {
        let token = tokens[min(i, tokens.count - 1)]
        var start = token.start, end = token.start
        while start > 0, src.bytes[start - 1] != 10 { start -= 1 }
        while end < src.bytes.count, src.bytes[end] != 10 { end += 1 }
        let line = String(decoding: src.bytes[start..<end], as: UTF8.self)
        let gutter = String(repeating: " ", count: max(0, 5 - String(token.line).count)) + "\(token.line) | "
        let caret = String(repeating: " ", count: gutter.count - 2) + "| " + String(repeating: " ", count: token.start - start) + "^"
        errors.append("\(src.location(token)): error: \(message)\n\(gutter)\(line)\n\(caret)")
    }
    private func astEdit(_ from: Int, through to: Int, replacement: String) {
        let start = tokens[from].start, end = tokens[to].end
        let newlines = src.bytes[start..<end].reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        astEdits.append((start..<end, replacement + String(repeating: "\n", count: newlines)))
    }

    /// The text of the AST the kernels' signatures are read from: the compiled text with astEdits, and a
    /// pointer to each kernel (`&` of the expression the launchers take) in namespace pm_ast, which says
    /// which declaration (or instantiation) the kernel is. Validation's checked pointers (checkedPointer) are
    /// left out: the parameters are read as declared.
    private func astText() -> String? {
        guard !kernels.isEmpty else { return nil }
        let references = kernels.indices.map { "constexpr auto \(ClangAST.reference($0)) = &\(kernels[$0].function);" }
        astRuns = []
        // astEdits first: of two edits at one place the first wins (applyEdits)
        return applyEdits(nil, Array((astEdits + edits.filter { !compileOnly.contains($0.range) }).enumerated()),
                          copied: { self.astRuns.append($0) })
            + "\n# 1 \"metalcpu_ast\"\nnamespace pm_ast {\n\(references.joined(separator: "\n"))\n}\n"
    }

    func remove(_ from: Int, through to: Int, replacement: String = "") {
        let start = tokens[from].start, end = tokens[to].end
        let newlines = src.bytes[start..<end].reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        edits.append((start..<end, replacement + String(repeating: "\n", count: newlines)))
    }

    /// Index of the token closing the bracket opened at `open` (any of ( [ {).
    func matching(_ open: Int) -> Int {
        var depth = 0
        var i = open
        while i < tokens.count {
            if tokens[i].kind == .punctuation, tokens[i].end - tokens[i].start == 1 {
                switch src.bytes[tokens[i].start] {
                case 40, 91, 123: depth += 1
                case 41, 93, 125: depth -= 1; if depth == 0 { return i }
                default: break
                }
            }
            i += 1
        }
        return tokens.count - 1
    }

    /// `[[` at i: returns the index of the final `]`.
    func attributeEnd(_ i: Int) -> Int? {
        guard isPunct(i, 91), isPunct(i + 1, 91) else { return nil }
        let inner = matching(i + 1)
        guard isPunct(inner + 1, 93) else { return nil }
        return inner + 1
    }

    func parseAttributes(_ open: Int, _ close: Int) -> [Attribute] {
        var result: [Attribute] = []
        var i = open + 2
        let end = close - 1
        while i < end {
            if isPunct(i, 44) { i += 1; continue }
            var nameTokens = [i]
            var j = i + 1
            while j + 1 < end, text(j) == "::" { nameTokens.append(j + 1); j += 2 }
            let name = nameTokens.map { text($0) }.joined(separator: "::")
            var arguments: Range<Int>? = nil
            if isPunct(j, 40) {
                let close = matching(j)
                arguments = (j + 1)..<close
                j = close + 1
            }
            result.append(Attribute(name: name, arguments: arguments, token: tokens[i]))
            while j < end, !isPunct(j, 44) { j += 1 }
            i = j
        }
        return result
    }

    /// integerExpression, for EntryPoints.swift.
    func integerConstant(_ i: inout Int, _ end: Int) -> Int? { integerExpression(&i, end) }

    private func integerArgument(_ attribute: Attribute, _ at: Int) -> Int? {
        guard let range = attribute.arguments, !range.isEmpty else { return nil }
        var i = range.lowerBound
        guard let value = integerExpression(&i, range.upperBound), i == range.upperBound else { return nil }
        return value
    }

    /// An integer constant expression of literals, + - * / % and parentheses (ggml's
    /// `[[function_constant(FC_MUL_MV + 0)]]` once its macro is expanded); nil for anything else.
    private func integerExpression(_ i: inout Int, _ end: Int, precedence: Int = 0) -> Int? {
        var value: Int
        if i < end, isPunct(i, 40) {
            i += 1
            guard let inner = integerExpression(&i, end), i < end, isPunct(i, 41) else { return nil }
            i += 1
            value = inner
        } else if i < end, isPunct(i, 45) || isPunct(i, 43) {
            let negate = isPunct(i, 45)
            i += 1
            guard let operand = integerExpression(&i, end, precedence: 2) else { return nil }
            value = negate ? -operand : operand
        } else if i < end, tokens[i].kind == .number, let literal = Self.integerValue(text(i)) {
            i += 1
            value = literal
        } else if i < end, tokens[i].kind == .identifier {
            // an enumerator, also qualified (`Index::A`): EntryPoints.swift
            while i + 2 < end, text(i + 1) == "::", tokens[i + 2].kind == .identifier { i += 2 }
            guard let enumerator = enumeratorValue(text(i)) else { return nil }
            i += 1
            value = enumerator
        } else {
            return nil
        }
        while i < end, tokens[i].kind == .punctuation, tokens[i].end - tokens[i].start == 1 {
            let op = src.bytes[tokens[i].start]
            let level: Int
            switch op {
            case 43, 45: level = 1       // + -
            case 42, 47, 37: level = 2   // * / %
            default: return value
            }
            guard level > precedence else { return value }
            i += 1
            guard let rhs = integerExpression(&i, end, precedence: level) else { return nil }
            switch op {
            case 43: value += rhs
            case 45: value -= rhs
            case 42: value *= rhs
            default:
                guard rhs != 0 else { return nil }
                value = op == 47 ? value / rhs : value % rhs
            }
        }
        return value
    }

    /// The value of an integer literal such as `16`, `0x20u`, `32ul`; nil for anything else.
    static func integerValue(_ literal: String) -> Int? {
        let trimmed = literal.lowercased().filter { $0 != "u" && $0 != "l" && $0 != "'" }
        if trimmed.hasPrefix("0x") { return Int(trimmed.dropFirst(2), radix: 16) }
        if trimmed.hasPrefix("0b") { return Int(trimmed.dropFirst(2), radix: 2) }
        if trimmed.hasPrefix("0"), trimmed.count > 1 { return Int(trimmed.dropFirst(), radix: 8) } // 0320 is octal
        return Int(trimmed)
    }

    // MARK: - Scopes and declarations

    /// Parses declarations until the `}` closing the current scope; returns with i at that `}`.
    private func parseScope(_ i: inout Int) -> Int {
        while i < tokens.count {
            if isPunct(i, 125) { return i }
            if isPunct(i, 59) || src.bytes[tokens[i].start] == 35 /* #pragma */ { i += 1; continue }
            let word = tokens[i].kind == .identifier ? text(i) : ""
            if word == "namespace" || (word == "inline" && i + 1 < tokens.count && text(i + 1) == "namespace") {
                var j = i + (word == "inline" ? 2 : 1)
                var names: [String] = []
                while j < tokens.count, !isPunct(j, 123), !isPunct(j, 59), !isPunct(j, 61) {
                    if tokens[j].kind == .identifier { names.append(text(j)) }
                    j += 1
                }
                if isPunct(j, 123) {
                    namespaces.append(contentsOf: names)
                    var k = j + 1
                    _ = parseScope(&k)
                    namespaces.removeLast(names.count)
                    i = k + 1
                } else {
                    i = skipDeclaration(j)
                }
                continue
            }
            if word == "extern", i + 2 < tokens.count, tokens[i + 1].kind == .string, isPunct(i + 2, 123) {
                var k = i + 3
                _ = parseScope(&k)
                i = k + 1
                continue
            }
            let start = i
            var body: Range<Int>? = nil
            var j = i
            while j < tokens.count {
                if isPunct(j, 59) { break }
                if isPunct(j, 125) { j -= 1; break } // malformed; let clang complain
                if isPunct(j, 40) || isPunct(j, 91) { j = matching(j) + 1; continue }
                if isPunct(j, 123) {
                    let close = matching(j)
                    if body == nil { body = (j + 1)..<close }
                    if isPunct(close + 1, 59) { j = close + 1 } else { j = close }
                    if !isPunct(j, 59) { break }
                    break
                }
                j += 1
            }
            let end = min(j, tokens.count - 1)
            if isUser(start) { declaration(start, end, body: body) }
            i = end + 1
        }
        return i
    }

    private func skipDeclaration(_ j: Int) -> Int {
        var k = j
        while k < tokens.count, !isPunct(k, 59) { k += 1 }
        return k + 1
    }

    /// One namespace-scope declaration of the user's code, tokens [start, end].
    private func declaration(_ start: Int, _ end: Int, body: Range<Int>?) {
        let headEnd = body.map { $0.lowerBound - 1 } ?? end // `{` or the last token
        if let entry = refusedEntryPoint(start, headEnd: headEnd) { // a vertex function...: EntryPoints.swift
            refuse(entry, start: start, end: end, hasBody: body != nil)
            return
        }
        // An identical head seen before is a redefinition, not an overload: left for the checks below.
        let head = namespaces.joined(separator: "::") + "\u{0}" + (start..<headEnd).map { text($0) }.joined(separator: " ")
        if let key = addressSpaceFreeKey(start..<headEnd, hasBody: body != nil), seenHeads.insert(head).inserted {
            // overloads / specializations on address spaces alone (MLX's pointer_element<device T*>,
            // <threadgroup T*>, ...) are one C++ declaration: the first is kept
            if isDuplicate(namespaces.joined(separator: "::") + "\u{0}" + key, body, start, in: &seenDeclarations) {
                remove(start, through: end)
                return
            }
        }
        var isKernel = false
        var hostName: String? = nil
        var maxThreads = 0
        var maxExpression: String? = nil
        var firstParen: Int? = nil
        var i = start
        var isTemplate = false, isInstantiation = false
        if text(start) == "template" {
            if isPunct(start + 1, 60) {
                isTemplate = true
                i = skipAngles(start + 1)
            } else {
                isInstantiation = true
                i = start + 1
            }
        }
        // Declaration head: markers, attributes and the parameter list.
        var decltypeGroup: Range<Int>? = nil
        var constantIndex: (index: Int, attribute: Int)? = nil
        while i < headEnd {
            if let close = attributeEnd(i) {
                let attributes = parseAttributes(i, close)
                var kept: [String] = []
                for attribute in attributes {
                    switch attribute.name {
                    case "kernel": isKernel = true
                    case "host_name":
                        // Adjacent literals concatenate, as in MLX's host_name(#op "_" #type).
                        if let range = attribute.arguments, !range.isEmpty, range.allSatisfy({ tokens[$0].kind == .string }) {
                            hostName = range.map { String(text($0).dropFirst().dropLast()) }.joined()
                        } else { error(i, "host_name needs a string, as in [[host_name(\"name\")]]") }
                    case "max_total_threads_per_threadgroup":
                        if let n = integerArgument(attribute, i) { maxThreads = n } else if let range = attribute.arguments,
                                                                                              !range.isEmpty {
                            maxExpression = range.map { text($0) }.joined(separator: " ") // evaluated by clang
                        } else {
                            error(i, "max_total_threads_per_threadgroup needs an integer constant")
                        }
                    case "function_constant" where firstParen == nil && body == nil:
                        if let n = integerArgument(attribute, i), (0..<65536).contains(n) { constantIndex = (n, i) } else {
                            error(i, "function_constant needs an index from 0 to 65535")
                        }
                    default:
                        if MSLAttributes.isMSL(attribute.name) {
                            if firstParen == nil { error(i, "attribute '\(attribute.name)' is not valid here") }
                        } else {
                            kept.append(attributeSource(attribute))
                        }
                    }
                }
                if firstParen == nil {
                    remove(i, through: close, replacement: kept.isEmpty ? "" : "[[\(kept.joined(separator: ", "))]]")
                }
                i = close + 1
                continue
            }
            if tokens[i].kind == .identifier {
                let word = text(i)
                if word == "kernel" && firstParen == nil { isKernel = true; remove(i, through: i); i += 1; continue }
                if word == "decltype" || word == "__attribute__" || word == "alignas" || word == "sizeof" {
                    if isPunct(i + 1, 40) {
                        let close = matching(i + 1)
                        if word == "decltype" && firstParen == nil { decltypeGroup = i..<(close + 1) }
                        i = close + 1
                        continue
                    }
                }
            }
            if isPunct(i, 40) && firstParen == nil { firstParen = i; i = matching(i) + 1; continue }
            if isPunct(i, 40) { i = matching(i) + 1; continue }
            // template arguments (`kt<float, (bool)1>`): their parentheses are no parameter list
            if isPunct(i, 60), firstParen == nil, i > start, tokens[i - 1].kind == .identifier, text(i - 1) != "operator",
               skipAngles(i) <= headEnd {
                i = skipAngles(i); continue
            }
            i += 1
        }
        if let constantIndex {
            functionConstant(start, end, index: constantIndex.index, attribute: constantIndex.attribute)
            return
        }
        stripThreadgroup(in: start..<(headEnd + 1), storageAllowed: false)
        if let body { stripThreadgroup(in: body, storageAllowed: true) }
        if let body, isClassHead(start..<(body.lowerBound - 1)) { mergeAddressSpaceOverloads(body) }

        if !isKernel && hostName == nil {
            if let body, let name = definitionName(start, firstParen: firstParen, headEnd: headEnd) {
                definitions[name, default: []].append(body)
            } else if body == nil, let (name, initializer) = initializedVariable(start, end) {
                // `constant bool use_w = has_w && ...;`: kernels naming it use what it names
                definitions[name, default: []].append(initializer)
            } else if body == nil, !isTemplate, let paren = firstParen {
                notePrototype(start, end, paren: paren) // ExternalFunctions.swift
            }
            return
        }
        // A kernel: its name, parameters, and what runs it.
        guard let declarator = declaratorID(firstParen: firstParen, decltypeGroup: decltypeGroup, end: end, headEnd: headEnd) else {
            error(start, "cannot find the kernel's name in this declaration")
            return
        }
        let plainName = tokens[declarator.last!].kind == .identifier ? text(declarator.last!) : baseName(declarator)
        if validation, isInstantiation, firstParen == nil, decltypeGroup == nil, let head = declarator.first,
           tokens[head - 1].kind == .identifier, !["kernel", "void"].contains(text(head - 1)) {
            // `template [[host_name("k")]] kernel k_t k<float>;` (ggml, candle): the typedef spells plain pointers,
            // the template's parameters are checked ones now (checkedPointer): it instantiates its own type
            remove(head - 1, through: head - 1, replacement: "decltype(\(declaratorSource(declarator)))")
        }
        var bindings: [KernelBinding]? = nil
        if let paren = firstParen, decltypeGroup == nil || paren > decltypeGroup!.upperBound {
            primaryBindings = validation && isInstantiation ? templateOverload(plainName, declarator)?.bindings : nil
            bindings = parameters(paren, kernel: plainName)
            primaryBindings = nil
        }
        if isTemplate {
            if let body, let bindings {
                templateKernels[plainName, default: []].append((bindings, body, maxThreads, maxExpression,
                                                                templateParameters(start + 1)))
            }
            return
        }
        var kernelBindings = bindings ?? []
        var kernelBody = body
        var threads = maxThreads
        var roots: [String] = []
        if isInstantiation {
            if let primary = templateOverload(plainName, declarator) {
                // The template's parameters and attributes are the kernel's (as clang's AST says, ClangAST), also
                // when the instantiation repeats some (MLX's `uint [[thread_position_in_grid]]` on unnamed ones)
                kernelBindings = primary.bindings
                kernelBody = primary.body
                if threads == 0 && maxExpression == nil {
                    threads = primary.maxThreads
                    if let expression = primary.maxExpression {
                        maxExpression = instantiated(expression, primary.parameters, declarator)
                    }
                }
            } else if let bindings, !bindings.isEmpty, definitions[plainName] != nil {
                // A plain function template made a kernel by an instantiation that repeats the attributes. clang
                // keeps no attributes of an instantiation's parameters: in the AST text it declares an explicit
                // specialization instead, whose parameters carry them (its body is never needed there).
                kernelBindings = bindings
                kernelBody = nil
                astEdit(start, through: start, replacement: "template <>")
            } else {
                error(start, "explicit instantiation of '\(plainName)', which is not a kernel template defined above")
                return
            }
            roots = declarator.filter { tokens[$0].kind == .identifier }.map { text($0) } + [plainName]
            remove(start, through: start, replacement: "template")
        } else if body == nil {
            return // a prototype: the definition is elsewhere
        }
        var qualified = declaratorSource(declarator)
        if isInstantiation, let paren = firstParen, !declarator.contains(where: { isPunct($0, 60) }) {
            qualified = deducedSpecialization(qualified, parameters: paren)
        }
        // A library's functions are found by name: two kernels of one name would make one unreachable.
        if kernels.contains(where: { $0.hostName == (hostName ?? plainName) }) {
            error(start, "a kernel named '\(hostName ?? plainName)' is already defined in this library; "
                  + "rename one (or give it [[host_name(\"...\")]])")
            return
        }
        // Around the declaration: a compile of one kernel leaves the others' out (KernelMarkers).
        edits.append((tokens[start].start..<tokens[start].start, KernelMarkers.begin(kernels.count)))
        edits.append((tokens[end].end..<tokens[end].end, KernelMarkers.end(kernels.count)))
        kernels.append(Kernel(hostName: hostName ?? plainName, function: qualified,
                              bindings: kernelBindings, maxTotalThreads: threads, maxThreadsExpression: maxExpression))
        let index = kernels.count - 1
        kernelBodies[index] = kernelBody
        kernelRoots[index] = roots
    }

    /// `template <typename T, int N = 4>` at `open` (the `<`): names, whether each is a type, defaults.
    private func templateParameters(_ open: Int) -> [TemplateParameter] {
        let close = skipAngles(open) - 1
        var result: [TemplateParameter] = []
        var begin = open + 1
        var j = open + 1
        while j <= close {
            if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) + 1; continue }
            if isPunct(j, 60) { j = skipAngles(j); continue }
            if isPunct(j, 44) || j == close {
                let parameter = begin..<j
                let equals = parameter.first { isPunct($0, 61) }
                let head = begin..<(equals ?? j)
                if let name = head.last(where: { tokens[$0].kind == .identifier }) {
                    result.append(TemplateParameter(
                        name: text(name), isType: ["typename", "class"].contains(text(begin)),
                        defaultValue: equals.map { (($0 + 1)..<j).map { text($0) }.joined(separator: " ") }))
                }
                begin = j + 1
            }
            j += 1
        }
        return result
    }

    /// `expression` (naming template parameters) for the instantiation `declarator` (`f < float , 256 >`):
    /// a constexpr lambda that declares each parameter as its argument.
    private func instantiated(_ expression: String, _ parameters: [TemplateParameter], _ declarator: [Int]) -> String {
        let arguments = templateArguments(declarator)
        let declarations = parameters.enumerated().compactMap { (n, parameter) -> String? in
            guard let value = n < arguments.count ? arguments[n] : parameter.defaultValue else { return nil }
            return parameter.isType ? "using \(parameter.name) = \(value);" : "constexpr auto \(parameter.name) = \(value);"
        }
        return "[] { \(declarations.joined(separator: " ")) return (\(expression)); }()"
    }

    /// The template arguments of an instantiation's declarator (`f < float , 256 >`), as written.
    private func templateArguments(_ declarator: [Int]) -> [String] {
        var arguments: [String] = []
        if let open = declarator.first(where: { isPunct($0, 60) }), let close = declarator.last, isPunct(close, 62) {
            var begin = open + 1
            var j = open + 1
            while j <= close {
                if isPunct(j, 40) || isPunct(j, 91) { j = matching(j) + 1; continue }
                if isPunct(j, 60) && j != open { j = skipAngles(j); continue }
                if isPunct(j, 44) || j == close {
                    arguments.append((begin..<j).map { text($0) }.joined(separator: " "))
                    begin = j + 1
                }
                j += 1
            }
        }
        return arguments
    }

    /// The kernel template an instantiation names, among overloads of its name: the first whose
    /// parameters take its arguments (as many as it has, or fewer with defaults; no number or
    /// true/false for a type parameter), else the last one defined.
    private func templateOverload(_ name: String, _ declarator: [Int]) -> TemplateKernel? {
        guard let overloads = templateKernels[name], overloads.count > 1 else { return templateKernels[name]?.last }
        let arguments = templateArguments(declarator)
        func isValue(_ argument: String) -> Bool {
            argument.first.map { $0.isNumber || $0 == "-" } == true || argument == "true" || argument == "false"
        }
        return overloads.first { candidate in
            let parameters = candidate.parameters
            let required = parameters.prefix { $0.defaultValue == nil }.count
            guard arguments.count >= required, arguments.count <= parameters.count else { return false }
            return !zip(parameters, arguments).contains { $0.isType && isValue($1) }
        } ?? overloads.last
    }

    func attributeSource(_ attribute: Attribute) -> String {
        guard let range = attribute.arguments else { return attribute.name }
        return attribute.name + "(" + range.map { text($0) }.joined(separator: " ") + ")"
    }

    private func skipAngles(_ open: Int) -> Int {
        var depth = 0
        var i = open
        while i < tokens.count {
            if isPunct(i, 60) { depth += 1 }
            else if isPunct(i, 62) { depth -= 1; if depth == 0 { return i + 1 } }
            else if isPunct(i, 40) || isPunct(i, 91) || isPunct(i, 123) { i = matching(i) }
            i += 1
        }
        return i
    }

    /// Token indices of the declarator-id (e.g. `ns :: add < float >`).
    private func declaratorID(firstParen: Int?, decltypeGroup: Range<Int>?, end: Int, headEnd: Int) -> [Int]? {
        var last: Int
        if let group = decltypeGroup, firstParen == nil || firstParen! < group.lowerBound || firstParen! >= group.upperBound {
            // template ... decltype(f<T>) f<T>;
            if let paren = firstParen, paren > group.upperBound { last = paren - 1 } else {
                last = isPunct(end, 59) ? end - 1 : end
            }
        } else if let paren = firstParen {
            last = paren - 1
        } else if isPunct(end, 59) {
            // `template [[host_name("k")]] kernel kernel_t k<float>;`: the type is a
            // function typedef, so the declarator is the name just before the `;`.
            last = end - 1
        } else { return nil }
        var ids: [Int] = []
        var i = last
        if isPunct(i, 62) { // template arguments
            var depth = 0
            while i >= 0 {
                if isPunct(i, 62) { depth += 1 } else if isPunct(i, 60) { depth -= 1; if depth == 0 { break } }
                else if isPunct(i, 41) || isPunct(i, 93) { // skip back over (...) / [...]
                    var d = 0
                    while i >= 0 { if isPunct(i, 41) || isPunct(i, 93) { d += 1 } else if isPunct(i, 40) || isPunct(i, 91) { d -= 1; if d == 0 { break } }; i -= 1 }
                }
                i -= 1
            }
            ids = Array(i...last)
            i -= 1
        }
        guard i >= 0, tokens[i].kind == .identifier else { return nil }
        ids.insert(i, at: 0)
        while i >= 2, text(i - 1) == "::", tokens[i - 2].kind == .identifier {
            ids.insert(contentsOf: [i - 2, i - 1], at: 0)
            i -= 2
        }
        if i >= 1, text(i - 1) == "::" { ids.insert(i - 1, at: 0) }
        return ids
    }

    /// The template's name in `ns :: f < A , B >`: the last identifier before the first `<`.
    private func baseName(_ ids: [Int]) -> String {
        let open = ids.firstIndex(where: { isPunct($0, 60) }) ?? ids.count
        return ids[..<open].last(where: { tokens[$0].kind == .identifier }).map { text($0) } ?? text(ids[0])
    }

    func declaratorSource(_ ids: [Int]) -> String {
        let source = ids.map { text($0) }.joined(separator: " ")
        if text(ids[0]) == "::" { return source }
        return "::" + (namespaces.isEmpty ? "" : namespaces.joined(separator: "::") + "::") + source
    }

    /// The name under which a user definition is known (function or type).
    private func definitionName(_ start: Int, firstParen: Int?, headEnd: Int) -> String? {
        var i = start
        while i < headEnd {
            if tokens[i].kind == .identifier, ["struct", "class", "union", "enum"].contains(text(i)),
               i + 1 <= headEnd, tokens[i + 1].kind == .identifier {
                if firstParen == nil || firstParen! > i { return text(i + 1) }
            }
            i += 1
        }
        if let paren = firstParen, paren > start {
            var j = paren - 1
            if isPunct(j, 62) { j = skipBackAngles(j) - 1 }
            if j >= 0, tokens[j].kind == .identifier { return text(j) }
            if j >= 1, tokens[j - 1].kind == .identifier, text(j - 1) == "operator" { return "operator" }
        }
        return nil
    }

    private func skipBackAngles(_ close: Int) -> Int {
        var depth = 0
        var i = close
        while i >= 0 {
            if isPunct(i, 62) { depth += 1 } else if isPunct(i, 60) { depth -= 1; if depth == 0 { return i } }
            i -= 1
        }
        return 0
    }

    /// Parses a kernel's parameter list at `open`; removes the MSL attributes.
    private func parameters(_ open: Int, kernel: String) -> [KernelBinding] {
        let close = matching(open)
        var result: [KernelBinding] = []
        var paramStart = open + 1
        var i = open + 1
        var angle = 0
        var number = 0
        var nextBuffer = 0
        func finish(_ last: Int) {
            defer { paramStart = last + 2; number += 1 }
            guard paramStart <= last else { return }
            if paramStart == last, text(paramStart) == "void" { return }
            var binding: KernelBinding? = nil
            var kept: [String] = []
            var optional: (name: String, absent: Bool)? = nil
            var depth = 0 // of parentheses and angles: an address space inside them is not the parameter's
            var facts: [String] = [] // its attributes, for the AST (ClangAST.bindings)
            defer {
                // GNU attributes before the parameter belong to its declaration (a `[[...]]` after an unnamed
                // parameter's type would be the type's), after its leading `[[...]]` (`[[maybe_unused]]`)
                var first = paramStart
                while first < last, let end = attributeEnd(first), end < last { first = end + 1 }
                if !facts.isEmpty {
                    let at = tokens[first].start
                    astEdits.append((at..<at, "__attribute__((\(facts.map { "annotate(\"pm.\($0)\")" }.joined(separator: ", ")))) "))
                }
            }
            var j = paramStart
            while j <= last {
                if let attrEnd = attributeEnd(j) {
                    let before = kept.count
                    for attribute in parseAttributes(j, attrEnd) {
                        let name = attribute.name
                        if name == "buffer" || name == "threadgroup" {
                            guard let index = integerArgument(attribute, j), (0..<31).contains(index) else {
                                error(j, "[[\(name)(n)]] needs an index from 0 to 30"); continue
                            }
                            binding = KernelBinding(kind: name == "buffer" ? .buffer : .threadgroup, index: index)
                            facts.append("\(name) \(index)")
                        } else if MSLAttributes.positions.contains(name) {
                            binding = KernelBinding(kind: .position(name), index: 0)
                            facts.append("position \(name)")
                        } else if name == "function_constant" {
                            optional = optionalParameter(attribute, j)
                            if let optional { facts.append("constant \(optional.name) \(optional.absent ? 1 : 0)") }
                        } else if MSLAttributes.unsupported.contains(name) {
                            error(j, "attribute '\(name)' is not supported by pymetal's CPU backend (compute kernels only)")
                        } else if MSLAttributes.isMSL(name) {
                            error(j, "attribute '\(name)' is not valid on a kernel parameter")
                        } else {
                            kept.append(attributeSource(attribute))
                        }
                    }
                    let mine = kept[before...]
                    remove(j, through: attrEnd, replacement: mine.isEmpty ? "" : "[[\(mine.joined(separator: ", "))]]")
                    j = attrEnd + 1
                    continue
                }
                // the parameter's address space (removed from the compiled text): a GNU attribute in the
                // decl-specifiers, which belongs to the parameter's declaration
                if isPunct(j, 40) || isPunct(j, 60) { depth += 1 } else if isPunct(j, 41) || isPunct(j, 62) { depth -= 1 }
                if depth == 0, tokens[j].kind == .identifier, Self.addressSpaces.contains(text(j)) {
                    astEdit(j, through: j, replacement: (text(j) == "constant" ? "const " : "")
                            + "__attribute__((annotate(\"pm.space \(text(j))\")))")
                }
                j += 1
            }
            if let unknown = kept.first, binding == nil {
                error(paramStart, "unknown attribute '\(unknown)' on parameter \(number + 1) of kernel '\(kernel)'")
                return
            }
            // Without an attribute Metal assigns the next buffer index (tinygrad's
            // kernels rely on it): one past the previous buffer parameter's.
            var resolved = binding ?? KernelBinding(kind: .buffer, index: nextBuffer)
            (resolved.name, resolved.typeText) = parameterNames(paramStart, last)
            if let optional {
                if case .position = resolved.kind {
                    error(paramStart, "function_constant on parameter \(number + 1) of kernel '\(kernel)': pymetal makes "
                          + "[[buffer(n)]] and [[threadgroup(n)]] parameters optional, not thread positions")
                    return
                }
                (resolved.constant, resolved.absent) = (optional.name, optional.absent)
            }
            // (its [[attributes]] are no array extent)
            var words: [String] = []
            var t = paramStart
            while t <= last {
                if isPunct(t, 91), isPunct(t + 1, 91) { t = matching(t) + 1; continue }
                words.append(text(t))
                t += 1
            }
            resolved.pointer = resolved.kind == .threadgroup || words.contains("*") || words.contains("[")
                || (words.contains("&") && !words.contains("constant"))
            if resolved.kind == .buffer {
                guard resolved.index < 31 else {
                    error(paramStart, "parameter \(number + 1) of kernel '\(kernel)' would take buffer index "
                          + "\(resolved.index); Metal has 31 (0...30)")
                    return
                }
                nextBuffer = resolved.index + 1
            }
            result.append(resolved)
            if validation { checkedPointer(paramStart, last, resolved, kernel: kernel) }
        }
        while i < close {
            if isPunct(i, 40) || isPunct(i, 91) || isPunct(i, 123) {
                if let attrEnd = attributeEnd(i) { i = attrEnd + 1; continue }
                i = matching(i) + 1; continue
            }
            if isPunct(i, 60) { angle += 1 } else if isPunct(i, 62) { angle = max(0, angle - 1) }
            if isPunct(i, 44) && angle == 0 { finish(i - 1) }
            i += 1
        }
        finish(close - 1)
        return result
    }

    /// `function_constant(name)` on a kernel parameter: the bool function constant that declares it,
    /// and whether it is absent (the constant's value is false). Without values (a library compiled
    /// without constants) it is present; the kernel needs the constant (analyse) and is refused then.
    private func optionalParameter(_ attribute: Attribute, _ at: Int) -> (name: String, absent: Bool)? {
        if let range = attribute.arguments, range.count == 1, let derived = derivedConstant(text(range.lowerBound)) {
            return (text(range.lowerBound), derived == false)
        }
        guard let range = attribute.arguments, range.count == 1, tokens[range.lowerBound].kind == .identifier,
              let constant = constants.first(where: { $0.name == text(range.lowerBound) }) else {
            error(at, "function_constant on a kernel parameter takes the name of a bool function constant declared above "
                  + "(`constant bool name [[function_constant(index)]];`)")
            return nil
        }
        guard let value = constantValues?[constant.index] else { return (constant.name, false) }
        return (constant.name, !value.bytes.contains { $0 != 0 })
    }

    /// A bool constant derived from function constants, `constant bool gather_bias = do_gather && use_out_source;`
    /// (candle's mlx_gemm.metal), which Metal takes in `function_constant(...)` as it takes a function constant:
    /// nil when `name` is no such constant, else .some(its value), .some(nil) when compiled without values
    /// (the parameter is then present, as for a function constant). The analysis reaches the function constants
    /// it names through its initializer (definitions). Its initializer is read with !, &&, ||, parentheses,
    /// true, false and the names of bool function constants and of other such constants.
    private func derivedConstant(_ name: String, depth: Int = 0) -> Bool?? {
        guard depth < 16, let initializer = definitions[name]?.last, initializer.lowerBound >= 3,
              isPunct(initializer.lowerBound - 1, 61), text(initializer.lowerBound - 3) == "bool" else { return nil }
        var i = initializer.lowerBound
        let end = initializer.upperBound - 1 // its `;`
        var valid = true
        func primary() -> Bool? {
            if isPunct(i, 33) { i += 1; return primary().map { !$0 } }
            if isPunct(i, 40) {
                i += 1
                let value = disjunction()
                if isPunct(i, 41) { i += 1 } else { valid = false }
                return value
            }
            guard i < end, tokens[i].kind == .identifier else { valid = false; return nil }
            let word = text(i)
            i += 1
            if word == "true" || word == "false" { return word == "true" }
            if let constant = constants.first(where: { $0.name == word }) {
                guard let value = constantValues?[constant.index] else { return nil }
                return value.bytes.contains { $0 != 0 }
            }
            guard let derived = derivedConstant(word, depth: depth + 1) else { valid = false; return nil }
            return derived
        }
        func conjunction() -> Bool? {
            var value = primary()
            while isPunct(i, 38), isPunct(i + 1, 38) {
                i += 2
                let right = primary()
                value = value == false || right == false ? false : (value == nil || right == nil ? nil : true)
            }
            return value
        }
        func disjunction() -> Bool? {
            var value = conjunction()
            while isPunct(i, 124), isPunct(i + 1, 124) {
                i += 2
                let right = conjunction()
                value = value == true || right == true ? true : (value == nil || right == nil ? nil : false)
            }
            return value
        }
        let value = disjunction()
        return valid && i == end ? .some(value) : nil
    }

    /// Validation builds: a `T *name` buffer or threadgroup parameter becomes
    /// `::pm::rt::vptr<T, kind, index, "name"> name`, which checks every access against
    /// the bound length (runtime.h). Left alone: references, values, pointers
    /// to pointers, atomics (the atomic functions take plain pointers), `void *` (read
    /// only through casts to other types, which give plain pointers: ggml's `src0`), and
    /// an optional parameter that is absent (its function constant false): it is null, as
    /// without validation, so that a read whose value goes unused is dropped as on a GPU
    /// (MLX's and candle's GEMMs read `addmm_params->alpha` whatever `use_out_source` is).
    /// An instantiation that writes out its parameters leaves unchecked what its template did (candle's GEMM
    /// instantiations write `batch_shape [[buffer(6)]]` without the template's `function_constant(has_batch)`).
    private func checkedPointer(_ first: Int, _ last: Int, _ binding: KernelBinding, kernel: String) {
        guard !binding.absent else { absentIndices[kernel, default: []].insert(binding.index); return }
        guard absentIndices[kernel]?.contains(binding.index) != true else { return }
        let kind: Int
        switch binding.kind {
        case .buffer: kind = 0
        case .threadgroup: kind = 1
        case .position: return
        }
        var end = last + 1
        for j in first...last where attributeEnd(j) != nil { end = j; break }
        var first = first
        while first < end, text(first) == "threadgroup" { first += 1 } // removed by stripThreadgroup
        // unnamed in an explicit instantiation that spells out the parameters (ggml's `kernel void
        // f<float>(constant A &, device const float *, ...)`)
        let named = tokens[end - 1].kind == .identifier
        let star = named ? end - 2 : end - 1
        guard star > first, isPunct(star, 42) else { return }
        guard !(first..<star).contains(where: { isPunct($0, 42) || isPunct($0, 38) || isPunct($0, 91) }) else { return }
        let type = sourceText(Array(first..<star))
        // Metal's atomics are checked (bounds only: vcheck tracks no atomic); a user's type wrapping one
        // (MLX's mlx_atomic<T>) is left unchecked, as before: race tracking could not tell its atomic updates from stores
        let words = (first..<star).map(text).filter { !["const", "volatile", "device", "constant", "threadgroup", "metal", "::"].contains($0) }
        let metalAtomic = words.first.map { ["atomic", "atomic_int", "atomic_uint", "atomic_float", "atomic_bool"].contains($0) } ?? false
        guard !type.contains("atomic") || metalAtomic, !(first..<star).contains(where: { text($0) == "void" }) else { return }
        // an instantiation names the type the template's parameter has now: the name is the template's
        var name = named ? text(end - 1) : ""
        if let primary = primaryBindings {
            guard let same = primary.first(where: { $0.kind == binding.kind && $0.index == binding.index }),
                  same.pointer, !same.name.isEmpty else { return }
            name = same.name
        }
        guard !name.isEmpty else { return }
        let checked = "::pm::rt::vptr<\(type), \(kind), \(binding.index), \"\(name)\"> "
        remove(first, through: star, replacement: checked)
        compileOnly.insert(edits[edits.count - 1].range) // the AST reads the parameter as declared
        checkedTypes[first] = (star, checked)
    }

    /// A parameter's name and element type text, for reflection: `const float4 * restrict x`
    /// gives ("x", "float4"); the name is the last identifier when something precedes it.
    private func parameterNames(_ first: Int, _ last: Int) -> (String, String) {
        var plain: [Int] = []
        var j = first
        while j <= last {
            if let attrEnd = attributeEnd(j) { j = attrEnd + 1; continue }
            plain.append(j)
            j += 1
        }
        var name = ""
        if plain.count >= 2, let end = plain.last, tokens[end].kind == .identifier {
            name = text(end)
            plain.removeLast()
        }
        let qualifiers: Set<String> = ["const", "volatile", "restrict", "__restrict", "__restrict__", "*", "&", "&&",
                                       "device", "constant", "thread", "threadgroup"]
        let words = plain.map { text($0) }.filter { !qualifiers.contains($0) }
        return (name, words.joined(separator: " ").replacing(" :: ", with: "::")
            .replacing(" < ", with: "<").replacing(" >", with: ">"))
    }

    /// Metal accepts position (and binding) attributes on the parameters of any function, and ignores
    /// them where it is no kernel: ordinary functions (ggml's `*_impl` helpers), member functions,
    /// static members and constructors (MLX's steel `BlockLoader`, sort's `[[threadgroup(0)]]`), function
    /// types (ggml's `typedef void (name_t)(... [[threadgroup_position_in_grid]])`). Removed wherever they
    /// stand inside parentheses; a kernel's own were read and removed first (parameters), and of two
    /// edits at one place the first made wins (applyEdits).
    private func removeParameterAttributes() {
        var depth = 0
        var j = 0
        while j < tokens.count {
            if isPunct(j, 40) { depth += 1 } else if isPunct(j, 41) { depth -= 1 }
            if depth > 0, isUser(j), let end = attributeEnd(j) {
                let kept = parseAttributes(j, end).filter { !MSLAttributes.isMSL($0.name) }.map(attributeSource)
                remove(j, through: end, replacement: kept.isEmpty ? "" : "[[\(kept.joined(separator: ", "))]]")
                j = end + 1
                continue
            }
            j += 1
        }
    }

    // MARK: - threadgroup

    private func stripThreadgroup(in range: Range<Int>, storageAllowed: Bool) {
        var i = range.lowerBound
        while i < range.upperBound {
            guard tokens[i].kind == .identifier, text(i) == "threadgroup", !isPunct(i + 1, 40) else { i += 1; continue }
            // Inside an attribute list `[[threadgroup(0)]]` it is followed by `(`; handled above.
            let statementStart = i == 0 || isPunct(i - 1, 123) || isPunct(i - 1, 59) || isPunct(i - 1, 125)
            if storageAllowed && statementStart, let end = storageDeclaration(i, limit: range.upperBound) {
                i = end + 1
                continue
            }
            remove(i, through: i)
            i += 1
        }
    }

    /// `threadgroup T a[N], b;` -> tg_var declarations; nil when it declares a pointer or reference.
    private func storageDeclaration(_ at: Int, limit: Int) -> Int? {
        var end = at + 1
        var firstStop: Int? = nil
        while end < limit, !isPunct(end, 59) {
            if firstStop == nil, isPunct(end, 61) || isPunct(end, 91) { firstStop = end }
            if isPunct(end, 40) || isPunct(end, 123) { end = matching(end) }
            end += 1
        }
        guard end < limit else { return nil }
        let stop = firstStop ?? end
        for j in (at + 1)..<stop where isPunct(j, 42) || isPunct(j, 38) { return nil }
        // Split declarators at top-level commas.
        var declarators: [Range<Int>] = []
        var begin = at + 1
        var angle = 0
        var j = at + 1
        while j < end {
            if isPunct(j, 60) { angle += 1 } else if isPunct(j, 62) { angle = max(0, angle - 1) }
            if isPunct(j, 40) || isPunct(j, 91) { j = matching(j) + 1; continue }
            if isPunct(j, 44) && angle == 0 { declarators.append(begin..<j); begin = j + 1 }
            j += 1
        }
        declarators.append(begin..<end)
        // The first declarator carries the type: everything before its name.
        let first = declarators[0]
        let firstBracket = first.first(where: { isPunct($0, 91) || isPunct($0, 61) }) ?? first.upperBound
        let nameIndex = firstBracket - 1
        guard nameIndex > first.lowerBound, tokens[nameIndex].kind == .identifier else { return nil }
        let type = sourceText(first.lowerBound..<nameIndex)
        var replacement: [String] = []
        for (n, declarator) in declarators.enumerated() {
            let nameAt = n == 0 ? nameIndex : declarator.lowerBound
            guard nameAt < declarator.upperBound, tokens[nameAt].kind == .identifier else { return nil }
            // `threadgroup float b[32] = {0};` (MLX's layer_norm): Metal accepts the initializer but threadgroup
            // memory is not initialised (the kernels write it themselves, behind a barrier): it is left out
            let initializer = initializerSign(declarator) ?? declarator.upperBound
            let dims = sourceText((nameAt + 1)..<initializer)
            let site = sites.count
            sites.append((at, site))
            // decltype(auto): a reference, or a checked view in validation builds (runtime.h)
            let named = validation ? ", \"\(text(nameAt))\"" : "" // for validation's messages
            if validation { checkedArrays.insert(text(nameAt)) }
            replacement.append("decltype(auto) \(text(nameAt)) = ::pm::rt::tg_var<\(type) \(dims), \(site)\(named)>();")
        }
        remove(at, through: end, replacement: replacement.joined(separator: " "))
        return end
    }

    /// The `=` that starts a declarator's initializer: one outside its array bounds, whose
    /// `==` (`a[k::n == 0 ? 1 : k::n]`, candle's and MLX's gemv) the lexer gives as two `=`.
    private func initializerSign(_ declarator: Range<Int>) -> Int? {
        var j = declarator.lowerBound
        while j < declarator.upperBound {
            if isPunct(j, 91) || isPunct(j, 40) { j = matching(j) + 1; continue }
            if isPunct(j, 61) { return j }
            j += 1
        }
        return nil
    }

    /// The function an instantiation that names no template arguments makes (MLX's conv.metal:
    /// `template [[host_name("n")]] [[kernel]] void f(const device float* in [[buffer(0)]], ...);`,
    /// deduced from its parameter types): `&::f` alone names the whole overload set, so the launcher
    /// reaches it through the function type of the instantiation's own parameter list, as clang's
    /// deduction does. An lvalue naming the function, to which the launcher applies `&`.
    private func deducedSpecialization(_ name: String, parameters open: Int) -> String {
        let close = matching(open)
        var parts: [String] = []
        var kept: [Int] = []
        var j = open + 1
        while j < close {
            if let end = attributeEnd(j) { j = end + 1; continue }
            if let checked = checkedTypes[j] { // validation: the parameter's checked type, as the function now has
                parts += [sourceText(kept), checked.text]
                kept = []
                j = checked.end + 1
                continue
            }
            kept.append(j)
            j += 1
        }
        return "*static_cast<void (*)(\((parts + [sourceText(kept)]).joined(separator: " ")))>(&\(name))"
    }

    /// Tokens as written: a space only where the source has one, so that a
    /// punctuator the lexer splits (`<<`, `>>=`, `::`) is not torn apart. Address
    /// spaces are left out (`constant` is `const`), as removeAddressSpaces does.
    private func sourceText(_ range: Range<Int>) -> String { sourceText(Array(range)) }
    private func sourceText(_ indices: [Int]) -> String {
        var out = ""
        for i in indices {
            var word = text(i)
            if tokens[i].kind == .identifier && Self.addressSpaces.contains(word) {
                guard word == "constant" else { continue }
                word = "const"
            }
            if !out.isEmpty && i > indices[0] && tokens[i].start != tokens[i - 1].end { out += " " }
            out += word
        }
        return out
    }

    // MARK: - Conversions written as casts

    /// Metal converts in a cast to a vector type (`(float4) h4`, `static_cast<float4>(h4)`), in a
    /// functional cast whose type is a template parameter or an alias (`TC(x)` with TC = float4,
    /// `c_T(a, b)` with `using c_T = vec<float, 2>`, `vec<T, 2>(a, b)`) and between half and bfloat.
    /// Vectors are clang ext vectors here, for which a cast is a bit cast (refused when the sizes
    /// differ, silently wrong when not), and clang refuses a cast between half and bfloat: each becomes
    /// ::metal::pm_construct<T>(...) (types.h), which converts as the constructor float4(h4) does and is
    /// T(...) for every other type. Which names are types is read from the tokens: Metal's vector type
    /// names, half and bfloat, the template type parameters in scope, and the source's aliases.
    private func rewriteConversions() {
        var aliases: Set<String> = ["half", "bfloat"]
        var parameters: [(names: Set<String>, scope: Range<Int>)] = []
        for i in tokens.indices where tokens[i].kind == .identifier && isUser(i) {
            switch text(i) {
            case "using" where i + 2 < tokens.count && tokens[i + 1].kind == .identifier && isPunct(i + 2, 61):
                aliases.insert(text(i + 1))
            case "typedef":
                var j = i + 1
                while j < tokens.count, !isPunct(j, 59) { if isPunct(j, 40) || isPunct(j, 123) { j = matching(j) }; j += 1 }
                if tokens[j - 1].kind == .identifier { aliases.insert(text(j - 1)) }
            case "template" where isPunct(i + 1, 60):
                let close = skipAngles(i + 1) - 1
                let names = templateParameters(i + 1).filter(\.isType).map(\.name)
                var j = close + 1 // the templated declaration: up to its `;` or the end of its body
                while j < tokens.count, !isPunct(j, 59), !isPunct(j, 123) { if isPunct(j, 40) || isPunct(j, 91) { j = matching(j) }; j += 1 }
                if isPunct(j, 123) { j = matching(j) }
                if !names.isEmpty { parameters.append((Set(names), close..<min(j + 1, tokens.count))) }
            default: break
            }
        }
        func isType(_ i: Int) -> Bool {
            guard tokens[i].kind == .identifier else { return false }
            let name = text(i)
            return aliases.contains(name) || Self.vectorTypes.contains(name)
                || parameters.contains { $0.scope.contains(i) && $0.names.contains(name) }
        }
        let construct = "::metal::pm_construct"
        var i = 0
        while i < tokens.count {
            defer { i += 1 }
            guard isUser(i), tokens[i].kind == .identifier else { continue }
            let before = i > 0 ? text(i - 1) : ""
            let qualified = [".", "->", "::", "operator", "struct", "class", "typename", "using", "enum", "~"].contains(before)
            if text(i) == "static_cast", isPunct(i + 1, 60), isType(i + 2), isPunct(i + 3, 62), isPunct(i + 4, 40) {
                remove(i, through: i, replacement: construct)                   // static_cast<float4>(h4)
            } else if text(i) == "vec", !qualified || before == "::", isPunct(i + 1, 60), !isPunct(i - 1, 60) {
                let close = skipAngles(i + 1) - 1
                if isPunct(close + 1, 40) {                                    // vec<T, 2>(a, b)
                    insert(before: before == "::" && i >= 2 && text(i - 2) == "metal" ? i - 2 : i, construct + "<")
                    insert(before: close + 1, ">")
                }
            } else if !qualified, isType(i), isPunct(i + 1, 40), !isPunct(i + 2, 42), !isPunct(i + 2, 38),
                      !Self.vectorTypes.contains(text(i)) {
                remove(i, through: i, replacement: "\(construct)<\(text(i))>")  // TC(x), c_T(a, b), half(b)
            } else if isPunct(i - 1, 40), isPunct(i + 1, 41), isType(i), castContext(i - 2, isType: isType),
                      let end = unaryEnd(i + 2, isType: isType), end + 1 < tokens.count {
                remove(i - 1, through: i + 1, replacement: "\(construct)<\(text(i))>(") // (float4) h4
                insert(before: end + 1, ")")
            }
        }
    }

    /// A braced list as a call's argument (MLX's `elem_to_loc_2_nd<IdxT>({N * index.x, index.y, index.z}, ...)`
    /// for a `uint3` parameter): clang cannot initialise an ext vector parameter from one, so the list becomes
    /// ::metal::pm_braced(...) (types.h), which converts to the parameter's type. Lists holding lists are left.
    private func rewriteBracedArguments() {
        var open: [Int] = []
        for i in tokens.indices where tokens[i].kind == .punctuation {
            if isPunct(i, 40) || isPunct(i, 91) { open.append(i); continue }
            if isPunct(i, 41) || isPunct(i, 93) || isPunct(i, 125) { _ = open.popLast(); continue }
            guard isPunct(i, 123) else { continue }
            defer { open.append(i) }
            guard isUser(i), let paren = open.last, isPunct(paren, 40), isPunct(i - 1, 40) || isPunct(i - 1, 44), paren > 0,
                  (tokens[paren - 1].kind == .identifier && !Self.notCalls.contains(text(paren - 1))) || isPunct(paren - 1, 62)
            else { continue }
            let close = matching(i)
            guard isPunct(close + 1, 44) || isPunct(close + 1, 41), !((i + 1)..<close).contains(where: { isPunct($0, 123) })
            else { continue }
            remove(i, through: i, replacement: "::metal::pm_braced(")
            remove(close, through: close, replacement: ")")
        }
    }
    private static let notCalls: Set<String> = ["if", "for", "while", "switch", "return", "sizeof", "alignof", "decltype"]

    static let vectorTypes: Set<String> = Set(["char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                                "half", "float", "bfloat"].flatMap { t in (2...4).map { "\(t)\($0)" } })

    /// Whether a `(` after token `i` can open a cast: after an operator, a bracket, `,`, `;`, `=`, `return`
    /// or another cast, not after a name or `)` (a call, sizeof(T), alignof(T)).
    private func castContext(_ i: Int, isType: (Int) -> Bool) -> Bool {
        guard i >= 0 else { return true }
        switch tokens[i].kind {
        case .identifier: return ["return", "case", "else", "do"].contains(text(i))
        case .number, .string, .character: return false
        case .punctuation:
            if isPunct(i, 41) { return i >= 2 && isPunct(i - 2, 40) && isType(i - 1) && castContext(i - 3, isType: isType) }
            return !isPunct(i, 93) && !["++", "--"].contains(text(i))
        }
    }

    /// The last token of the unary expression (a cast's operand) starting at `i`: prefix operators,
    /// a name, literal or parenthesised group, then subscripts, calls and member accesses; nil when
    /// it does not start one.
    private func unaryEnd(_ i: Int, isType: (Int) -> Bool) -> Int? {
        guard i < tokens.count else { return nil }
        if tokens[i].kind == .punctuation, ["-", "+", "!", "~", "*", "&", "++", "--"].contains(text(i)) {
            return unaryEnd(i + 1, isType: isType)
        }
        var end: Int
        if isPunct(i, 40) {
            end = matching(i)
            // `(T)` is a cast in its turn, whose operand follows: (float4) (half4) x
            if end == i + 2, isType(i + 1) { return unaryEnd(end + 1, isType: isType) }
        } else if tokens[i].kind == .number || tokens[i].kind == .string || tokens[i].kind == .character {
            end = i
        } else if tokens[i].kind == .identifier {
            end = i
            while text(end + 1) == "::", end + 2 < tokens.count, tokens[end + 2].kind == .identifier { end += 2 }
            // a template's arguments, when a call follows them: (float4) load<T>(p)
            if isPunct(end + 1, 60), case let after = skipAngles(end + 1), after < tokens.count, isPunct(after, 40) {
                end = after - 1
            }
        } else { return nil }
        while end + 1 < tokens.count {
            if isPunct(end + 1, 91) || isPunct(end + 1, 40) { end = matching(end + 1); continue }
            if (isPunct(end + 1, 46) || text(end + 1) == "->"), end + 2 < tokens.count, tokens[end + 2].kind == .identifier {
                end += 2; continue
            }
            if text(end + 1) == "++" || text(end + 1) == "--" { end += 1; continue }
            break
        }
        return end
    }

    // MARK: - Function constants

    /// `constant T name [[function_constant(i)]];` becomes `constexpr T name = value;`,
    /// with the value MetalCPU compiles this source for (makeFunction(name:constantValues:)),
    /// or T() when it has none (is_function_constant_defined is then false, and MetalCPU
    /// refuses a pipeline whose kernel uses it).
    private func functionConstant(_ start: Int, _ end: Int, index: Int, attribute: Int) {
        var first = start
        while first < attribute, ["constant", "const", "static", "constexpr"].contains(text(first)) { first += 1 }
        let nameAt = attribute - 1
        guard nameAt > first, tokens[nameAt].kind == .identifier, isPunct(end, 59) else {
            error(start, "a function constant is declared as `constant T name [[function_constant(index)]];`")
            return
        }
        let name = text(nameAt)
        let type = (first..<nameAt).map { text($0) }.joined(separator: " ")
        if constants.contains(where: { $0.index == index }) {
            error(attribute, "function constant index \(index) is used twice")
        }
        constants.append(FunctionConstant(name: name, index: index, qualifiedName: declaratorSource([nameAt])))
        var replacement = "constexpr \(type) \(name) = \(type)();"
        if let value = constantValues?[index] {
            let given = MTLDataType(rawValue: value.type).map { "\($0)" } ?? "MTLDataType \(value.type)"
            let bytes = value.bytes.isEmpty ? "0" : value.bytes.map { "0x" + ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: ", ")
            replacement = "static_assert(::pm::abi::data_type<\(type)>() == \(value.type), \"function constant '\(name)' "
                + "(index \(index)) is declared '\(type)' but was given a \(given) value\"); "
                + "constexpr \(type) \(name) = ::pm::abi::constant_value<\(type)>({\(bytes)});"
        }
        remove(start, through: end, replacement: replacement)
    }

    /// `is_function_constant_defined(name)` -> true / false.
    private func rewriteConstantQueries() {
        for i in tokens.indices where tokens[i].kind == .identifier && isUser(i) && text(i) == "is_function_constant_defined" {
            guard isPunct(i + 1, 40), i + 3 < tokens.count, tokens[i + 2].kind == .identifier, isPunct(i + 3, 41) else {
                error(i, "is_function_constant_defined takes the name of a function constant")
                continue
            }
            guard let constant = constants.first(where: { $0.name == text(i + 2) }) else {
                error(i + 2, "'\(text(i + 2))' is not a function constant ([[function_constant(index)]])")
                continue
            }
            definedQueries.insert(i + 2)
            remove(i, through: i + 3, replacement: constantValues?[constant.index] != nil ? "true" : "false")
        }
    }

    /// `T name = initializer;` at namespace scope: the name and the initializer's tokens.
    private func initializedVariable(_ start: Int, _ end: Int) -> (String, Range<Int>)? {
        var i = start
        while i < end {
            if isPunct(i, 40) || isPunct(i, 91) || isPunct(i, 60) { return nil } // functions, templates: not this
            if isPunct(i, 61), i > start, tokens[i - 1].kind == .identifier { return (text(i - 1), (i + 1)..<(end + 1)) }
            i += 1
        }
        return nil
    }

    // MARK: - What Metal refuses

    /// C++ the MSL specification excludes (its section on C++ restrictions, and the scalar
    /// types it lists), so that code that fails on a Mac fails here first.
    private static let refused: [String: String] = [
        "double": "Metal has no double type (use float)",
        "new": "Metal has no new / delete operators (no dynamic allocation)",
        "delete": "Metal has no new / delete operators (no dynamic allocation)",
        "throw": "Metal has no exception handling",
        "try": "Metal has no exception handling",
        "catch": "Metal has no exception handling",
        "virtual": "Metal has no virtual functions",
        "thread_local": "Metal has no thread_local storage",
        "goto": "Metal has no goto statement",
        "dynamic_cast": "Metal has no dynamic_cast (no run-time type information)",
        "typeid": "Metal has no typeid (no run-time type information)",
    ]

    /// The words above in the user's code (`= delete` declares a deleted function: allowed), and a
    /// source that names namespace `metal` but includes no Metal header (MetalCPU includes
    /// <metal_stdlib> itself; Metal's scalar and vector types are built in, but namespace metal and
    /// its functions exist only where a Metal header is included). clang -E -dI keeps each #include
    /// as a line (already expanded: removed here).
    private func refuseWhatMetalRefuses() {
        var includesMetal = false
        var namesMetal: Int? = nil
        for i in tokens.indices {
            let token = tokens[i]
            if token.kind == .punctuation, src.bytes[token.start] == 35, token.end - token.start > 8 {
                let directive = text(i)
                if directive.hasPrefix("#include") || directive.hasPrefix("#import") {
                    if isUser(i), directive.contains("<metal_") { includesMetal = true }
                    remove(i, through: i)
                } else if isUser(i), Self.unrollWithMacro(directive) {
                    remove(i, through: i)
                }
                continue
            }
            guard isUser(i) else { continue }
            if namesMetal == nil, token.kind == .identifier, text(i) == "metal" { namesMetal = i }
            guard token.kind == .identifier, let reason = Self.refused[text(i)] else { continue }
            if text(i) == "delete" && isPunct(i - 1, 61) { continue }
            error(i, "'\(text(i))' is not supported: \(reason) (Metal Shading Language specification)")
        }
        if requireMetalHeader, let namesMetal, !includesMetal {
            error(namesMetal, "namespace metal is used, but the source includes no Metal header: add #include <metal_stdlib> "
                  + "(Metal declares namespace metal and its functions only where it is included; without it this source "
                  + "does not compile on a Mac)")
        }
    }

    /// `#pragma unroll (MIN(DK8/2, 4*NSG))` (ggml): clang -E leaves a pragma's argument unexpanded, and
    /// the compile of the preprocessed unit then fails on the macro's name (clang 21 crashes on it). The
    /// pragma is a hint that does not change what the loop computes: dropped when its count calls a name.
    static func unrollWithMacro(_ directive: String) -> Bool {
        let words = directive.dropFirst().split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "(" })
        guard words.first == "pragma", words.dropFirst().first == "unroll" || words.dropFirst(2).first == "unroll" else {
            return false
        }
        var previousIsName = false
        for c in directive.drop(while: { $0 != "(" }).dropFirst() {
            if c == "(" && previousIsName { return true }
            if c.isLetter || c == "_" || (previousIsName && c.isNumber) { previousIsName = true } else if c != " " { previousIsName = false }
        }
        return false
    }

    // MARK: - Address spaces

    /// `device`, `thread`, `constant` (prelude.h: words, not macros, for the front end): removed
    /// from the user's code, `constant` read-only as in MSL (`const`).
    private func removeAddressSpaces() {
        for i in tokens.indices where tokens[i].kind == .identifier && isUser(i) {
            switch text(i) {
            case "device", "thread": remove(i, through: i)
            case "constant": remove(i, through: i, replacement: "const")
            default: break
            }
        }
    }

    private static let addressSpaces: Set<String> = ["device", "thread", "threadgroup", "constant"]

    /// `struct` / `class` / `union` before the body, at the top level of the head: a class definition.
    private func isClassHead(_ head: Range<Int>) -> Bool {
        var i = head.lowerBound
        while i < head.upperBound {
            if isPunct(i, 40) || isPunct(i, 91) { i = matching(i) + 1; continue }
            if isPunct(i, 61) { return false } // `S s = {...}`: an initializer
            if isPunct(i, 60), i > head.lowerBound, text(i - 1) == "template" { i = skipAngles(i); continue }
            if tokens[i].kind == .identifier, ["struct", "class", "union"].contains(text(i)) { return true }
            i += 1
        }
        return false
    }

    /// Member functions and constructors overloaded on the address space of `this`
    /// (`S() thread`, `S() threadgroup`, `float get() const device`): every address
    /// space is the same memory on the CPU, so the overloads would collide as C++;
    /// the first of each set is kept (the qualifier removed) and the others dropped.
    /// Nested classes are handled likewise.
    private func mergeAddressSpaceOverloads(_ body: Range<Int>) {
        dropDefaultedConstructors(body)
        var seen: [String: String] = [:]
        var i = body.lowerBound
        while i < body.upperBound {
            // access specifiers: `public:`
            if tokens[i].kind == .identifier, ["public", "private", "protected"].contains(text(i)), isPunct(i + 1, 58),
               !isPunct(i + 2, 58) {
                i += 2; continue
            }
            if isPunct(i, 59) { i += 1; continue }
            let start = i
            var memberBody: Range<Int>? = nil
            var j = i
            while j < body.upperBound {
                if isPunct(j, 59) { break }
                if isPunct(j, 40) || isPunct(j, 91) { j = matching(j) + 1; continue }
                if isPunct(j, 60), j > start, text(j - 1) == "template" { j = skipAngles(j); continue }
                if isPunct(j, 123) {
                    let close = matching(j)
                    memberBody = (j + 1)..<close
                    // braces of a member initializer (`: v{0}, w{1} {}`) go on; a body ends the member
                    if isPunct(close + 1, 44) || isPunct(close + 1, 123) || isPunct(close + 1, 59) { j = close + 1; continue }
                    j = close
                    break
                }
                j += 1
            }
            let end = min(j, body.upperBound - 1)
            if let memberBody, isClassHead(start..<(memberBody.lowerBound - 1)) {
                mergeAddressSpaceOverloads(memberBody)
            } else if let key = addressSpaceQualified(start, end)
                        ?? addressSpaceFreeKey(start..<(memberBody.map { $0.lowerBound - 1 } ?? end), hasBody: memberBody != nil) {
                if isDuplicate(key, memberBody, start, in: &seen) { remove(start, through: end) }
            }
            i = end + 1
        }
    }

    /// A class whose constructors are all defaulted where declared (`constexpr RMS<T>() = default;
    /// constexpr RMS<T>() threadgroup = default;`, candle's reduce.metal) is an aggregate in C++17, on
    /// which MSL is based (`return { 0, 0 };` initialises its members), and not in C++20 (P1008), which
    /// clang compiles here: those declarations are dropped. The implicit constructors they leave are the
    /// same ones (trivial, constexpr where they can be); a class with any other constructor, or an
    /// `explicit` one (no aggregate in C++17 either), keeps its declarations.
    private func dropDefaultedConstructors(_ body: Range<Int>) {
        var k = body.lowerBound - 2
        while k >= 0, !(tokens[k].kind == .identifier && ["struct", "class", "union"].contains(text(k))) {
            if isPunct(k, 59) || isPunct(k, 125) || isPunct(k, 123) { return }
            k -= 1
        }
        var nameAt = k + 1
        while nameAt < body.lowerBound, text(nameAt) == "alignas" || isPunct(nameAt, 91) {
            nameAt = (isPunct(nameAt, 91) ? matching(nameAt) : matching(nameAt + 1)) + 1
        }
        guard k >= 0, nameAt < body.lowerBound, tokens[nameAt].kind == .identifier else { return }
        let name = text(nameAt)
        var defaulted: [Range<Int>] = []
        var depth = 0
        var memberStart = body.lowerBound
        var i = body.lowerBound
        while i < body.upperBound {
            if isPunct(i, 40) || isPunct(i, 91) || isPunct(i, 123) {
                // a constructor: `[specifiers] Name[<...>] (` at the start of a member
                if isPunct(i, 40), depth == 0, let at = constructorName(memberStart..<i, name) {
                    let close = matching(i)
                    var end = close + 1
                    while end < body.upperBound, !isPunct(end, 59), !isPunct(end, 123), !isPunct(end, 58) { end += 1 }
                    guard isPunct(end, 59), end >= 2, text(end - 1) == "default", isPunct(end - 2, 61),
                          !(memberStart..<at).contains(where: { text($0) == "explicit" }) else { return }
                    defaulted.append(memberStart..<(end + 1))
                    i = end + 1; memberStart = i; continue
                }
                if isPunct(i, 123) { depth += 1 }
                i = isPunct(i, 123) ? i + 1 : matching(i) + 1; continue
            }
            if isPunct(i, 125) { depth -= 1; if depth == 0 { memberStart = i + 1 } }
            else if depth == 0, isPunct(i, 59) || (isPunct(i, 58) && i > memberStart && !isPunct(i + 1, 58) && !isPunct(i - 1, 58)
                                                    && ["public", "private", "protected"].contains(text(i - 1))) {
                memberStart = i + 1
            }
            i += 1
        }
        for range in defaulted { remove(range.lowerBound, through: range.upperBound - 1) }
    }

    /// The token of `name` when `head` (a member up to a `(`) is `[specifiers] name` or `name<...>`.
    private func constructorName(_ head: Range<Int>, _ name: String) -> Int? {
        var last = head.upperBound - 1
        if isPunct(last, 62) { // `RMS<T>`
            var j = last, angle = 0
            while j >= head.lowerBound {
                if isPunct(j, 62) { angle += 1 } else if isPunct(j, 60) { angle -= 1; if angle == 0 { break } }
                j -= 1
            }
            last = j - 1
        }
        guard last >= head.lowerBound, tokens[last].kind == .identifier, text(last) == name,
              last == head.lowerBound || !(isPunct(last - 1, 126) || text(last - 1) == "::" || tokens[last - 1].kind == .identifier
                                           && !["constexpr", "inline", "explicit", "METAL_FUNC"].contains(text(last - 1)))
        else { return nil }
        return last
    }

    /// Whether a declaration with this address-space-free `key` was seen (recording it if not). Every
    /// address space is the same memory here, so such overloads are one function; when their bodies
    /// differ the CPU cannot choose as the GPU would: an error rather than a silently different result.
    private func isDuplicate(_ key: String, _ body: Range<Int>?, _ at: Int, in seen: inout [String: String]) -> Bool {
        let code = body.map { range in
            range.filter { !(tokens[$0].kind == .identifier && Self.addressSpaces.contains(text($0))) }.map { text($0) }
                .joined(separator: " ")
        } ?? ""
        guard let first = seen[key] else {
            seen[key] = code
            return false
        }
        if first != code {
            error(at, "overloads that differ only in address spaces (device, threadgroup, constant, thread) have "
                  + "different bodies: pymetal's CPU backend runs every address space in one memory and cannot tell them apart")
        }
        return true
    }

    /// The text of a declaration head that names an address space, as C++ sees it once the address
    /// spaces are gone (`constant` is `const`); nil when it names none.
    private func addressSpaceFreeKey(_ head: Range<Int>, hasBody: Bool) -> String? {
        guard head.contains(where: { tokens[$0].kind == .identifier && Self.addressSpaces.contains(text($0)) }) else {
            return nil
        }
        var words: [String] = []
        for i in head {
            var word = text(i)
            if tokens[i].kind == .identifier && Self.addressSpaces.contains(word) {
                guard word == "constant" else { continue }
                word = "const"
            }
            // `constant const int*` is C++'s `const const int*`, one `const` (MLX's utils.h overloads
            // elem_to_loc on `device const int*` and `constant const int*`)
            if word == "const" && words.last == "const" { continue }
            words.append(word)
        }
        return words.joined(separator: " ") + (hasBody ? " {}" : " ;")
    }

    /// For a member `start...end` with an address space after its parameter list, its
    /// signature without the address spaces (removed from the source here); else nil.
    private func addressSpaceQualified(_ start: Int, _ end: Int) -> String? {
        var i = start
        var params: Int? = nil
        while i <= end {
            if isPunct(i, 60), i > start, text(i - 1) == "template" { i = skipAngles(i); continue }
            if isPunct(i, 91) { i = matching(i) + 1; continue }
            // METAL_FUNC's __attribute__((__always_inline__)) is no parameter list
            if ["__attribute__", "alignas", "decltype"].contains(text(i)), isPunct(i + 1, 40) { i = matching(i + 1) + 1; continue }
            if isPunct(i, 40) {
                // `operator()(...)`: the parameter list is the second group
                if i > start, text(i - 1) == "operator" { i = matching(i) + 1; continue }
                params = i
                break
            }
            if isPunct(i, 123) || isPunct(i, 61) { return nil }
            i += 1
        }
        guard let open = params else { return nil }
        var qualifiers: [Int] = []
        var k = matching(open) + 1
        while k <= end, !isPunct(k, 123), !isPunct(k, 59), !isPunct(k, 61), !isPunct(k, 58), text(k) != "->" {
            if tokens[k].kind == .identifier, Self.addressSpaces.contains(text(k)) { qualifiers.append(k) }
            k += 1
        }
        let key = (start..<k).filter { !qualifiers.contains($0) }.map { text($0) }.joined(separator: " ")
        guard !qualifiers.isEmpty else {
            // unqualified (`MD() = default;`): the key a qualified one (`MD() threadgroup = default;`) meets
            let spaces = (start..<k).contains { tokens[$0].kind == .identifier && Self.addressSpaces.contains(text($0)) }
            return spaces ? nil : key
        }
        for q in qualifiers { remove(q, through: q) }
        return key
    }

    // MARK: - Analysis

    /// Which kernels need fibers, and which threadgroup sites each uses: everything
    /// reachable by name from the kernel's body (conservative: names, not overloads).
    private func analyse() throws {
        for index in kernels.indices {
            var bodies: [Range<Int>] = []
            // the constants that make parameters optional are needed even if the body never names them
            let optionals = kernels[index].bindings.compactMap(\.constant)
            var seen = Set(optionals)
            var work: [String] = (kernelRoots[index] ?? []) + optionals
            if let body = kernelBodies[index] { bodies.append(body) }
            let ownTemplate = kernelBodies[index] == nil ? nil : kernelRoots[index]?.last
            var scanned = 0
            var fibers = false
            while true {
                while scanned < bodies.count {
                    for t in bodies[scanned] where tokens[t].kind == .identifier && !definedQueries.contains(t) {
                        let name = text(t)
                        if MSLAttributes.rendezvous.contains(name) { fibers = true }
                        if !seen.contains(name) { seen.insert(name); work.append(name) }
                    }
                    scanned += 1
                }
                guard let name = work.popLast() else { break }
                if MSLAttributes.rendezvous.contains(name) { fibers = true }
                if let defs = definitions[name] { bodies.append(contentsOf: defs) }
                // An instantiation's own template is the overload it instantiates (its body, above), not every
                // overload of the name: each takes the mode its own body needs. Another kernel template reached
                // by name: all of its overloads.
                if name != ownTemplate, let overloads = templateKernels[name] {
                    for template in overloads where !bodies.contains(template.body) { bodies.append(template.body) }
                }
            }
            kernels[index].usesFibers = fibers
            // A constant the source asks is_function_constant_defined about is optional (the code guards its uses).
            let optional = Set(definedQueries.map { text($0) })
            kernels[index].constants = constants.filter { seen.contains($0.name) && !optional.contains($0.name) }.map(\.index)
            kernels[index].sites = sites.filter { site in bodies.contains { $0.contains(site.token) } }.map(\.id)
            if fibers { fiberBodies.formUnion(bodies) }
        }
        try readLockstepFacts()
        for index in kernels.indices where kernels[index].usesFibers && lockstepAllowed {
            kernels[index].lockstep = makeLockstep(index)
        }
        addYieldPoints()
    }

    // MARK: - Loop yield points

    /// Gives the strided loops of code reachable from a FIBERS kernel a yield
    /// point (pm::rt::tick in runtime.h explains why): a counter of its own,
    /// declared by a one-pass wrapper loop so that the rewrite is a statement
    /// wherever the loop was one, and a tick at each back edge:
    ///   for (A; B; C) S  ->  for (loop_yield y; y.once; y.once = false) for (A; B; tick(y), C) S
    /// Strided: C steps by a variable or by 32 or more (`i += grid`, `i += tpg * 4`,
    /// `i += 256`), the loops in which neighbouring threads read neighbouring
    /// addresses at the same time on a GPU. Loops stepping by a small constant
    /// (`i++`: a thread walking its own data) only pay for yields, and
    /// `while` / `do` loops cannot be told apart. Left alone too: loops that meet
    /// at a barrier / SIMD function (directly or through a function they call:
    /// they keep the lanes together already), loops with a literal bound
    /// (`j < 8`: bounded work, and unrolling or vectorising them matters more),
    /// loops under a #pragma (unroll hints apply to the next loop).
    private func addYieldPoints() {
        var memo: [String: Bool] = [:]
        var loop = 0
        for body in fiberBodies.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            for i in body where tokens[i].kind == .identifier && text(i) == "for" && isPunct(i + 1, 40) {
                let close = matching(i + 1)
                let semicolons = headerSemicolons(i + 1)
                let pragma = i > 0 && tokens[i - 1].kind == .punctuation && src.bytes[tokens[i - 1].start] == 35
                guard semicolons.count == 2, !pragma, strided((semicolons[1] + 1)..<close),
                      !literalBound((semicolons[0] + 1)..<semicolons[1]),
                      !meetsOthers((i + 2)..<statementEnd(close + 1), &memo) else { continue }
                loop += 1
                insert(before: i, "for (::pm::rt::loop_yield __pm_y\(loop); __pm_y\(loop).once; __pm_y\(loop).once = false) ")
                insert(before: semicolons[1] + 1, "::pm::rt::tick(__pm_y\(loop)), ")
            }
        }
    }

    /// The top-level semicolons of the `for` header opened at `open` (two; none: range-based).
    func headerSemicolons(_ open: Int) -> [Int] {
        let close = matching(open)
        var semicolons: [Int] = []
        var j = open + 1
        while j < close {
            if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) + 1; continue }
            if isPunct(j, 59) { semicolons.append(j) }
            j += 1
        }
        return semicolons
    }

    /// A for loop's increment that steps by a variable or by a number of 32 or more.
    func strided(_ increment: Range<Int>) -> Bool {
        guard let first = increment.first(where: { tokens[$0].kind == .identifier }) else { return false }
        let variable = text(first)
        return increment.contains { t in
            switch tokens[t].kind {
            case .identifier: return text(t) != variable
            case .number: return Self.integerValue(text(t)).map { $0 >= 32 } ?? true
            default: return false
            }
        }
    }

    private func insert(before token: Int, _ text: String) {
        let at = tokens[token].start
        edits.append((at..<at, text))
    }

    /// The last token (exclusive) of the statement starting at `start`: a braced
    /// block, or up to the next top-level `;` (an approximation for nested
    /// unbraced statements that errs on the long side).
    func statementEnd(_ start: Int) -> Int {
        if isPunct(start, 123) { return matching(start) + 1 }
        var j = start
        while j < tokens.count, !isPunct(j, 59) {
            if isPunct(j, 40) || isPunct(j, 91) || isPunct(j, 123) { j = matching(j) }
            j += 1
        }
        return min(j + 1, tokens.count)
    }

    /// `i < 8`, `j <= 16`, `k != 4` ...: a condition comparing a name with a number literal.
    func literalBound(_ condition: Range<Int>) -> Bool {
        guard condition.count >= 3, condition.count <= 4,
              tokens[condition.lowerBound].kind == .identifier, tokens[condition.upperBound - 1].kind == .number else {
            return false
        }
        return ((condition.lowerBound + 1)..<(condition.upperBound - 1)).allSatisfy {
            tokens[$0].kind == .punctuation && [60, 61, 62, 33].contains(src.bytes[tokens[$0].start])
        }
    }

    /// Whether tokens in `range` name a barrier / SIMD-group function, or a user
    /// function or type that (transitively) does.
    func meetsOthers(_ range: Range<Int>, _ memo: inout [String: Bool]) -> Bool {
        range.contains { tokens[$0].kind == .identifier && reachesRendezvous(text($0), &memo) }
    }

    func reachesRendezvous(_ name: String, _ memo: inout [String: Bool]) -> Bool {
        if MSLAttributes.rendezvous.contains(name) { return true }
        if let known = memo[name] { return known }
        guard let bodies = definitions[name] else { return false }
        memo[name] = false // a recursive name meets nothing through itself
        let result = bodies.contains { meetsOthers($0, &memo) }
        memo[name] = result
        return result
    }

    /// The source's bytes in `bytes` (all of them by default) with `chosen` edits (all of them by
    /// default) made: by position, at one position insertions first, each kind in the order made.
    /// `copied`: told of each run of source bytes copied unchanged (its offset in the result, in the source, its length).
    func applyEdits(_ bytes: Range<Int>? = nil, _ chosen: [(offset: Int, element: (range: Range<Int>, replacement: String))]? = nil,
                    copied: (((at: Int, source: Int, count: Int)) -> Void)? = nil) -> String {
        let bytes = bytes ?? 0..<src.bytes.count
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 1024)
        var position = bytes.lowerBound
        let ordered = (chosen ?? Array(edits.enumerated())).sorted {
            ($0.element.range.lowerBound, $0.element.range.isEmpty ? 0 : 1, $0.offset)
                < ($1.element.range.lowerBound, $1.element.range.isEmpty ? 0 : 1, $1.offset)
        }.map(\.element)
        for edit in ordered {
            guard edit.range.lowerBound >= position else { continue } // overlapping edit: first one wins
            copied?((out.count, position, edit.range.lowerBound - position))
            out.append(contentsOf: src.bytes[position..<edit.range.lowerBound])
            out.append(contentsOf: Array(edit.replacement.utf8))
            position = edit.range.upperBound
        }
        copied?((out.count, position, bytes.upperBound - position))
        out.append(contentsOf: src.bytes[position..<bytes.upperBound])
        return String(decoding: out, as: UTF8.self)
    }
}
