// Comments the front end puts around each kernel's declaration (a kernel's
// definition, or the explicit instantiation that makes a template a kernel),
// so that a compile of one kernel can leave the others out of the unit: clang
// then instantiates and optimises only what that kernel uses (LazyLibrary).
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

enum KernelMarkers {
    static func begin(_ index: Int) -> String { "/*<pm-k \(index)>*/" }
    static func end(_ index: Int) -> String { "/*</pm-k \(index)>*/" }

    /// `unit` (the front end's output for `count` kernels) with every kernel's
    /// declaration but `keep`'s replaced by its newlines (line numbers stay those
    /// of the source, for diagnostics). A kernel whose markers are missing (an
    /// edit overlapped them) stays in.
    static func only(_ keep: Int, of count: Int, in unit: String) -> String {
        let bytes = Array(unit.utf8)
        var cuts: [Range<Int>] = []
        var from = 0
        for index in 0..<count where index != keep {
            let (open, close) = (Array(begin(index).utf8), Array(end(index).utf8))
            guard let start = find(open, in: bytes, from: from), let stop = find(close, in: bytes, from: start) else { continue }
            cuts.append(start..<(stop + close.count))
            from = stop + close.count // markers come in the kernels' order
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var position = 0
        for cut in cuts {
            out += bytes[position..<cut.lowerBound]
            out += bytes[cut].filter { $0 == 10 }
            position = cut.upperBound
        }
        out += bytes[position...]
        return String(decoding: out, as: UTF8.self)
    }

    private static func find(_ pattern: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
        guard !pattern.isEmpty, bytes.count >= pattern.count, from <= bytes.count - pattern.count else { return nil }
        return bytes.withUnsafeBytes { all in
            pattern.withUnsafeBytes { wanted -> Int? in
                var offset = from
                while offset <= all.count - wanted.count {
                    guard let hit = memchr(all.baseAddress! + offset, Int32(wanted[0]), all.count - wanted.count - offset + 1) else {
                        return nil
                    }
                    offset = all.baseAddress!.distance(to: UnsafeRawPointer(hit))
                    if memcmp(all.baseAddress! + offset, wanted.baseAddress!, wanted.count) == 0 { return offset }
                    offset += 1
                }
                return nil
            }
        }
    }
}
