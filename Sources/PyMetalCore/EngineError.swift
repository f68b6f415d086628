// Errors the engine reports; the C ABI turns them into status codes.
public struct EngineError: Error, CustomStringConvertible {
    public enum Code: Int32 {
        case invalidArgument = 1, compile = 2, notFound = 3, outOfMemory = 4, execution = 5, unsupported = 6
    }
    public let code: Code
    public let message: String
    public var description: String { message }

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func invalid(_ message: String) -> EngineError { EngineError(.invalidArgument, message) }
}

/// The message of an error from Metal (NSError on macOS, MetalCPU's errors on Linux).
func describe(_ error: any Error) -> String {
    if let engine = error as? EngineError { return engine.message }
    #if canImport(Metal)
    return error.localizedDescription
    #else
    return "\(error)"  // MetalCPU's errors are CustomStringConvertible (Linux has no Foundation here)
    #endif
}
