import XCTest
@testable import MetalCPU

/// Compiles MSL, runs one dispatch and returns the command buffer.
struct Harness {
    let device = MTLCreateSystemDefaultDevice()!
    let queue: any MTLCommandQueue

    init() { queue = device.makeCommandQueue()! }

    func library(_ source: String) throws -> any MTLLibrary {
        let options = MTLCompileOptions()
        options.mathMode = .safe
        return try device.makeLibrary(source: source, options: options)
    }

    func pipeline(_ source: String, _ name: String) throws -> any MTLComputePipelineState {
        let function = try XCTUnwrap(try library(source).makeFunction(name: name))
        return try device.makeComputePipelineState(function: function)
    }

    func buffer<T>(_ values: [T]) -> any MTLBuffer {
        values.withUnsafeBytes { device.makeBuffer(bytes: $0.baseAddress!, length: max($0.count, 1), options: [])! }
    }

    func buffer(count: Int) -> any MTLBuffer { device.makeBuffer(length: count, options: [])! }

    @discardableResult
    func run(_ pipeline: any MTLComputePipelineState, buffers: [(any MTLBuffer)?], grid: MTLSize, group: MTLSize,
             uniform: Bool = false, configure: (any MTLComputeCommandEncoder) -> Void = { _ in }) -> any MTLCommandBuffer {
        let commandBuffer = queue.makeCommandBuffer()!
        let encoder = commandBuffer.makeComputeCommandEncoder()!
        encoder.setComputePipelineState(pipeline)
        for (index, buffer) in buffers.enumerated() { encoder.setBuffer(buffer, offset: 0, index: index) }
        configure(encoder)
        if uniform {
            encoder.dispatchThreadgroups(grid, threadsPerThreadgroup: group)
        } else {
            encoder.dispatchThreads(grid, threadsPerThreadgroup: group)
        }
        encoder.endEncoding()
        commandBuffer.commit()
        commandBuffer.waitUntilCompleted()
        return commandBuffer
    }
}

func read<T>(_ buffer: any MTLBuffer, as: T.Type, count: Int) -> [T] {
    Array(UnsafeBufferPointer(start: buffer.contents().bindMemory(to: T.self, capacity: count), count: count))
}

/// A source's tokens as the front end's lexer makes them (words, numbers, one-byte punctuation), and
/// LockstepAST.facts of clang's dump of it (read as `file`) for the body of its last function: for tests that
/// feed a real dump to LockstepAST without clang.
struct LexedSource {
    let source: String
    let tokens: [(start: Int, text: String)]

    init(_ source: String) {
        self.source = source
        var result: [(Int, String)] = []
        let bytes = Array(source.utf8)
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            if c == 32 || c == 10 { i += 1; continue }
            let word = { (b: UInt8) in (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 95 }
            var j = i + 1
            if word(c) { while j < bytes.count, word(bytes[j]) { j += 1 } }
            result.append((i, String(decoding: bytes[i..<j], as: UTF8.self)))
            i = j
        }
        tokens = result
    }

    /// The last function's body: the token range inside its braces (the source ends with its `}`).
    var body: Range<Int> {
        var depth = 0, open = tokens.count - 1
        while open > 0 {
            if tokens[open].text == "}" { depth += 1 } else if tokens[open].text == "{" { depth -= 1; if depth == 0 { break } }
            open -= 1
        }
        return (open + 1)..<(tokens.count - 1)
    }

    func facts(_ dump: String, file: String) -> LockstepAST.Facts {
        let close = tokens.count - 1
        return LockstepAST.facts(LockstepAST.Dump(text: dump, file: file, content: Array(source.utf8), base: 0),
                                 bodies: [body]) { offset in
            tokens.firstIndex { $0.start == offset }
        } punct: { t, c in
            t >= 0 && t < tokens.count && tokens[t].text == String(UnicodeScalar(c))
        } pragma: { _ in false } removed: { _ in false } extent: { _ in close }
    }
}
