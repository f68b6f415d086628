// Status codes and the thread-local error message of the C ABI.
import CPyMetal
import PyMetalCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private let errorKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key) { free($0) }
    return key
}()

private let emptyMessage: UnsafeMutablePointer<CChar> = strdup("")!

func setLastError(_ message: String) {
    free(pthread_getspecific(errorKey))
    pthread_setspecific(errorKey, strdup(message))
}

func lastErrorPointer() -> UnsafePointer<CChar> {
    if let message = pthread_getspecific(errorKey) { return UnsafePointer(message.assumingMemoryBound(to: CChar.self)) }
    return UnsafePointer(emptyMessage)
}

/// Runs one C ABI call: any thrown error becomes a status code and message.
@inline(__always)
func status(_ body: () throws -> Void) -> Int32 {
    #if canImport(Metal)
    if ForkSafety.isChild {
        setLastError("pymetal cannot use Metal in the child of a fork() (Metal does not support it): "
            + "start worker processes with the 'spawn' or 'forkserver' method of multiprocessing")
        return EngineError.Code.unsupported.rawValue
    }
    #endif
    do {
        try body()
        return Int32(PM_OK.rawValue)
    } catch let error as EngineError {
        setLastError(error.message)
        return error.code.rawValue
    } catch {
        setLastError("\(error)")
        return EngineError.Code.execution.rawValue
    }
}

func output<T>(_ pointer: UnsafeMutablePointer<T>?, _ what: String = "output") throws -> UnsafeMutablePointer<T> {
    guard let pointer else { throw EngineError.invalid("\(what) pointer is NULL") }
    return pointer
}

func string(_ pointer: UnsafePointer<CChar>?, _ what: String) throws -> String {
    guard let pointer else { throw EngineError.invalid("\(what) is NULL") }
    return String(cString: pointer)
}

/// C strings handed out by the ABI, kept alive with the object they describe.
final class CString: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<CChar>
    init(_ string: String) { pointer = strdup(string)! }
    deinit { free(pointer) }
}
