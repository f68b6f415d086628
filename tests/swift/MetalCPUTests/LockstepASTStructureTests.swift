import XCTest
@testable import MetalCPU

/// Lockstep's statement structure read from clang's AST (LockstepAST.structure) on a real dump of a small
/// function (no clang needed here): statement extents, declarators, a for header with two variables and a
/// step ending in `--` (a token the front end's lexer splits), `if (c) { return; }`.
final class LockstepASTStructureTests: XCTestCase {
    private let source = """
    void k(float *x, unsigned gid) {
        float t = x[gid], &r = t;
        if (gid > 4u) { return; }
        for (int j = 0, m = 2; j < m; j++, m--) r += 1;
        x[gid] = t;
    }
    """

    private let dump = #"""
FunctionDecl 0x1 <t.cpp:1:1, line:6:1> line:1:6 k 'void (float *, unsigned int)'
|-ParmVarDecl 0x1 <col:8, col:15> col:15 used x 'float *'
|-ParmVarDecl 0x1 <col:18, col:27> col:27 used gid 'unsigned int'
`-CompoundStmt 0x1 <col:32, line:6:1>
  |-DeclStmt 0x1 <line:2:5, col:29>
  | |-VarDecl 0x1 <col:5, col:20> col:11 used t 'float' cinit
  | | `-ImplicitCastExpr 0x1 <col:15, col:20> 'float' <LValueToRValue>
  | |   `-ArraySubscriptExpr 0x1 <col:15, col:20> 'float' lvalue
  | |     |-ImplicitCastExpr 0x1 <col:15> 'float *' <LValueToRValue>
  | |     | `-DeclRefExpr 0x1 <col:15> 'float *' lvalue ParmVar 0x1 'x' 'float *'
  | |     `-ImplicitCastExpr 0x1 <col:17> 'unsigned int' <LValueToRValue>
  | |       `-DeclRefExpr 0x1 <col:17> 'unsigned int' lvalue ParmVar 0x1 'gid' 'unsigned int'
  | `-VarDecl 0x1 <col:5, col:28> col:24 used r 'float &' cinit
  |   `-DeclRefExpr 0x1 <col:28> 'float' lvalue Var 0x1 't' 'float'
  |-IfStmt 0x1 <line:3:5, col:29>
  | |-BinaryOperator 0x1 <col:9, col:15> 'bool' '>'
  | | |-ImplicitCastExpr 0x1 <col:9> 'unsigned int' <LValueToRValue>
  | | | `-DeclRefExpr 0x1 <col:9> 'unsigned int' lvalue ParmVar 0x1 'gid' 'unsigned int'
  | | `-IntegerLiteral 0x1 <col:15> 'unsigned int' 4
  | `-CompoundStmt 0x1 <col:19, col:29>
  |   `-ReturnStmt 0x1 <col:21>
  |-ForStmt 0x1 <line:4:5, col:50>
  | |-DeclStmt 0x1 <col:10, col:26>
  | | |-VarDecl 0x1 <col:10, col:18> col:14 used j 'int' cinit
  | | | `-IntegerLiteral 0x1 <col:18> 'int' 0
  | | `-VarDecl 0x1 <col:10, col:25> col:21 used m 'int' cinit
  | |   `-IntegerLiteral 0x1 <col:25> 'int' 2
  | |-<<<NULL>>>
  | |-BinaryOperator 0x1 <col:28, col:32> 'bool' '<'
  | | |-ImplicitCastExpr 0x1 <col:28> 'int' <LValueToRValue>
  | | | `-DeclRefExpr 0x1 <col:28> 'int' lvalue Var 0x1 'j' 'int'
  | | `-ImplicitCastExpr 0x1 <col:32> 'int' <LValueToRValue>
  | |   `-DeclRefExpr 0x1 <col:32> 'int' lvalue Var 0x1 'm' 'int'
  | |-BinaryOperator 0x1 <col:35, col:41> 'int' ','
  | | |-UnaryOperator 0x1 <col:35, col:36> 'int' postfix '++'
  | | | `-DeclRefExpr 0x1 <col:35> 'int' lvalue Var 0x1 'j' 'int'
  | | `-UnaryOperator 0x1 <col:40, col:41> 'int' postfix '--'
  | |   `-DeclRefExpr 0x1 <col:40> 'int' lvalue Var 0x1 'm' 'int'
  | `-CompoundAssignOperator 0x1 <col:45, col:50> 'float' lvalue '+=' ComputeLHSTy='float' ComputeResultTy='float'
  |   |-DeclRefExpr 0x1 <col:45> 'float' lvalue Var 0x1 'r' 'float &'
  |   `-ImplicitCastExpr 0x1 <col:50> 'float' <IntegralToFloating>
  |     `-IntegerLiteral 0x1 <col:50> 'int' 1
  `-BinaryOperator 0x1 <line:5:5, col:14> 'float' lvalue '='
    |-ArraySubscriptExpr 0x1 <col:5, col:10> 'float' lvalue
    | |-ImplicitCastExpr 0x1 <col:5> 'float *' <LValueToRValue>
    | | `-DeclRefExpr 0x1 <col:5> 'float *' lvalue ParmVar 0x1 'x' 'float *'
    | `-ImplicitCastExpr 0x1 <col:7> 'unsigned int' <LValueToRValue>
    |   `-DeclRefExpr 0x1 <col:7> 'unsigned int' lvalue ParmVar 0x1 'gid' 'unsigned int'
    `-ImplicitCastExpr 0x1 <col:14> 'float' <LValueToRValue>
      `-DeclRefExpr 0x1 <col:14> 'float' lvalue Var 0x1 't' 'float'
"""#

    func testStructureOfABody() throws {
        let lexed = LexedSource(source), tokens = lexed.tokens
        let (open, close) = (lexed.body.lowerBound - 1, lexed.body.upperBound)
        let facts = lexed.facts(dump, file: "t.cpp")
        func text(_ range: Range<Int>?) -> String { range.map { tokens[$0].map(\.text).joined(separator: " ") } ?? "-" }

        XCTAssertEqual(facts.bodies, [(open + 1)..<close], "the body is read from the AST")
        let statements = try XCTUnwrap(facts.blocks[open])
        XCTAssertEqual(statements.map(text), [
            "float t = x [ gid ] , & r = t ;",
            "if ( gid > 4u ) { return ; }",
            "for ( int j = 0 , m = 2 ; j < m ; j + + , m - - ) r + = 1 ;",
            "x [ gid ] = t ;",
        ])
        // comma declarators: a value, and a reference bound to t
        let declarators = try XCTUnwrap(facts.declarations[statements[0].lowerBound])
        XCTAssertEqual(declarators.map { tokens[$0.name].text }, ["t", "r"])
        XCTAssertEqual(declarators.map { text($0.value) }, ["x [ gid ]", "t"])
        XCTAssertEqual(declarators.map(\.reference), [false, true])
        // `if (c) { return; }` leaves
        let branch = try XCTUnwrap(facts.branches[statements[1].lowerBound])
        XCTAssertTrue(branch.leaves)
        XCTAssertEqual(text(branch.condition), "gid > 4u")
        XCTAssertNil(branch.otherwise)
        XCTAssertEqual(facts.returns.count, 1)
        // the for header's parts: two variables, a step that ends in a split `--`
        let loop = try XCTUnwrap(facts.loops[statements[2].lowerBound])
        XCTAssertEqual(text(loop.initial), "int j = 0 , m = 2 ;")
        XCTAssertEqual(text(loop.condition), "j < m")
        XCTAssertEqual(text(loop.step), "j + + , m - -")
        XCTAssertEqual(text(loop.body), "r + = 1 ;")
        XCTAssertEqual(facts.declarations[loop.initial!.lowerBound]?.map { tokens[$0.name].text }, ["j", "m"])
        // binding r to t may change t (and r += 1 changes r)
        XCTAssertTrue(facts.changes.values.contains("r"))
        XCTAssertTrue(facts.changes.values.contains("t"))
    }
}
