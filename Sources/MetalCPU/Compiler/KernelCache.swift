// The disk cache of compiled kernel libraries: $XDG_CACHE_HOME/pymetal/kernels,
// else ~/.cache/pymetal/kernels. A library there is native code this process
// loads and runs, so the cache must be this user's alone: its folders are made
// 0700 and refused (with a warning, for a cache kept for the process only, in
// a private temporary folder) when another user owns them or can write them.
// Entries are written in a work folder and renamed into place, carry a hash of
// their content (a trailer after the ELF image, which the loader ignores),
// and are checked before loading: anything wrong (truncated, corrupt, a
// symlink, another owner, a folder) is deleted and compiled again. An entry
// also lists the files clang read that are not pymetal's own headers (an
// `#include "/abs/path.h"`, a system header): it is used only while each of
// them is unchanged. The least recently used entries are evicted above
// PYMETAL_CACHE_MAX bytes (never the precompiled header in use), and the work
// folders of killed compiles are removed. A cache that cannot be written (a
// full disk, a read-only one) is left for a private temporary folder.
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
    private static let lock = CPUFork.leaf(Lock())
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
            return privateCache((error as? Refused)?.reason ?? "\(error)")
        }
    }

    /// Leaves `cache` (which could not be written: `reason`) for a private folder,
    /// for the rest of this process; returns the cache to use now.
    static func fallBack(from cache: KernelCache, reason: String) -> KernelCache {
        lock {
            if let opened, opened.cache !== cache { return opened.cache } // another thread did already
            let replacement = privateCache(reason)
            if let place = opened?.place { opened = (place, replacement) }
            return replacement
        }
    }

    /// A folder of this process's own (removed at exit), with a warning saying why. Called with the lock held.
    private static func privateCache(_ reason: String) -> KernelCache {
        var template = Array((Toolchain.temporaryFolder + "/pymetal-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) } // 0700, a new name
        let folder = made.map { String(cString: $0) } ?? ""
        if !folder.isEmpty {
            if privateFolders.isEmpty {
                atexit { for folder in KernelCache.privateFolders { try? FileManager.default.removeItem(atPath: folder) } }
            }
            privateFolders.append(folder)
        }
        fputs("pymetal: compiled kernels are not cached on disk: \(reason)"
              + (folder.isEmpty ? "\n" : "; they are kept in \(folder) for this process\n"), stderr)
        return KernelCache(path: folder, persistent: false)
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

    /// After an entry's ELF image: its dependencies (Dependency.list), their
    /// length, the magic, then the content hash of all before it (little-endian).
    private static let magic = Array("pmcache2".utf8)
    private static let trailer = 24

    /// The library file for `key` if the cache holds a sound one whose
    /// dependencies are unchanged (with them); a damaged, foreign or symlinked
    /// entry, or a folder in its place, is deleted. A hit marks the entry as used.
    func lookup(_ key: String, suffix: String = ".so") -> (file: String, dependencies: [Dependency])? {
        let file = path + "/" + key + suffix
        let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno != ENOENT { Self.remove(file) } // ELOOP (a symlink) and the like
            return nil
        }
        defer { close(descriptor) }
        guard let dependencies = Self.soundDependencies(descriptor) else {
            Self.remove(file)
            return nil
        }
        // A changed dependency: compiled again, and the new entry replaces this one.
        guard Dependency.unchanged(dependencies) else { return nil }
        futimens(descriptor, nil) // used now: least recently used entries go first
        return (file, dependencies)
    }

    /// Deletes a bad entry: a file, or a folder someone put in its place (else it would fail that source for ever).
    static func remove(_ file: String) {
        if unlink(file) != 0 && (errno == EISDIR || errno == EPERM) { try? FileManager.default.removeItem(atPath: file) }
    }

    /// The dependencies a regular file of this user's lists, if its trailer matches its content.
    private static func soundDependencies(_ descriptor: Int32) -> [Dependency]? {
        sound(descriptor)?.dependencies
    }

    /// The content before the trailer of entry `file` (a lazy library's plan: LazyLibrary.swift), if it is sound.
    static func body(_ file: String) -> [UInt8]? {
        let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return sound(descriptor)?.body
    }

    private static func sound(_ descriptor: Int32) -> (body: [UInt8], dependencies: [Dependency])? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(),
              info.st_size > trailer else { return nil }
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, 0) }
        guard read == size, Array(bytes[(size - 16)..<(size - 8)]) == magic else { return nil }
        let (stored, listed) = bytes.withUnsafeBytes {
            ($0.loadUnaligned(fromByteOffset: size - 8, as: UInt64.self).littleEndian,
             $0.loadUnaligned(fromByteOffset: size - trailer, as: UInt64.self).littleEndian)
        }
        let actual = bytes.withUnsafeBytes { Toolchain.contentHash(UnsafeRawBufferPointer(rebasing: $0[..<(size - 8)])) }
        guard stored == actual, listed <= UInt64(size - trailer),
              let dependencies = Dependency.parse(bytes[(size - trailer - Int(listed))..<(size - trailer)]) else { return nil }
        return (Array(bytes[..<(size - trailer - Int(listed))]), dependencies)
    }

    /// Appends the trailer (the dependencies and the content hash) to the library
    /// `built` in a work folder of this cache, which is then ready to load and publish.
    func seal(_ built: String, dependencies: [Dependency]) throws {
        guard let image = FileManager.default.contents(atPath: built) else {
            throw MTLLibraryError(code: .internalError, message: "cannot read the compiled library \(built)")
        }
        let list = Dependency.list(dependencies)
        var body = Array(image) + list + withUnsafeBytes(of: UInt64(list.count).littleEndian) { Array($0) } + Self.magic
        let hash = body.withUnsafeBytes { Toolchain.contentHash($0) }.littleEndian
        body += withUnsafeBytes(of: hash) { Array($0) }
        try Self.writeFile(Array(body[image.count...]), to: built, flags: O_WRONLY | O_APPEND)
    }

    /// Moves the sealed library `built` into place as the entry for `key`; returns the entry's file.
    func publish(_ built: String, key: String, suffix: String = ".so") throws -> String {
        let target = path + "/" + key + suffix
        // Atomic: a reader sees the old entry, none, or the whole new one; racing writers of one key agree.
        if rename(built, target) != 0 {
            let error = errno
            guard error == EISDIR || error == ENOTEMPTY || error == EEXIST else { throw Self.unwritable(target, error) }
            Self.remove(target) // a folder in the entry's place
            guard rename(built, target) == 0 else { throw Self.unwritable(target, errno) }
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
        guard mkdir(folder, 0o700) == 0 else { throw Self.unwritable(folder, errno) }
        return folder
    }

    /// A file of the cache could not be written (full, read-only, ...): the
    /// compile is tried again in a private folder (MSLCompiler).
    struct Unwritable: Error, CustomStringConvertible {
        let description: String
    }

    static func unwritable(_ path: String, _ error: Int32) -> Unwritable {
        Unwritable(description: "cannot write \(path): \(String(cString: strerror(error)))")
    }

    /// Writes `bytes` to a new file `path` (Foundation's errors would be a CocoaError dump).
    static func writeFile(_ bytes: [UInt8], to path: String, flags: Int32 = O_WRONLY | O_CREAT | O_TRUNC) throws {
        let descriptor = open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw unwritable(path, errno) }
        do {
            try writeAll(bytes, to: descriptor, path: path)
        } catch {
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else { throw unwritable(path, errno) }
    }

    static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        var done = 0
        while done < bytes.count {
            let wrote = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + done, bytes.count - done) }
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else { throw unwritable(path, wrote < 0 ? errno : ENOSPC) }
            done += wrote
        }
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

    /// An entry's files share a stem: "<key>.so" (a lazy library's plan: "<key>.lib"); "pch-<hash>.pch", ".o" and ".ii".
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
    /// PYMETAL_CACHE_MAX bytes, never those in `keep` (stems: the entry just
    /// made, and the precompiled header it used, which every compile needs: a
    /// limit below its size would otherwise rebuild it at every compile).
    func evict(keep: Set<String>) throws {
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
        for (stem, group) in groups.sorted(by: { $0.value.used < $1.value.used }) where total > limit && !keep.contains(stem) {
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

/// A file clang read to compile an entry, other than pymetal's own headers
/// (whose content is in every key: Toolchain.identity): an `#include` of an
/// absolute path or one found on a system or -I path. Size and modification
/// time are checked at every use, the content when they differ (a touch alone
/// keeps the entry).
struct Dependency: Equatable {
    let path: String
    let size: Int64
    let modified: Int64 // nanoseconds
    let hash: UInt64

    /// The file as it is now. One that is not a regular file (a FIFO) or cannot be read
    /// gets size -1, which no file has: the entry is then never used again.
    init(path: String) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, let (size, modified) = Self.stamp(path),
              let data = FileManager.default.contents(atPath: path), data.count == size else {
            self.init(path: path, size: -1, modified: 0, hash: 0)
            return
        }
        self.init(path: path, size: size, modified: modified, hash: data.withUnsafeBytes { Toolchain.contentHash($0) })
    }

    private init(path: String, size: Int64, modified: Int64, hash: UInt64) {
        (self.path, self.size, self.modified, self.hash) = (path, size, modified, hash)
    }

    private static func stamp(_ path: String) -> (size: Int64, modified: Int64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if os(Linux)
        let modified = info.st_mtim
        #else
        let modified = info.st_mtimespec
        #endif
        return (Int64(info.st_size), Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec))
    }

    /// Whether every file still has the content it had.
    static func unchanged(_ dependencies: [Dependency]) -> Bool {
        dependencies.allSatisfy { file in
            guard let (size, modified) = stamp(file.path), size == file.size else { return false }
            return modified == file.modified || Dependency(path: file.path).hash == file.hash
        }
    }

    /// One line per file: "size modified hash path".
    static func list(_ dependencies: [Dependency]) -> [UInt8] {
        Array(dependencies.map { "\($0.size) \($0.modified) \(String($0.hash, radix: 16)) \($0.path)\n" }.joined().utf8)
    }

    static func parse(_ bytes: ArraySlice<UInt8>) -> [Dependency]? {
        var found: [Dependency] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 3)
            guard fields.count == 4, let size = Int64(fields[0]), let modified = Int64(fields[1]),
                  let hash = UInt64(fields[2], radix: 16) else { return nil }
            found.append(Dependency(path: String(fields[3]), size: size, modified: modified, hash: hash))
        }
        return found
    }

    /// The files of clang's dependency file (-MD -MF, make syntax: `target: a b \` lines, a
    /// space in a name written `\ `), without those below `excluded` folders.
    static func files(inMakeRule rule: String, excluding excluded: [String]) -> [String] {
        guard let colon = rule.firstRange(of: ": ") else { return [] }
        var files: [String] = []
        var name = ""
        var escaped = false
        for character in rule[colon.upperBound...] + " " {
            if escaped {
                escaped = false
                if character == "\n" { continue } // a line continuation
                if character != " " && character != "#" { name.append("\\") } // only `\ ` and `\#` are escapes
                name.append(character)
            } else if character == "\\" {
                escaped = true
            } else if character == " " || character == "\n" {
                if !name.isEmpty { files.append(name.replacing("$$", with: "$")) }
                name = ""
            } else {
                name.append(character)
            }
        }
        var seen: Set<String> = []
        return files.filter { file in
            seen.insert(file).inserted && !excluded.contains { file.hasPrefix($0.hasSuffix("/") ? $0 : $0 + "/") }
        }
    }
}
