// Opaque handles: 64-bit ids that are never reused, so that a stale, released
// or forged handle is an error, never a dangling pointer.
import PyMetalCore

final class Handles: @unchecked Sendable {
    static let shared = Handles()
    private let lock = Lock()
    private var objects: [UInt64: AnyObject] = [:]
    private var next: UInt64 = 1

    func insert(_ object: AnyObject) -> UInt64 {
        lock {
            let handle = next
            next += 1
            objects[handle] = object
            return handle
        }
    }

    func get<T: AnyObject>(_ handle: UInt64, as type: T.Type, _ what: String) throws -> T {
        let object = lock { objects[handle] }
        guard let object else {
            throw EngineError.invalid(handle == 0 ? "\(what) handle is 0 (null)" : "\(what) handle \(handle) is not valid (never made, or released)")
        }
        guard let typed = object as? T else {
            throw EngineError.invalid("handle \(handle) is a \(Self.kind(of: object)), not a \(what)")
        }
        return typed
    }

    @discardableResult
    func remove<T: AnyObject>(_ handle: UInt64, as type: T.Type, _ what: String) throws -> T {
        let object: T = try get(handle, as: type, what)
        lock { _ = objects.removeValue(forKey: handle) }
        return object
    }

    private static func kind(of object: AnyObject) -> String {
        switch object {
        case is DeviceObject: return "device"
        case is Buffer: return "buffer"
        case is LibraryObject: return "library"
        case is Kernel: return "kernel"
        case is PyMetalCore.Stream: return "stream"
        default: return "\(type(of: object))"
        }
    }
}

