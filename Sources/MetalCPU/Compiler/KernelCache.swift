// The disk cache of compiled kernel libraries: $XDG_CACHE_HOME/pymetal/kernels,
// else ~/.cache/pymetal/kernels. A library there is native code this process
// loads and runs, so the cache must be this user's alone: its folders are made
// 0700 and refused (with a warning, for a cache kept for the process only, in
// a private temporary folder) when another user owns them or can write them.
// Entries are written in a work folder and renamed into place, carry a hash of
// their content (a trailer after the ELF image, which the loader ignores),
// and are checked before loading: anything wrong (truncated, corrupt, a
// symlink, another owner) is deleted and compiled again. The least recently
// used entries are evicted above PYMETAL_CACHE_MAX bytes, and the work folders
// of killed compiles are removed.
#if canImport(FoundationEssentials) && canImport(Glibc)  // not Darwin, whose Foundation is the one to use
import FoundationEssentials  // Linux: no ICU on the load path (only Foundation needs it)
import Glibc
#else
import Foundation
#endif

public struct KernelCacheInfo: Sendable {
    /// The cache folder.
    public let path: String
    /// False when the disk cache was refused or unavailable: compiled kernels are then kept for this process only.
    public let persistent: Bool
    /// Kernel libraries in the cache.
    public let entries: Int
    /// Bytes of everything in the cache (libraries and precompiled headers).
    public let bytes: UInt64
    /// PYMETAL_CACHE_MAX.
    public let maxBytes: UInt64
}

final class KernelCache: @unchecked Sendable {
    private static let lock = Lock()
    nonisolated(unsafe) private static var opened: (place: String, cache: KernelCache)?
    nonisolated(unsafe) private static var privateFolders: [String] = []

    /// The cache for the current XDG_CACHE_HOME and HOME (opened again when they change).
    static var current: KernelCache {
        let place = (Toolchain.environment("XDG_CACHE_HOME") ?? "") + "\u{0}" + (Toolchain.environment("HOME") ?? "")
        return lock {
            if let opened, opened.place == place { return opened.cache }
            let cache = openFolder()
            opened = (place, cache)
            return cache
        }
    }

    let path: String
    let persistent: Bool
    static let defaultMaxBytes: UInt64 = 1 << 30
    /// Work folders older than this are leftovers even if their process id is in use again.
    static let leftoverAge: Double = 3600

    private init(path: String, persistent: Bool) {
        self.path = path
        self.persistent = persistent
    }

    private struct Refused: Error { let reason: String }

    /// The user's cache, or (with a warning saying why) a private folder for this process.
    private static func openFolder() -> KernelCache {
        do {
            return KernelCache(path: try persistentFolder(), persistent: true)
        } catch {
            let reason = (error as? Refused)?.reason ?? "\(error)"
            var template = Array(((Toolchain.environment("TMPDIR").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp")
                                  + "/pymetal-XXXXXX").utf8CString)
            let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) } // 0700, a new name
            let folder = made.map { String(cString: $0) } ?? ""
            if !folder.isEmpty { // called with the lock held
                if privateFolders.isEmpty {
                    atexit { for folder in KernelCache.privateFolders { try? FileManager.default.removeItem(atPath: folder) } }
                }
                privateFolders.append(folder)
            }
            fputs("pymetal: compiled kernels are not cached on disk: \(reason)\n", stderr)
            return KernelCache(path: folder, persistent: false)
        }
    }

    private static func persistentFolder() throws -> String {
        let base: String
        if let xdg = Toolchain.environment("XDG_CACHE_HOME"), xdg.hasPrefix("/") { // relative: invalid (XDG spec)
            base = xdg
        } else if let home = Toolchain.environment("HOME") ?? getpwuid(geteuid()).map({ String(cString: $0.pointee.pw_dir) }),
                  home.hasPrefix("/") {
            base = home + "/.cache"
        } else {
            throw Refused(reason: "neither XDG_CACHE_HOME nor HOME is set")
        }
        var made = ""  // mkdir -p, 0700 for the folders it makes
        for part in base.split(separator: "/") {
            made += "/" + part
            if mkdir(made, 0o700) != 0 && errno != EEXIST {
                throw Refused(reason: "cannot make \(base): \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        guard stat(base, &info) == 0 else { throw Refused(reason: "cannot use \(base): \(String(cString: strerror(errno)))") }
        if info.st_mode & 0o002 != 0 && info.st_mode & S_ISVTX == 0 {
            throw Refused(reason: "\(base) can be written by every user")
        }
        let root = base + "/pymetal"
        try privateFolder(root)
        try privateFolder(root + "/kernels")
        return root + "/kernels"
    }

    /// Makes `folder` (0700) or checks the one there: a real folder (not a
    /// symlink), this user's, that no other user can write (a readable one of
    /// ours is tightened to 0700).
    private static func privateFolder(_ folder: String) throws {
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw Refused(reason: "cannot make \(folder): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(folder, &info) == 0 else { throw Refused(reason: "cannot use \(folder): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw Refused(reason: "\(folder) is not a folder (a symlink?)") }
        guard info.st_uid == geteuid() else {
            throw Refused(reason: "\(folder) belongs to user \(info.st_uid), not to this user (\(geteuid()))")
        }
        guard info.st_mode & 0o022 == 0 else {
            throw Refused(reason: "\(folder) can be written by other users (mode \(String(info.st_mode & 0o777, radix: 8))): "
                + "remove it, or make it private with chmod 700")
        }
        if info.st_mode & 0o077 != 0 { chmod(folder, 0o700) }
    }

    // MARK: Entries

    /// After an entry's ELF image: the magic, then the image's content hash (little-endian).
    private static let magic = Array("pmcache1".utf8)
    private static let trailer = 16

    /// The library file for `key` if the cache holds a sound one; a damaged,
    /// foreign or symlinked entry is deleted. A hit marks the entry as used.
    func lookup(_ key: String) -> String? {
        let file = path + "/" + key + ".so"
        let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno != ENOENT { unlink(file) } // ELOOP (a symlink) and the like
            return nil
        }
        defer { close(descriptor) }
        guard Self.isSound(descriptor) else {
            unlink(file)
            return nil
        }
        futimens(descriptor, nil) // used now: least recently used entries go first
        return file
    }

    /// Whether the file is a regular file of this user's whose trailer matches its content.
    private static func isSound(_ descriptor: Int32) -> Bool {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(),
              info.st_size > trailer else { return false }
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, 0) }
        guard read == size, Array(bytes[(size - trailer)..<(size - 8)]) == magic else { return false }
        let stored = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: size - 8, as: UInt64.self) }
        let actual = bytes.withUnsafeBytes { Toolchain.contentHash(UnsafeRawBufferPointer(rebasing: $0[..<(size - trailer)])) }
        return stored.littleEndian == actual
    }

    /// Moves the library `built` (in a work folder of this cache) into place as
    /// the entry for `key`, with its content hash; returns the entry's file.
    func publish(_ built: String, key: String) throws -> String {
        let target = path + "/" + key + ".so"
        guard let data = FileManager.default.contents(atPath: built), let file = fopen(built, "ab") else {
            throw MTLLibraryError(code: .internalError, message: "cannot read the compiled library \(built)")
        }
        let hash = data.withUnsafeBytes { Toolchain.contentHash($0) }.littleEndian
        let trailer = Self.magic + withUnsafeBytes(of: hash) { Array($0) }
        let written = fwrite(trailer, 1, trailer.count, file)
        guard fclose(file) == 0, written == trailer.count else {
            throw MTLLibraryError(code: .internalError, message: "cannot write \(built): \(String(cString: strerror(errno)))")
        }
        // Atomic: a reader sees the old entry, none, or the whole new one; racing writers of one key agree.
        guard rename(built, target) == 0 else {
            throw MTLLibraryError(code: .internalError, message: "cannot write \(target): \(String(cString: strerror(errno)))")
        }
        return target
    }

    /// A new work folder for one compile, named after this process (see removeLeftovers).
    func makeWorkFolder() throws -> String {
        guard !path.isEmpty else {
            throw MTLLibraryError(code: .internalError, message:
                "no folder to compile in: the kernel cache is unusable and no private temporary folder could be made (TMPDIR)")
        }
        let folder = path + "/tmp-\(getpid())-\(UUID().uuidString)"
        guard mkdir(folder, 0o700) == 0 else {
            throw MTLLibraryError(code: .internalError, message: "cannot make \(folder): \(String(cString: strerror(errno)))")
        }
        return folder
    }

    // MARK: Housekeeping

    private struct Item {
        let name: String
        let bytes: UInt64
        let used: Double
        var folder: Bool
    }

    private func items() -> [Item] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        return names.compactMap { name in
            var info = stat()
            guard lstat(path + "/" + name, &info) == 0 else { return nil }
            #if os(Linux)
            let modified = info.st_mtim
            #else
            let modified = info.st_mtimespec
            #endif
            return Item(name: name, bytes: UInt64(max(info.st_size, 0)),
                        used: Double(modified.tv_sec) + Double(modified.tv_nsec) * 1e-9,
                        folder: info.st_mode & S_IFMT == S_IFDIR)
        }
    }

    /// An entry's files share a stem: "<key>.so"; "pch-<hash>.pch", ".o" and ".ii".
    private static func stem(_ name: String) -> String {
        name.firstIndex(of: ".").map { String(name[..<$0]) } ?? name
    }

    /// Removes the work folders of compiles whose process is gone (or that are
    /// older than any compile can run). `tmp-<pid>-<uuid>`; older versions: `tmp-<uuid>`.
    func removeLeftovers() {
        let now = Date().timeIntervalSince1970
        for item in items() where item.folder && item.name.hasPrefix("tmp-") {
            let parts = item.name.split(separator: "-")
            let owner = parts.count > 2 ? Int32(parts[1]) : nil
            let gone = owner.map { $0 != getpid() && kill($0, 0) != 0 && errno == ESRCH } ?? (now - item.used > 600)
            if gone || now - item.used > Self.leftoverAge { try? FileManager.default.removeItem(atPath: path + "/" + item.name) }
        }
    }

    static func maxBytes() throws -> UInt64 { try Toolchain.byteSize("PYMETAL_CACHE_MAX") ?? defaultMaxBytes }

    /// Deletes the least recently used entries until the cache holds at most
    /// PYMETAL_CACHE_MAX bytes, never the entry `keep` (just made).
    func evict(keep: String) throws {
        let limit = try Self.maxBytes()
        var groups: [String: (bytes: UInt64, used: Double, names: [String])] = [:]
        for item in items() where !item.folder {
            let stem = Self.stem(item.name)
            var group = groups[stem] ?? (0, 0, [])
            group.bytes += item.bytes
            group.used = max(group.used, item.used)
            group.names.append(item.name)
            groups[stem] = group
        }
        var total = groups.values.reduce(0) { $0 + $1.bytes }
        for (stem, group) in groups.sorted(by: { $0.value.used < $1.value.used }) where total > limit && stem != keep {
            for name in group.names { unlink(path + "/" + name) }
            total -= group.bytes
        }
    }

    func info() throws -> KernelCacheInfo {
        let files = items().filter { !$0.folder }
        return KernelCacheInfo(path: path, persistent: persistent, entries: files.filter { $0.name.hasSuffix(".so") }.count,
                               bytes: files.reduce(0) { $0 + $1.bytes }, maxBytes: try Self.maxBytes())
    }

    /// Deletes every entry (loaded libraries stay loaded) and the leftovers of
    /// killed compiles, and the folder earlier versions used (pymetal/msl);
    /// returns how many kernel libraries were deleted.
    func clear() -> Int {
        var removed = 0
        for item in items() where !item.folder {
            if unlink(path + "/" + item.name) == 0 && item.name.hasSuffix(".so") { removed += 1 }
        }
        removeLeftovers()
        if persistent { try? FileManager.default.removeItem(atPath: path[..<(path.lastIndex(of: "/") ?? path.endIndex)] + "/msl") }
        return removed
    }
}
