// Opaque handles: 64-bit ids that are not reused, so that a stale, released
// or forged handle is an error, never a dangling pointer. A handle is a slot
// of a table (low 32 bits, from 1) and that slot's generation (high 32 bits),
// which changes whenever the slot is reused: a lookup is an index and a
// compare, which matters on the per-dispatch path (pm_dispatch looks up the
// stream, the kernel and every buffer).
import PyMetalCore

final class Handles: @unchecked Sendable {
    static let shared = Handles()
    private let lock = Lock()

    private init() { ForkSafety.register(.handles, lock) }
    private var slots: [(generation: UInt32, object: AnyObject?)] = []
    private var unused: [Int] = [] // free slots

    func insert(_ object: AnyObject) -> UInt64 {
        lock {
            let slot: Int
            if let reused = unused.popLast() {
                slot = reused
                slots[slot].generation &+= 1
                slots[slot].object = object
            } else {
                slot = slots.count
                slots.append((1, object))
            }
            return UInt64(slots[slot].generation) << 32 | UInt64(slot + 1)
        }
    }

    private func lookup(_ handle: UInt64) -> AnyObject? {
        let slot = Int(truncatingIfNeeded: handle & 0xFFFF_FFFF) - 1
        let generation = UInt32(truncatingIfNeeded: handle >> 32)
        return lock {
            guard slot >= 0, slot < slots.count, slots[slot].generation == generation else { return nil }
            return slots[slot].object
        }
    }

    func get<T: AnyObject>(_ handle: UInt64, as type: T.Type, _ what: String) throws -> T {
        guard let object = lookup(handle) else {
            throw EngineError.invalid(handle == 0 ? "\(what) handle is 0 (null)" : "\(what) handle \(handle) is not valid (never made, or released)")
        }
        // Handle objects are of final classes: an exact type match is the common, cheap case.
        if ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(T.self) { return unsafeDowncast(object, to: T.self) }
        guard let typed = object as? T else {
            throw EngineError.invalid("handle \(handle) is a \(Self.kind(of: object)), not a \(what)")
        }
        return typed
    }

    @discardableResult
    func remove<T: AnyObject>(_ handle: UInt64, as type: T.Type, _ what: String) throws -> T {
        let object: T = try get(handle, as: type, what)
        lock {
            let slot = Int(handle & 0xFFFF_FFFF) - 1
            // Another thread may have removed it since get(): only the holder of the slot's generation frees it.
            guard slots[slot].generation == UInt32(truncatingIfNeeded: handle >> 32), slots[slot].object != nil else { return }
            slots[slot].object = nil
            unused.append(slot)
        }
        return object
    }

    private static func kind(of object: AnyObject) -> String {
        switch object {
        case is DeviceObject: return "device"
        case is Buffer: return "buffer"
        case is LibraryObject: return "library"
        case is KernelObject: return "kernel"
        case is PyMetalCore.Stream: return "stream"
        default: return "\(type(of: object))"
        }
    }
}
