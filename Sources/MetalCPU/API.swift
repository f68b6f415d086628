// The subset of Apple's Metal API that pymetal uses, with Apple's exact names,
// labels, optionality and `throws` (see shared/metal-api.md). Engine code written
// against these declarations compiles unchanged against `import Metal` on macOS.
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

public typealias CFTimeInterval = Double
public typealias MTLCommandBufferHandler = @Sendable (any MTLCommandBuffer) -> Void

public struct MTLSize: Equatable, Sendable {
    public var width: Int
    public var height: Int
    public var depth: Int
    public init() { self.init(width: 0, height: 0, depth: 0) }
    public init(width: Int, height: Int, depth: Int) {
        self.width = width
        self.height = height
        self.depth = depth
    }
}

public func MTLSizeMake(_ width: Int, _ height: Int, _ depth: Int) -> MTLSize {
    MTLSize(width: width, height: height, depth: depth)
}

public struct MTLResourceOptions: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let storageModeShared = MTLResourceOptions([])
    public static let cpuCacheModeWriteCombined = MTLResourceOptions(rawValue: 1)
    public static let hazardTrackingModeUntracked = MTLResourceOptions(rawValue: 0x100)
}

public struct MTLBarrierScope: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let buffers = MTLBarrierScope(rawValue: 1)
    public static let textures = MTLBarrierScope(rawValue: 2)
    public static let renderTargets = MTLBarrierScope(rawValue: 4)
}

public enum MTLCommandBufferStatus: UInt, Sendable {
    case notEnqueued = 0, enqueued, committed, scheduled, completed, error
}

public enum MTLDispatchType: UInt, Sendable { case serial = 0, concurrent }

public struct MTLPipelineOption: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let bindingInfo = MTLPipelineOption(rawValue: 1)
}

public enum MTLBindingType: Int, Sendable { case buffer = 0, threadgroupMemory = 1 }
public enum MTLBindingAccess: UInt, Sendable { case readOnly = 0, readWrite = 1, writeOnly = 2 }

public protocol MTLBinding: AnyObject {
    var name: String { get }
    var type: MTLBindingType { get }
    var access: MTLBindingAccess { get }
    var index: Int { get }
    var isUsed: Bool { get }
}

/// The data types reflection reports and function constants take (Metal's names and raw values;
/// the scalar and vector ones).
public enum MTLDataType: UInt, Sendable {
    case none = 0, `struct` = 1, pointer = 60
    case float = 3, float2, float3, float4
    case half = 16, half2, half3, half4
    case int = 29, int2, int3, int4
    case uint = 33, uint2, uint3, uint4
    case short = 37, short2, short3, short4
    case ushort = 41, ushort2, ushort3, ushort4
    case char = 45, char2, char3, char4
    case uchar = 49, uchar2, uchar3, uchar4
    case bool = 53, bool2, bool3, bool4
    case long = 81, long2, long3, long4
    case ulong = 85, ulong2, ulong3, ulong4
    case bfloat = 121, bfloat2, bfloat3, bfloat4
}

public protocol MTLBufferBinding: MTLBinding {
    var bufferDataType: MTLDataType { get }
    var bufferDataSize: Int { get }
}

public protocol MTLThreadgroupBinding: MTLBinding {
    var threadgroupMemoryDataSize: Int { get }
}

/// What makeComputePipelineState(function:options:reflection:) reports about
/// the kernel's parameters (with .bindingInfo).
public final class MTLComputePipelineReflection: @unchecked Sendable {
    public let bindings: [any MTLBinding]
    init(bindings: [any MTLBinding]) { self.bindings = bindings }
}
public enum MTLMathMode: Int, Sendable { case safe = 0, relaxed, fast }
public enum MTLLanguageVersion: UInt, Sendable {
    case version2_4 = 131076, version3_0 = 196608, version3_1 = 196609, version3_2 = 196610
}
public enum MTLGPUFamily: Int, Sendable {
    case apple7 = 1007, apple8 = 1008, apple9 = 1009, metal3 = 5001
}

/// A preprocessor macro's value. Apple's `preprocessorMacros` holds NSObjects
/// (an NSString or NSNumber); MetalCPU, without Foundation, takes the Swift
/// strings and numbers they bridge from, defined as their `description`.
public protocol MTLPreprocessorMacroValue: CustomStringConvertible {}
extension String: MTLPreprocessorMacroValue {}
extension Int: MTLPreprocessorMacroValue {}
extension Double: MTLPreprocessorMacroValue {}

public final class MTLCompileOptions: @unchecked Sendable {
    /// Apple: `[String: NSObject]?` (see MTLPreprocessorMacroValue).
    public var preprocessorMacros: [String: any MTLPreprocessorMacroValue]?
    public var fastMathEnabled: Bool = true
    public var mathMode: MTLMathMode = .fast
    public var languageVersion: MTLLanguageVersion = .version3_1
    /// Shader logging (macOS 15): the library's os_log calls log (MetalCPU: PM_KERNEL_LOGGING, pm_msl/logging.h).
    public var enableLogging: Bool = false
    public init() {}
}

public protocol MTLDevice: AnyObject {
    var name: String { get }
    var hasUnifiedMemory: Bool { get }
    var recommendedMaxWorkingSetSize: UInt64 { get }
    var currentAllocatedSize: Int { get }
    var maxThreadsPerThreadgroup: MTLSize { get }
    var maxBufferLength: Int { get }
    var maxThreadgroupMemoryLength: Int { get }
    func makeCommandQueue() -> (any MTLCommandQueue)?
    func makeCommandQueue(descriptor: MTLCommandQueueDescriptor) -> (any MTLCommandQueue)?
    func makeLogState(descriptor: MTLLogStateDescriptor) throws -> any MTLLogState
    func makeBuffer(length: Int, options: MTLResourceOptions) -> (any MTLBuffer)?
    func makeBuffer(bytes pointer: UnsafeRawPointer, length: Int, options: MTLResourceOptions) -> (any MTLBuffer)?
    func makeBuffer(bytesNoCopy pointer: UnsafeMutableRawPointer, length: Int, options: MTLResourceOptions,
                    deallocator: ((UnsafeMutableRawPointer, Int) -> Void)?) -> (any MTLBuffer)?
    func makeLibrary(URL url: URL) throws -> any MTLLibrary
    func makeLibrary(source: String, options: MTLCompileOptions?) throws -> any MTLLibrary
    func makeComputePipelineState(function: any MTLFunction) throws -> any MTLComputePipelineState
    /// Apple's `reflection` is an AutoreleasingUnsafeMutablePointer (Objective-C
    /// only); callers pass `&reflection` to either.
    func makeComputePipelineState(function: any MTLFunction, options: MTLPipelineOption,
                                  reflection: UnsafeMutablePointer<MTLComputePipelineReflection?>?) throws
        -> any MTLComputePipelineState
    func supportsFamily(_ gpuFamily: MTLGPUFamily) -> Bool
}

extension MTLDevice {
    public func makeBuffer(length: Int) -> (any MTLBuffer)? { makeBuffer(length: length, options: []) }
    public func makeBuffer(bytesNoCopy pointer: UnsafeMutableRawPointer, length: Int,
                           options: MTLResourceOptions = []) -> (any MTLBuffer)? {
        makeBuffer(bytesNoCopy: pointer, length: length, options: options, deallocator: nil)
    }
}

public protocol MTLResource: AnyObject {}

public protocol MTLBuffer: MTLResource {
    func contents() -> UnsafeMutableRawPointer
    var length: Int { get }
}

public protocol MTLFunction: AnyObject {
    var name: String { get }
    /// The function constants the function declares, by name.
    var functionConstantsDictionary: [String: MTLFunctionConstant] { get }
}

public protocol MTLLibrary: AnyObject {
    func makeFunction(name functionName: String) -> (any MTLFunction)?
    /// A function specialised with values for its function constants (looked up by index, then by name).
    func makeFunction(name: String, constantValues: MTLFunctionConstantValues) throws -> any MTLFunction
    var functionNames: [String] { get }
}

extension MTLDataType {
    /// Bytes of one value (a 3-vector is packed here: its 3 elements).
    public var size: Int {
        let raw = rawValue
        func width(_ base: UInt) -> Int { Int(raw - base) + 1 }
        switch raw {
        case 3...6: return 4 * width(3)
        case 16...19: return 2 * width(16)
        case 29...36: return 4 * width(raw >= 33 ? 33 : 29)
        case 37...44: return 2 * width(raw >= 41 ? 41 : 37)
        case 45...56: return width(raw >= 53 ? 53 : raw >= 49 ? 49 : 45)
        case 81...88: return 8 * width(raw >= 85 ? 85 : 81)
        case 121...124: return 2 * width(121)
        default: return 0
        }
    }
}

/// A function constant a function declares (`constant bool has_w [[function_constant(20)]];`).
public final class MTLFunctionConstant: @unchecked Sendable {
    public let name: String
    public let type: MTLDataType
    public let index: Int
    /// Whether the function uses its value (not only is_function_constant_defined).
    public let required: Bool
    init(name: String, type: MTLDataType, index: Int, required: Bool) {
        self.name = name
        self.type = type
        self.index = index
        self.required = required
    }
}

/// Values for function constants, by index or by name.
public final class MTLFunctionConstantValues: @unchecked Sendable {
    var byIndex: [Int: FunctionConstantValue] = [:]
    var byName: [String: FunctionConstantValue] = [:]
    public init() {}

    private static func value(_ pointer: UnsafeRawPointer, _ type: MTLDataType) -> FunctionConstantValue {
        FunctionConstantValue(type: type.rawValue, bytes: Array(UnsafeRawBufferPointer(start: pointer, count: type.size)))
    }
    public func setConstantValue(_ value: UnsafeRawPointer, type: MTLDataType, index: Int) {
        byIndex[index] = Self.value(value, type)
    }
    public func setConstantValue(_ value: UnsafeRawPointer, type: MTLDataType, withName name: String) {
        byName[name] = Self.value(value, type)
    }
    public func setConstantValues(_ values: UnsafeRawPointer, type: MTLDataType, range: Range<Int>) {
        for (n, index) in range.enumerated() { setConstantValue(values + n * type.size, type: type, index: index) }
    }
    public func reset() {
        byIndex = [:]
        byName = [:]
    }
}

public protocol MTLComputePipelineState: AnyObject {
    var maxTotalThreadsPerThreadgroup: Int { get }
    var threadExecutionWidth: Int { get }
    var staticThreadgroupMemoryLength: Int { get }
}

public protocol MTLCommandQueue: AnyObject {
    func makeCommandBuffer() -> (any MTLCommandBuffer)?
}

public protocol MTLCommandBuffer: AnyObject {
    func makeComputeCommandEncoder() -> (any MTLComputeCommandEncoder)?
    func makeComputeCommandEncoder(dispatchType: MTLDispatchType) -> (any MTLComputeCommandEncoder)?
    func commit()
    func waitUntilCompleted()
    var status: MTLCommandBufferStatus { get }
    var error: (any Error)? { get }
    var gpuStartTime: CFTimeInterval { get }
    var gpuEndTime: CFTimeInterval { get }
    func addCompletedHandler(_ block: @escaping MTLCommandBufferHandler)
}

public protocol MTLCommandEncoder: AnyObject {
    func endEncoding()
}

public protocol MTLComputeCommandEncoder: MTLCommandEncoder {
    func setComputePipelineState(_ state: any MTLComputePipelineState)
    func setBuffer(_ buffer: (any MTLBuffer)?, offset: Int, index: Int)
    func setBytes(_ bytes: UnsafeRawPointer, length: Int, index: Int)
    func setThreadgroupMemoryLength(_ length: Int, index: Int)
    func dispatchThreads(_ threadsPerGrid: MTLSize, threadsPerThreadgroup: MTLSize)
    func dispatchThreadgroups(_ threadgroupsPerGrid: MTLSize, threadsPerThreadgroup: MTLSize)
    func memoryBarrier(scope: MTLBarrierScope)
}

/// Errors thrown by MetalCPU, shaped like Metal's NSError domains.
public struct MTLLibraryError: Error, CustomStringConvertible, LocalizedError {
    public enum Code: Int { case unsupported = 1, internalError, compileFailure, fileNotFound, functionNotFound = 5 }
    public let code: Code
    public let message: String
    public var description: String { message }
    public var errorDescription: String? { message }
}

public struct MTLCommandBufferError: Error, CustomStringConvertible, LocalizedError {
    public let message: String
    public var description: String { message }
    public var errorDescription: String? { message }
}

public struct MTLPipelineError: Error, CustomStringConvertible, LocalizedError {
    public let message: String
    public var description: String { message }
    public var errorDescription: String? { message }
}

public func MTLCreateSystemDefaultDevice() -> (any MTLDevice)? { CPUDevice.shared }
public func MTLCopyAllDevices() -> [any MTLDevice] { [CPUDevice.shared] }
