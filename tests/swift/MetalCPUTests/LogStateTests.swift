import XCTest
import Foundation
@testable import MetalCPU

/// Shader logging as Apple documents it: a library compiled with enableLogging logs; the log
/// state attached to a command queue hands each message to its handlers (subsystem, category,
/// level, text); it stores none below its level and none past its bufferSize.
final class LogStateTests: XCTestCase {
    let device = MTLCreateSystemDefaultDevice()!
    static let source = """
    #include <metal_stdlib>
    #include <metal_logging>
    using namespace metal;
    constant os_log lg("org.pymetal.swift", "tests");
    kernel void k(device int *o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
        os_log_default.log("default %u", i);
        lg.log_debug("debug %u", i);
        lg.log_info("info %u", i);
        lg.log_error("error %u", i);
        lg.log_fault("fault %u", i);
        o[i] = 1;
    }
    """

    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [(String?, String?, MTLLogLevel, String)] = []
        func add(_ item: (String?, String?, MTLLogLevel, String)) { lock.lock(); items.append(item); lock.unlock() }
        var all: [(String?, String?, MTLLogLevel, String)] { lock.lock(); defer { lock.unlock() }; return items }
    }

    func pipeline(logging: Bool) throws -> any MTLComputePipelineState {
        let options = MTLCompileOptions()
        options.enableLogging = logging
        let library = try device.makeLibrary(source: Self.source, options: options)
        return try device.makeComputePipelineState(function: try XCTUnwrap(library.makeFunction(name: "k")))
    }

    /// A queue with a log state whose handler collects into `into`.
    func queue(level: MTLLogLevel = .debug, bufferSize: Int = 1 << 20, into: Collected) throws -> any MTLCommandQueue {
        let descriptor = MTLLogStateDescriptor()
        descriptor.level = level
        descriptor.bufferSize = bufferSize
        let state = try device.makeLogState(descriptor: descriptor)
        state.addLogHandler { into.add(($0, $1, $2, $3)) }
        let queueDescriptor = MTLCommandQueueDescriptor()
        queueDescriptor.logState = state
        return try XCTUnwrap(device.makeCommandQueue(descriptor: queueDescriptor))
    }

    func run(_ pipeline: any MTLComputePipelineState, on queue: any MTLCommandQueue, threads: Int) {
        let out = device.makeBuffer(length: threads * 4, options: [])!
        let commandBuffer = queue.makeCommandBuffer()!
        let encoder = commandBuffer.makeComputeCommandEncoder()!
        encoder.setComputePipelineState(pipeline)
        encoder.setBuffer(out, offset: 0, index: 0)
        encoder.dispatchThreads(MTLSize(width: threads, height: 1, depth: 1), threadsPerThreadgroup: MTLSize(width: 1, height: 1, depth: 1))
        encoder.endEncoding()
        commandBuffer.commit()
        commandBuffer.waitUntilCompleted()
        XCTAssertEqual(commandBuffer.status, .completed)
    }

    func testHandlerGetsEachMessageBeforeTheCommandBufferCompletes() throws {
        let got = Collected()
        run(try pipeline(logging: true), on: try queue(into: got), threads: 1)
        let all = got.all
        XCTAssertEqual(all.map { $0.3 }, ["default 0", "debug 0", "info 0", "error 0", "fault 0"])
        XCTAssertEqual(all.map { $0.2 }, [.notice, .debug, .info, .error, .fault])
        XCTAssertNil(all[0].0) // os_log_default: no subsystem, no category
        XCTAssertNil(all[0].1)
        XCTAssertEqual(all[1].0, "org.pymetal.swift")
        XCTAssertEqual(all[1].1, "tests")
    }

    func testEveryHandlerIsCalled() throws {
        let first = Collected(), second = Collected()
        let queue = try self.queue(into: first)
        let descriptor = MTLCommandQueueDescriptor()
        XCTAssertNil(descriptor.logState)
        // a second handler on the same state
        let state = try device.makeLogState(descriptor: MTLLogStateDescriptor())
        state.addLogHandler { first.add(($0, $1, $2, $3)) }
        state.addLogHandler { second.add(($0, $1, $2, $3)) }
        descriptor.logState = state
        run(try pipeline(logging: true), on: try XCTUnwrap(device.makeCommandQueue(descriptor: descriptor)), threads: 2)
        XCTAssertEqual(first.all.count, 10)
        XCTAssertEqual(second.all.map { $0.3 }, first.all.map { $0.3 })
        _ = queue
    }

    func testLevelFiltersWhatIsStored() throws {
        let got = Collected()
        run(try pipeline(logging: true), on: try queue(level: .error, into: got), threads: 3)
        XCTAssertEqual(Set(got.all.map { $0.2 }), [.error, .fault])
        XCTAssertEqual(got.all.count, 6)
    }

    func testLibraryWithoutLoggingLogsNothing() throws {
        let got = Collected()
        run(try pipeline(logging: false), on: try queue(into: got), threads: 4)
        XCTAssertTrue(got.all.isEmpty)
    }

    func testAQueueWithoutLogStateDeliversNothingAndLosesNothingElsewhere() throws {
        let got = Collected()
        let logged = try queue(into: got)
        let pipeline = try self.pipeline(logging: true)
        run(pipeline, on: device.makeCommandQueue()!, threads: 4) // no log state: messages go nowhere
        XCTAssertTrue(got.all.isEmpty)
        run(pipeline, on: logged, threads: 1) // each queue's messages go to its own state
        XCTAssertEqual(got.all.count, 5)
    }

    func testTwoQueuesOnTwoThreadsEachGetTheirOwnMessages() throws {
        let a = Collected(), b = Collected()
        let queueA = try queue(into: a), queueB = try queue(into: b)
        let pipeline = try self.pipeline(logging: true)
        let runs = 20
        let done = DispatchGroup()
        done.enter()
        done.enter()
        DispatchQueue.global().async { for _ in 0..<runs { self.run(pipeline, on: queueA, threads: 3) }; done.leave() }
        DispatchQueue.global().async { for _ in 0..<runs { self.run(pipeline, on: queueB, threads: 5) }; done.leave() }
        done.wait()
        XCTAssertEqual(a.all.count, runs * 3 * 5)
        XCTAssertEqual(b.all.count, runs * 5 * 5)
        XCTAssertFalse(a.all.contains { $0.3.hasSuffix(" 3") || $0.3.hasSuffix(" 4") }, "only queue A's threads 0...2")
        for thread in 0..<5 { // each kernel thread's messages in its order: default, debug, info, error, fault
            let mine = b.all.filter { $0.3.hasSuffix(" \(thread)") }.map { $0.2 }
            XCTAssertEqual(mine, Array(repeating: [MTLLogLevel.notice, .debug, .info, .error, .fault], count: runs).flatMap { $0 })
        }
    }

    func testMessagesPastBufferSizeAreDropped() throws {
        let got = Collected()
        // each message: its text, subsystem and category with their NULs ("default 0": 10 + 1 + 1 bytes)
        let state = try queue(bufferSize: 1024, into: got)
        run(try pipeline(logging: true), on: state, threads: 100)
        let bytes = got.all.reduce(0) { $0 + $1.3.utf8.count + ($1.0?.utf8.count ?? 0) + ($1.1?.utf8.count ?? 0) + 3 }
        XCTAssertLessThanOrEqual(bytes, 1024)
        XCTAssertGreaterThan(bytes, 1024 - 64)
        XCTAssertLessThan(got.all.count, 500)
    }

    func testBufferSizeOutsideAppleLimitsThrows() {
        for size in [0, 1023, (1 << 30) + 1] {
            let descriptor = MTLLogStateDescriptor()
            descriptor.bufferSize = size
            XCTAssertThrowsError(try device.makeLogState(descriptor: descriptor)) { error in
                XCTAssertEqual((error as? MTLLogStateError)?.code, .invalidSize)
            }
        }
        let defaults = MTLLogStateDescriptor()
        XCTAssertEqual(defaults.level, .debug)
        XCTAssertEqual(defaults.bufferSize, 1 << 20)
    }
}
