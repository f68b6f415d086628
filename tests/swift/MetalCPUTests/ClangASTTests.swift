import XCTest
@testable import MetalCPU

/// Kernel signatures from clang's AST (ClangAST.swift): the AST text the front end writes, and the
/// reading of clang's text dump (an excerpt of a real one, so no clang is needed here).
final class ClangASTTests: XCTestCase {
    private func astText(_ source: String) throws -> String {
        var captured = ""
        _ = try FrontEnd.run(preprocessed: "# 1 \"program_source\"\n" + source) { text in
            captured = text
            return [:]
        }
        return captured
    }

    func testASTTextCarriesAttributesAndAddressSpaces() throws {
        let text = try astText("""
        template <typename T>
        kernel void k(device const T* a [[buffer(1)]], constant uint& n [[buffer(3)]], uint i [[thread_position_in_grid]]) {}
        template [[host_name("k_f")]] kernel void k<float>(device const float*, constant uint&, uint);
        """)
        XCTAssertTrue(text.contains(#"__attribute__((annotate("pm.buffer 1"))) __attribute__((annotate("pm.space device"))) const T* a"#), text)
        XCTAssertTrue(text.contains(#"__attribute__((annotate("pm.buffer 3"))) const __attribute__((annotate("pm.space constant"))) uint& n"#), text)
        XCTAssertTrue(text.contains(#"__attribute__((annotate("pm.position thread_position_in_grid"))) uint i"#), text)
        XCTAssertTrue(text.contains("constexpr auto \(ClangAST.reference(0)) = &::k < float >;"), text)
        XCTAssertFalse(text.contains("[["), "no MSL attribute is left for clang")
    }

    func testAPlainTemplatesInstantiationIsASpecializationInTheASTText() throws {
        let text = try astText("""
        template <typename T> void fill(device T* o, uint i) { o[i] = T(1); }
        template [[host_name("fill_f")]] [[kernel]] void fill<float>(device float* o [[buffer(2)]], uint i [[thread_position_in_grid]]);
        """)
        // clang keeps no attributes of an explicit instantiation's parameters; a specialization's keep them
        XCTAssertTrue(text.contains(#"template <>   void fill<float>(__attribute__((annotate("pm.buffer 2")))"#), text)
    }

    func testValidationBuildsReadTheDeclaredParameters() throws {
        var captured = ""
        let output = try FrontEnd.run(preprocessed: "# 1 \"program_source\"\nkernel void k(device float* x [[buffer(0)]]) {}",
                                      validation: true) { text in
            captured = text
            return [:]
        }
        XCTAssertTrue(output.text.contains("vptr<"), output.text)
        XCTAssertFalse(captured.contains("vptr<"), captured)
    }

    func testBindingsFromTheDump() throws {
        // clang -fsyntax-only -Xclang -skip-function-bodies -Xclang -ast-dump (clang 21), shortened
        let dump = """
        TranslationUnitDecl 0x1 <<invalid sloc>> <invalid sloc> <undeserialized declarations>
        |-FunctionTemplateDecl 0x2 <program_source:3:1, line:4:90> line:4:13 k
        | |-TemplateTypeParmDecl 0x3 <line:3:11, col:20> col:20 referenced typename depth 0 index 0 T
        | |-FunctionDecl 0x4 <line:4:1, col:90> col:13 k 'void (const T *, const uint &, uint)'
        | | |-ParmVarDecl 0x5 <col:15, col:60> col:60 a 'const T *'
        | | | |-AnnotateAttr 0x6 <col:30, col:52> "pm.buffer 1"
        | | | `-AnnotateAttr 0x7 <col:30, col:52> "pm.space device"
        | `-FunctionDecl 0x8 <line:4:1, col:90> col:13 k 'void (const float4 *, const uint &, uint, uint)' explicit_instantiation_definition
        |   |-TemplateArgument type 'float4'
        |   |-ParmVarDecl 0x9 <col:15, col:60> col:60 a 'const float __attribute__((ext_vector_type(4))) *'
        |   | |-AnnotateAttr 0xa <col:30, col:52> "pm.buffer 1"
        |   | `-AnnotateAttr 0xb <col:30, col:52> "pm.space device"
        |   |-ParmVarDecl 0xc <col:63, col:80> col:80 n 'const uint &'
        |   | |-AnnotateAttr 0xd <col:63, col:70> "pm.space constant"
        |   | `-AnnotateAttr 0xe <col:63, col:70> "pm.constant has_n 1"
        |   |-ParmVarDecl 0xf <col:83, col:88> col:88 'uint':'unsigned int'
        |   | `-AnnotateAttr 0x10 <col:83, col:88> "pm.position thread_position_in_grid"
        |   `-ParmVarDecl 0x11 <col:90, col:99> col:99 used out 'fptr':'float *'
        |-FunctionDecl 0x12 <line:9:1, col:50> col:6 used (*)(int) helper 'void (int)'
        `-NamespaceDecl 0x13 <metalcpu_ast:1:1, line:3:1> line:1:11 pm_ast
          `-VarDecl 0x14 <line:2:1, col:39> col:16 __pm_ast_kernel_0 'void (*const)(const float4 *, const uint &, uint, uint)' constexpr cinit
            |-value: LValue Base=FunctionDecl 0x8, Null=0, Offset=0, HasPath=1, PathLength=0, Path=()
            `-UnaryOperator 0x15 <col:36, col:39> 'void (*)(const float4 *, const uint &, uint, uint)' prefix '&' cannot overflow
              `-DeclRefExpr 0x16 <col:37, col:39> 'void (const float4 *, const uint &, uint, uint)' lvalue Function 0x8 'k' 'void (const float4 *, const uint &, uint, uint)' (FunctionTemplate 0x2 'k')
        """
        let bindings = try XCTUnwrap(ClangAST.bindings(dump: dump)[0])
        XCTAssertEqual(bindings.map(\.kind), [.buffer, .buffer, .position("thread_position_in_grid"), .buffer])
        XCTAssertEqual(bindings.map(\.index), [1, 2, 0, 3], "unattributed buffers take the next index")
        XCTAssertEqual(bindings.map(\.name), ["a", "n", "", "out"])
        XCTAssertEqual(bindings.map(\.typeText), ["float4", "uint", "uint", "float"])
        XCTAssertEqual(bindings.map(\.pointer), [true, false, false, true], "a constant reference is a value; a typedef'd pointer is not")
        XCTAssertEqual(bindings[1].constant, "has_n")
        XCTAssertTrue(bindings[1].absent)
    }

    func testParameterLines() {
        let parameter = ClangAST.parameter("ParmVarDecl 0x5 <<built-in>:1:2, col:48> col:48 referenced w 'const float (&)[4]'")
        XCTAssertEqual(parameter?.name, "w")
        XCTAssertEqual(parameter.map { ClangAST.elementType($0) }, "float")
        XCTAssertEqual(ClangAST.parameter("ParmVarDecl 0x5 <col:1, col:8> col:8 p 'dptr<Pair>':'Pair *'").map { ClangAST.elementType($0) }, "Pair")
        XCTAssertEqual(ClangAST.parameter("ParmVarDecl 0x5 <col:1, col:8> col:8 h '_Float16 *'").map { ClangAST.elementType($0) }, "half")
    }

    func testUnknownAnnotationIsNotRead() {
        XCTAssertNil(ClangAST.bindings([ClangAST.Parameter(name: "x", type: "float *", canonical: "float *",
                                                           annotations: ["pm.texture 0"])]))
    }
}
