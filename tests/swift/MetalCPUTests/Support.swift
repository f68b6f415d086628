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
