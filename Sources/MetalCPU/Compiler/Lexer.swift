// Tokens of preprocessed C++ (clang -E output), with the user-visible file and
// line of each token taken from the preprocessor's line markers.

struct Token {
    enum Kind: UInt8 { case identifier, number, string, character, punctuation }
    let kind: Kind
    let start: Int      // byte offset in the text
    let end: Int
    let line: Int32     // line in `file`
    let column: Int32
    let file: Int32     // index into Lexer.Output.files
}

struct LexedSource {
    let bytes: [UInt8]
    let tokens: [Token]
    let files: [(name: String, isSystem: Bool)]

    func text(_ token: Token) -> String { String(decoding: bytes[token.start..<token.end], as: UTF8.self) }
    func text(_ tokens: ArraySlice<Token>) -> String {
        tokens.map { text($0) }.joined(separator: " ")
    }
    func `is`(_ index: Int, _ string: StaticString) -> Bool {
        guard index >= 0, index < tokens.count else { return false }
        let token = tokens[index]
        let length = token.end - token.start
        guard length == string.utf8CodeUnitCount else { return false }
        return string.withUTF8Buffer { literal in
            var i = 0
            while i < length { if bytes[token.start + i] != literal[i] { return false }; i += 1 }
            return true
        }
    }
    func location(_ token: Token) -> String { "\(files[Int(token.file)].name):\(token.line):\(token.column)" }
}

enum Lexer {
    static func lex(_ text: String) -> LexedSource {
        let bytes = Array(text.utf8)
        var tokens: [Token] = []
        tokens.reserveCapacity(bytes.count / 4)
        var files: [(name: String, isSystem: Bool)] = [("<source>", false)]
        var fileIndex: [String: Int32] = ["<source>": 0]
        var file: Int32 = 0
        var line: Int32 = 1
        var lineStart = 0
        var i = 0
        let n = bytes.count
        var atLineStart = true

        func isIdentStart(_ c: UInt8) -> Bool { (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c == 95 || c >= 0x80 }
        func isIdent(_ c: UInt8) -> Bool { isIdentStart(c) || (c >= 48 && c <= 57) }

        while i < n {
            let c = bytes[i]
            if c == 10 { // newline
                i += 1; line += 1; lineStart = i; atLineStart = true; continue
            }
            if c == 32 || c == 9 || c == 13 || c == 12 || c == 11 { i += 1; continue }
            if c == 35 /* # */ && atLineStart {
                // Line marker: # <line> "<file>" <flags>   (or #pragma ...: skipped as a line)
                var j = i + 1
                while j < n, bytes[j] == 32 { j += 1 }
                var number = 0
                var hasNumber = false
                if j < n, bytes[j] == 108 /* l: #line */ { j += 4; while j < n, bytes[j] == 32 { j += 1 } }
                while j < n, bytes[j] >= 48, bytes[j] <= 57 { number = number * 10 + Int(bytes[j] - 48); j += 1; hasNumber = true }
                var end = j
                while end < n, bytes[end] != 10 { end += 1 }
                if hasNumber {
                    var name: String? = nil
                    var k = j
                    while k < end, bytes[k] == 32 { k += 1 }
                    if k < end, bytes[k] == 34 {
                        var q = k + 1
                        while q < end, bytes[q] != 34 { if bytes[q] == 92 { q += 1 }; q += 1 }
                        name = String(decoding: bytes[(k + 1)..<min(q, end)], as: UTF8.self)
                        k = q + 1
                    }
                    let flags = String(decoding: bytes[min(k, end)..<end], as: UTF8.self)
                    if let name {
                        if let known = fileIndex[name] { file = known } else {
                            file = Int32(files.count)
                            fileIndex[name] = file
                            files.append((name, flags.split(separator: " ").contains("3")))
                        }
                    }
                    line = Int32(number) - 1 // the newline ending the marker moves to `number`
                    i = end
                    continue
                }
                // #pragma and other directives survive -E: treat the line as punctuation-free.
                tokens.append(Token(kind: .punctuation, start: i, end: end, line: line, column: Int32(i - lineStart + 1), file: file))
                i = end
                continue
            }
            atLineStart = false
            let start = i
            let column = Int32(i - lineStart + 1)
            var kind: Token.Kind
            if isIdentStart(c) {
                i += 1
                while i < n, isIdent(bytes[i]) { i += 1 }
                kind = .identifier
                // String literal prefixes (u8"", L"", R"(...)") are rare in MSL; treat R"..." minimally.
                if i < n, bytes[i] == 34, i - start <= 2 { i = skipString(bytes, i, quote: 34, &line, &lineStart); kind = .string }
            } else if c >= 48 && c <= 57 || (c == 46 && i + 1 < n && bytes[i + 1] >= 48 && bytes[i + 1] <= 57) {
                i += 1
                while i < n {
                    let d = bytes[i]
                    if isIdent(d) || d == 46 { i += 1; continue }
                    if (d == 43 || d == 45), let p = Optional(bytes[i - 1]), p == 101 || p == 69 || p == 112 || p == 80 { i += 1; continue }
                    if d == 39, i + 1 < n, isIdent(bytes[i + 1]) { i += 1; continue } // digit separator
                    break
                }
                kind = .number
            } else if c == 34 {
                i = skipString(bytes, i, quote: 34, &line, &lineStart); kind = .string
            } else if c == 39 {
                i = skipString(bytes, i, quote: 39, &line, &lineStart); kind = .character
            } else {
                // Punctuation: keep `::`, `->`, `>>` etc. as one token only where it matters.
                i += 1
                if i < n {
                    let d = bytes[i]
                    if (c == 58 && d == 58) || (c == 45 && d == 62) { i += 1 }
                }
                kind = .punctuation
            }
            tokens.append(Token(kind: kind, start: start, end: i, line: line, column: column, file: file))
        }
        return LexedSource(bytes: bytes, tokens: tokens, files: files)
    }

    private static func skipString(_ bytes: [UInt8], _ start: Int, quote: UInt8, _ line: inout Int32, _ lineStart: inout Int) -> Int {
        var i = start + 1
        while i < bytes.count, bytes[i] != quote {
            if bytes[i] == 92 { i += 1 }
            else if bytes[i] == 10 { line += 1; lineStart = i + 1 }
            i += 1
        }
        return min(i + 1, bytes.count)
    }
}
