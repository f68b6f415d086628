// clang compiles the preprocessed, rewritten source (macros expanded:
// `float4(...)` is `pm_make<::metal::float4>(...)`, attributes removed), so its
// columns and source excerpts are those of that text. This puts the user's own
// line back in each diagnostic and moves the column to the same token in it:
// the token under clang's caret, counted among equal tokens on the line (the
// n-th `x` of the rewritten line is the n-th `x` of the user's, when the user
// wrote it). A token the user did not write (inside a macro's expansion) keeps
// clang's column; the excerpt then still shows the user's line.
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

enum Diagnostics {
    /// `log`: clang's output. `source`: the text given to the compiler, whose
    /// `#line N "file"` markers (pymetal inlines include files with them) say
    /// which file and line each of its lines is; other files are read from disk.
    static func userColumns(_ log: String, source: String) -> String {
        let known = linesByFile(source)
        var fileCache: [String: [String]] = [:]
        func line(_ file: String, _ number: Int) -> String? {
            if let text = known[file]?[number] { return text }
            if fileCache[file] == nil {
                fileCache[file] = (try? String(contentsOfFile: file, encoding: .utf8))?.components(separatedBy: "\n") ?? []
            }
            let lines = fileCache[file]!
            return number >= 1 && number <= lines.count ? lines[number - 1] : nil
        }
        var out: [String] = []
        var seen: Set<String> = []
        let lines = log.components(separatedBy: "\n")
        var i = 0
        while i < lines.count {
            let header = lines[i]
            // file:line:col: kind: message, then `  N | text` and `    | ^~~`
            guard let location = parseHeader(header), i + 2 < lines.count,
                  let compiled = excerpt(lines[i + 1]), let caret = caretColumn(lines[i + 2]),
                  let original = line(location.file, location.line) else {
                out.append(header)
                i += 1
                continue
            }
            let column = mapColumn(location.column, compiled: compiled.text, original: original) ?? location.column
            let block = [location.prefix + "\(column)" + location.rest, compiled.gutter + original,
                         caret.gutter + String(repeating: " ", count: max(0, column - 1)) + "^"]
            // SIMD lockstep compiles some of the user's code in more than one copy (Lockstep.swift):
            // the same diagnostic at the same place is shown once.
            if seen.insert(block.joined(separator: "\n")).inserted { out += block }
            i += 3
        }
        return out.joined(separator: "\n")
    }

    /// (file -> line number -> text) from the `#line` markers of `source` (the first names its main file).
    private static func linesByFile(_ source: String) -> [String: [Int: String]] {
        var result: [String: [Int: String]] = [:]
        var file = "program_source", number = 1
        for text in source.components(separatedBy: "\n") {
            let trimmed = text.drop(while: { $0 == " " || $0 == "\t" })
            if trimmed.hasPrefix("#line ") {
                let parts = trimmed.dropFirst(6).split(separator: " ", maxSplits: 1)
                if let n = parts.first.flatMap({ Int($0) }) {
                    number = n
                    if parts.count > 1 {
                        let quoted = parts[1].trimmed
                        file = String(quoted.dropFirst().dropLast()).replacing("\\\\", with: "\\")
                            .replacing("\\\"", with: "\"")
                    }
                    continue
                }
            }
            result[file, default: [:]][number] = text
            number += 1
        }
        return result
    }

    private static func parseHeader(_ line: String) -> (file: String, line: Int, column: Int, prefix: String, rest: String)? {
        // the last ":N:N: " before the kind (a path may hold colons)
        guard let kind = line.firstRange(of: #/:\d+:\d+: (error|warning|note|fatal error): /#) else { return nil }
        let numbers = line[kind].dropFirst().split(separator: ":")
        guard numbers.count >= 2, let l = Int(numbers[0]), let c = Int(numbers[1]) else { return nil }
        let file = String(line[..<kind.lowerBound])
        let prefix = file + ":\(l):"
        let rest = String(line[line.index(kind.lowerBound, offsetBy: 1 + numbers[0].count + 1 + numbers[1].count)...])
        return (file, l, c, prefix, rest)
    }

    /// `    4 | text` -> (gutter "    4 | ", text)
    private static func excerpt(_ line: String) -> (gutter: String, text: String)? {
        guard let bar = line.firstRange(of: #/^ *\d+ \| /#) else { return nil }
        return (String(line[bar]), String(line[bar.upperBound...]))
    }

    /// `      |     ^~~~` -> gutter "      | "
    private static func caretColumn(_ line: String) -> (gutter: String, column: Int)? {
        guard let bar = line.firstRange(of: #/^ *\| /#),
              let caret = line[bar.upperBound...].firstIndex(of: "^") else { return nil }
        return (String(line[bar]), line.distance(from: bar.upperBound, to: caret) + 1)
    }

    /// The column in `original` of the token at `column` (1-based) in `compiled`.
    static func mapColumn(_ column: Int, compiled: String, original: String) -> Int? {
        let c = Array(compiled.utf8), o = Array(original.utf8)
        guard column >= 1, column <= c.count else { return nil }
        let token = tokenAt(c, column - 1)
        guard !token.isEmpty else { return nil }
        let before = occurrences(of: token, in: c).filter { $0 < column - 1 }.count
        let candidates = occurrences(of: token, in: o)
        guard !candidates.isEmpty else { return nil }
        return candidates[min(before, candidates.count - 1)] + 1
    }

    private static func isWord(_ b: UInt8) -> Bool { (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 95 }

    private static func tokenAt(_ bytes: [UInt8], _ at: Int) -> [UInt8] {
        guard isWord(bytes[at]) else { return [bytes[at]] }
        var end = at
        while end < bytes.count, isWord(bytes[end]) { end += 1 }
        return Array(bytes[at..<end])
    }

    /// Starts of `token` in `bytes` (whole words for a word).
    private static func occurrences(of token: [UInt8], in bytes: [UInt8]) -> [Int] {
        guard bytes.count >= token.count else { return [] }
        let word = isWord(token[0])
        return (0...(bytes.count - token.count)).filter { at in
            Array(bytes[at..<(at + token.count)]) == token
                && (!word || ((at == 0 || !isWord(bytes[at - 1])) && (at + token.count == bytes.count || !isWord(bytes[at + token.count]))))
        }
    }
}
