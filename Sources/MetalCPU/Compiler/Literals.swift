// MSL literal suffixes C++ does not have: `1.5h` (half) and `2.0bf` (bfloat).
enum Literals {
    /// Rewrites suffixed literals outside comments, strings and characters.
    static func rewrite(_ source: String) -> String {
        let bytes = Array(source.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 64)
        var i = 0
        let n = bytes.count
        func isIdent(_ c: UInt8) -> Bool { (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c == 95 || (c >= 48 && c <= 57) }
        while i < n {
            let c = bytes[i]
            if c == 47, i + 1 < n, bytes[i + 1] == 47 { // line comment
                let start = i
                while i < n, bytes[i] != 10 { i += 1 }
                out.append(contentsOf: bytes[start..<i]); continue
            }
            if c == 47, i + 1 < n, bytes[i + 1] == 42 { // block comment
                let start = i
                i += 2
                while i + 1 < n, !(bytes[i] == 42 && bytes[i + 1] == 47) { i += 1 }
                i = min(i + 2, n)
                out.append(contentsOf: bytes[start..<i]); continue
            }
            if c == 34 || c == 39 { // string or character
                let start = i
                i += 1
                while i < n, bytes[i] != c, bytes[i] != 10 { if bytes[i] == 92 { i += 1 }; i += 1 }
                i = min(i + 1, n)
                out.append(contentsOf: bytes[start..<i]); continue
            }
            let startsNumber = (c >= 48 && c <= 57) || (c == 46 && i + 1 < n && bytes[i + 1] >= 48 && bytes[i + 1] <= 57)
            if startsNumber && (i == 0 || !isIdent(bytes[i - 1])) {
                let start = i
                i += 1
                while i < n {
                    let d = bytes[i]
                    if isIdent(d) || d == 46 { i += 1; continue }
                    if (d == 43 || d == 45), bytes[i - 1] == 101 || bytes[i - 1] == 69 { i += 1; continue }
                    break
                }
                let literal = String(decoding: bytes[start..<i], as: UTF8.self)
                let lower = literal.lowercased()
                if !lower.hasPrefix("0x") && lower.hasSuffix("bf") {
                    out.append(contentsOf: Array("((bfloat)\(literal.dropLast(2)))".utf8))
                } else if !lower.hasPrefix("0x") && lower.hasSuffix("h") {
                    out.append(contentsOf: Array("((half)\(literal.dropLast()))".utf8))
                } else {
                    out.append(contentsOf: bytes[start..<i])
                }
                continue
            }
            out.append(c)
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
