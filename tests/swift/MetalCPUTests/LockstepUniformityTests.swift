import XCTest
@testable import MetalCPU

/// Names resolved to clang's declarations (LockstepAST.resolve, referent), which lockstep's uniformity facts
/// and call graph use (LockstepUniformity.swift), on a real dump (no clang needed here): a local `m` and one
/// that shadows it in the loop's body are two declarations; the kernel's parameters; the function bodies
/// a call graph walks; which uses change what.
final class LockstepUniformityTests: XCTestCase {
    private let source = """
    float simd_sum(float);
    float red(float v) { return simd_sum(v); }
    void k(float *x, unsigned n, unsigned gid) {
        unsigned m = n * 2u;
        for (unsigned j = 0; j < m; j++) { unsigned m = gid; x[m] += red(x[j]); }
    }
    """

    private let dump = #"""
|-FunctionDecl 0x56266282e568 <u.cpp:1:1, col:21> col:7 used simd_sum 'float (float)'
| `-ParmVarDecl 0x56266282e490 <col:16> col:21 'float'
|-FunctionDecl 0x56266282e710 <line:2:1, col:42> col:7 used red 'float (float)'
| |-ParmVarDecl 0x56266282e678 <col:11, col:17> col:17 used v 'float'
| `-CompoundStmt 0x56266282e8f0 <col:20, col:42>
|   `-ReturnStmt 0x56266282e8e0 <col:22, col:39>
|     `-CallExpr 0x56266282e898 <col:29, col:39> 'float'
|       |-ImplicitCastExpr 0x56266282e880 <col:29> 'float (*)(float)' <FunctionToPointerDecay>
|       | `-DeclRefExpr 0x56266282e828 <col:29> 'float (float)' lvalue Function 0x56266282e568 'simd_sum' 'float (float)'
|       `-ImplicitCastExpr 0x56266282e8c8 <col:38> 'float' <LValueToRValue>
|         `-DeclRefExpr 0x56266282e808 <col:38> 'float' lvalue ParmVar 0x56266282e678 'v' 'float'
`-FunctionDecl 0x56266282eb40 <line:3:1, line:6:1> line:3:6 k 'void (float *, unsigned int, unsigned int)'
  |-ParmVarDecl 0x56266282e958 <col:8, col:15> col:15 used x 'float *'
  |-ParmVarDecl 0x56266282e9d8 <col:18, col:27> col:27 used n 'unsigned int'
  |-ParmVarDecl 0x56266282ea58 <col:30, col:39> col:39 used gid 'unsigned int'
  `-CompoundStmt 0x56266282f1e8 <col:44, line:6:1>
    |-DeclStmt 0x56266282ecf8 <line:4:5, col:24>
    | `-VarDecl 0x56266282ec18 <col:5, col:22> col:14 used m 'unsigned int' cinit
    |   `-BinaryOperator 0x56266282ecd8 <col:18, col:22> 'unsigned int' '*'
    |     |-ImplicitCastExpr 0x56266282ecc0 <col:18> 'unsigned int' <LValueToRValue>
    |     | `-DeclRefExpr 0x56266282ec80 <col:18> 'unsigned int' lvalue ParmVar 0x56266282e9d8 'n' 'unsigned int'
    |     `-IntegerLiteral 0x56266282eca0 <col:22> 'unsigned int' 2
    `-ForStmt 0x56266282f1b0 <line:5:5, col:77>
      |-DeclStmt 0x56266282edc8 <col:10, col:24>
      | `-VarDecl 0x56266282ed28 <col:10, col:23> col:19 used j 'unsigned int' cinit
      |   `-ImplicitCastExpr 0x56266282edb0 <col:23> 'unsigned int' <IntegralCast>
      |     `-IntegerLiteral 0x56266282ed90 <col:23> 'int' 0
      |-<<<NULL>>>
      |-BinaryOperator 0x56266282ee50 <col:26, col:30> 'bool' '<'
      | |-ImplicitCastExpr 0x56266282ee20 <col:26> 'unsigned int' <LValueToRValue>
      | | `-DeclRefExpr 0x56266282ede0 <col:26> 'unsigned int' lvalue Var 0x56266282ed28 'j' 'unsigned int'
      | `-ImplicitCastExpr 0x56266282ee38 <col:30> 'unsigned int' <LValueToRValue>
      |   `-DeclRefExpr 0x56266282ee00 <col:30> 'unsigned int' lvalue Var 0x56266282ec18 'm' 'unsigned int'
      |-UnaryOperator 0x56266282ee90 <col:33, col:34> 'unsigned int' postfix '++'
      | `-DeclRefExpr 0x56266282ee70 <col:33> 'unsigned int' lvalue Var 0x56266282ed28 'j' 'unsigned int'
      `-CompoundStmt 0x56266282f190 <col:38, col:77>
        |-DeclStmt 0x56266282ef60 <col:40, col:56>
        | `-VarDecl 0x56266282eec0 <col:40, col:53> col:49 used m 'unsigned int' cinit
        |   `-ImplicitCastExpr 0x56266282ef48 <col:53> 'unsigned int' <LValueToRValue>
        |     `-DeclRefExpr 0x56266282ef28 <col:53> 'unsigned int' lvalue ParmVar 0x56266282ea58 'gid' 'unsigned int'
        `-CompoundAssignOperator 0x56266282f160 <col:58, col:74> 'float' lvalue '+=' ComputeLHSTy='float' ComputeResultTy='float'
          |-ArraySubscriptExpr 0x56266282efe8 <col:58, col:61> 'float' lvalue
          | |-ImplicitCastExpr 0x56266282efb8 <col:58> 'float *' <LValueToRValue>
          | | `-DeclRefExpr 0x56266282ef78 <col:58> 'float *' lvalue ParmVar 0x56266282e958 'x' 'float *'
          | `-ImplicitCastExpr 0x56266282efd0 <col:60> 'unsigned int' <LValueToRValue>
          |   `-DeclRefExpr 0x56266282ef98 <col:60> 'unsigned int' lvalue Var 0x56266282eec0 'm' 'unsigned int'
          `-CallExpr 0x56266282f118 <col:66, col:74> 'float'
            |-ImplicitCastExpr 0x56266282f100 <col:66> 'float (*)(float)' <FunctionToPointerDecay>
            | `-DeclRefExpr 0x56266282f0e0 <col:66> 'float (float)' lvalue Function 0x56266282e710 'red' 'float (float)'
            `-ImplicitCastExpr 0x56266282f148 <col:70, col:73> 'float' <LValueToRValue>
              `-ArraySubscriptExpr 0x56266282f0c0 <col:70, col:73> 'float' lvalue
                |-ImplicitCastExpr 0x56266282f090 <col:70> 'float *' <LValueToRValue>
                | `-DeclRefExpr 0x56266282f050 <col:70> 'float *' lvalue ParmVar 0x56266282e958 'x' 'float *'
                `-ImplicitCastExpr 0x56266282f0a8 <col:72> 'unsigned int' <LValueToRValue>
                  `-DeclRefExpr 0x56266282f070 <col:72> 'unsigned int' lvalue Var 0x56266282ed28 'j' 'unsigned int'
"""#

    func testReferents() {
        let variable = LockstepAST.referent("DeclRefExpr 0x5 <col:30> 'unsigned int' lvalue Var 0x56266282ec18 'm' 'unsigned int'")
        XCTAssertEqual(variable.map { [String($0.kind), String($0.id), String($0.name)] }, ["Var", "0x56266282ec18", "m"])
        let instance = LockstepAST.referent("DeclRefExpr 0x5 <col:66> 'float (float)' lvalue Function 0x7 'red' 'float (float)' (FunctionTemplate 0x8 'red')")
        XCTAssertEqual(instance.map { [String($0.kind), String($0.id), String($0.name)] }, ["Function", "0x7", "red"],
                       "a template's instantiation, not the template")
        let method = LockstepAST.referent("MemberExpr 0x5 <col:78, col:80> '<bound member function type>' .go 0x9")
        XCTAssertEqual(method.map { [String($0.kind), String($0.id), String($0.name)] }, ["member", "0x9", "go"])
        let field = LockstepAST.referent("MemberExpr 0x5 <col:1, col:4> 'uint' lvalue ->count 0xa")
        XCTAssertEqual(field.map { [String($0.kind), String($0.name)] }, ["member", "count"])
        XCTAssertNil(LockstepAST.referent("IntegerLiteral 0x5 <col:22> 'unsigned int' 2"))
    }

    func testDeclarationsOfABody() throws {
        let lexed = LexedSource(source), tokens = lexed.tokens
        let (open, close) = (lexed.body.lowerBound - 1, lexed.body.upperBound)
        let facts = lexed.facts(dump, file: "u.cpp")
        XCTAssertEqual(facts.bodies, [(open + 1)..<close])
        // the kernel's parameters (not red's v)
        XCTAssertEqual(Set(facts.parameters.values), ["x", "n", "gid"])
        // the two `m`s: the loop's bound reads the outer one, the subscript the inner one
        let ms = (open..<close).filter { tokens[$0].text == "m" }
        XCTAssertEqual(ms.count, 4) // declared, the bound, declared again, the subscript
        let outer = try XCTUnwrap(facts.declared[ms[0]]), inner = try XCTUnwrap(facts.declared[ms[2]])
        XCTAssertNotEqual(outer, inner)
        func referent(_ t: Int) -> String? {
            (facts.starting[t] ?? []).lazy.filter { facts.nodes[$0].kind == "DeclRefExpr" }
                .compactMap { LockstepAST.referent(facts.nodes[$0].line).map { String($0.id) } }.first
        }
        XCTAssertEqual(referent(ms[1]), outer)
        XCTAssertEqual(referent(ms[3]), inner)
        XCTAssertEqual(facts.variables[outer]?.canonical, "unsigned int")
        XCTAssertNotNil(facts.variables[outer]?.initialiser)
        // j changes (j++), neither m does
        let j = try XCTUnwrap(facts.declared[try XCTUnwrap((open..<close).first { tokens[$0].text == "j" })])
        XCTAssertEqual(facts.changed[j]?.count, 1)
        XCTAssertNil(facts.changed[outer])
        XCTAssertNil(facts.changed[inner])
        // the bodies a call graph walks: red's (the call in the loop names it), not simd_sum's (a declaration)
        XCTAssertNotNil(facts.functions["0x56266282e710"])
        XCTAssertNil(facts.functions["0x56266282e568"])
    }
}
