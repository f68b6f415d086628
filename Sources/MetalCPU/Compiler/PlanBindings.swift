// The kernels' signatures as clang's AST gave them (MSLCompiler.astBindings), kept in a lazy library's
// plan ("<key>.lib", LazyLibrary.swift): a later process that compiles another kernel of the library
// runs the source through the front end again, and reuses them instead of a second AST dump (a clang
// run of ~0.1 s). The plan's key covers the source, the flags and the toolchain, which is all the AST
// reading depends on (without function constant values: those compiles read the AST again).
//
// Text, after the kernels' names: a line "#ast", then per kernel a line "k<TAB>index" followed by its
// bindings, one a line: kind (b, t, p:<attribute>), index, pointer, absent, constant, name, type,
// TAB-separated, each field escaped (%, TAB, newline).
enum PlanBindings {
    static let marker = "#ast"

    static func encode(_ bindings: [Int: [KernelBinding]]) -> String {
        var lines = [marker]
        for (kernel, list) in bindings.sorted(by: { $0.key < $1.key }) {
            lines.append("k\t\(kernel)")
            for b in list {
                let kind: String
                switch b.kind {
                case .buffer: kind = "b"
                case .threadgroup: kind = "t"
                case .position(let attribute): kind = "p:" + attribute
                }
                lines.append([kind, String(b.index), b.pointer ? "1" : "0", b.absent ? "1" : "0", b.constant.map { "=" + $0 } ?? "-",
                              b.name, b.typeText].map(escape).joined(separator: "\t"))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The bindings of `lines` (those after the marker); nil when any line is not as `encode` writes it.
    static func decode<S: Sequence>(_ lines: S) -> [Int: [KernelBinding]]? where S.Element == Substring {
        var result: [Int: [KernelBinding]] = [:]
        var current: Int?
        for line in lines {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map { unescape($0) }
            if fields.count == 2, fields[0] == "k", let kernel = Int(fields[1]) {
                current = kernel
                result[kernel] = []
                continue
            }
            guard let kernel = current, fields.count == 7, let index = Int(fields[1]) else { return nil }
            let kind: KernelBinding.Kind
            switch fields[0] {
            case "b": kind = .buffer
            case "t": kind = .threadgroup
            case let k where k.hasPrefix("p:"): kind = .position(String(k.dropFirst(2)))
            default: return nil
            }
            var binding = KernelBinding(kind: kind, index: index)
            binding.pointer = fields[2] == "1"
            binding.absent = fields[3] == "1"
            binding.constant = fields[4].hasPrefix("=") ? String(fields[4].dropFirst()) : nil
            binding.name = fields[5]
            binding.typeText = fields[6]
            result[kernel, default: []].append(binding)
        }
        return result
    }

    private static func escape(_ s: String) -> String {
        s.replacing("%", with: "%25").replacing("\t", with: "%09")
            .replacing("\n", with: "%0A")
    }

    private static func unescape<S: StringProtocol>(_ s: S) -> String {
        String(s).replacing("%0A", with: "\n").replacing("%09", with: "\t")
            .replacing("%25", with: "%")
    }
}
