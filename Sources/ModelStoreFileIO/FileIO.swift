import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file operations a durable store needs, with the durability steps explicit: the building
/// blocks of the JSON file store and the append log, public for adapter authors.
///
/// Every operation that fails throws a ``DataStoreError`` with the code ``DataStoreError/Code/io``
/// that names the operation and the path, with a remedy that fits the `errno` and a
/// ``FileIOFailure`` as its `underlyingError`.
///
/// ## Making a change durable
///
/// A file is durable once its data is flushed (``OpenFile/sync()``); a *name* (a file created,
/// renamed or removed) once its folder is flushed (``syncDirectory(_:)``). ``writeAtomically(_:to:)``
/// does both in the order that leaves, after a crash at any instant, either the old file or the new
/// one, whole.
///
/// ## Folders that cannot be flushed
///
/// Some file systems (network and FAT file systems, some FUSE ones) refuse to flush a folder with
/// `EINVAL` or `ENOTSUP`: they have no separate folder metadata to flush, or cannot promise it.
/// ``syncDirectory(_:)`` treats those two answers as "nothing to flush" on every platform; every
/// other failure (`EIO`, `ENOSPC`…) is an error on every platform, because the rename it was
/// meant to make durable may not survive a power loss.
public enum FileIO {
    /// Throws the error for the failed system call `operation` on `path`, from `errno`.
    static func failure(_ operation: String, _ path: String, code: Int32 = errno) -> DataStoreError {
        FileIOFailure(operation: operation, path: path, code: code).storeError()
    }

    /// The whole file and the identity of what was read, or `nil` if there is no file.
    ///
    /// A file larger than `limit` bytes throws an error whose ``FileIOFailure/code`` is `EFBIG`.
    public static func read(_ path: String, limit: Int = .max) throws -> (bytes: [UInt8], identity: FileIdentity)? {
        guard let file = try OpenFile.openForReadingIfPresent(path) else { return nil }
        var status = stat()
        guard fstat(file.descriptor, &status) == 0 else { throw failure("examine", path) }
        let size = Int(status.st_size)
        guard size <= limit else { throw failure("read (it is larger than \(limit) bytes)", path, code: EFBIG) }
        return (try file.read(count: size, at: 0), FileIdentity(status))
    }

    /// The identity of the file at `path`, or `nil` if there is none.
    public static func identity(of path: String) throws -> FileIdentity? {
        var status = stat()
        if stat(path, &status) != 0 {
            if errno == ENOENT { return nil }
            throw failure("examine", path)
        }
        return FileIdentity(status)
    }

    /// Whether a file or folder exists at `path`.
    public static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }

    /// Whether `path` is a folder.
    public static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else { return false }
        return (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The size of a file, or 0 if it cannot be examined.
    public static func size(of path: String) -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        return Int(status.st_size)
    }

    /// Creates (or truncates) `path` with `permissions`, writes `bytes`, calls `afterWrite`, and
    /// flushes the file to the disk when `sync` is set. The file's name is not durable until its
    /// folder is flushed.
    public static func write(
        _ bytes: UnsafeRawBufferPointer, to path: String, sync: Bool, permissions: FilePermissions = .private,
        afterWrite: () throws -> Void = {}
    ) throws {
        let file = try OpenFile(path, writable: true, create: true, truncate: true, permissions: permissions)
        try file.write(bytes, at: 0)
        try afterWrite()
        if sync { try file.sync() }
        try file.close()
    }

    /// Creates (or truncates) `path` with `permissions` and writes, one after the other, the pieces
    /// `contents` passes to the function it is given; then calls `afterWrite`, and flushes the file
    /// to the disk when `sync` is set. For bytes made piece by piece (a document encrypted as it is
    /// written), so that no buffer holds them all. The file's name is not durable until its folder
    /// is flushed.
    public static func write(
        to path: String, sync: Bool, permissions: FilePermissions = .private,
        contents: (_ append: (UnsafeRawBufferPointer) throws -> Void) throws -> Void,
        afterWrite: () throws -> Void = {}
    ) throws {
        let file = try OpenFile(path, writable: true, create: true, truncate: true, permissions: permissions)
        var offset = 0
        try contents { piece in
            try file.write(piece, at: offset)
            offset += piece.count
        }
        try afterWrite()
        if sync { try file.sync() }
        try file.close()
    }

    /// Writes a file so that, after a crash at any instant, it is either as before or whole: a
    /// temporary file `<path>.tmp` with `permissions`, flushed, renamed over `path`, then the
    /// folder flushed.
    public static func writeAtomically(
        _ bytes: [UInt8], to path: String, permissions: FilePermissions = .private
    ) throws {
        let temporary = path + ".tmp"
        do {
            try bytes.withUnsafeBytes { try write($0, to: temporary, sync: true, permissions: permissions) }
        } catch {
            try? remove(temporary)
            throw error
        }
        try rename(temporary, to: path)
        try syncDirectory(parent(of: path))
    }

    /// Flushes a file's data (and the size needed to read it) to the disk.
    public static func sync(_ path: String) throws {
        try OpenFile(path, writable: false).sync()
    }

    /// Flushes a folder's entries (files created, renamed or removed) to the disk; see the type's
    /// discussion for file systems that cannot.
    public static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open the folder", path) }
        defer { close(descriptor) }
        if fsync(descriptor) != 0 {
            let code = errno
            if code == EINVAL || code == ENOTSUP || code == EOPNOTSUPP { return }
            throw failure("flush the folder to disk", path, code: code)
        }
    }

    /// Atomically replaces `destination` with `source`.
    public static func rename(_ source: String, to destination: String) throws {
        guard systemRename(source, destination) == 0 else { throw failure("rename to '\(destination)'", source) }
    }

    /// Makes `destination` a copy of `source`: a hard link when the file system allows it, else a
    /// flushed byte copy with `permissions`.
    public static func copy(_ source: String, to destination: String, permissions: FilePermissions = .private)
        throws
    {
        unlink(destination)
        if link(source, destination) == 0 { return }
        guard let contents = try read(source) else { throw failure("copy", source, code: ENOENT) }
        try contents.bytes.withUnsafeBytes { try write($0, to: destination, sync: true, permissions: permissions) }
    }

    /// Removes a file; a missing file is not an error.
    public static func remove(_ path: String) throws {
        guard unlink(path) == 0 || errno == ENOENT else { throw failure("remove", path) }
    }

    /// Creates a folder and its missing parents with `permissions`' folder bits (owner only by
    /// default), whatever the `umask`; an existing folder keeps its bits.
    public static func createDirectory(_ path: String, permissions: FilePermissions = .private) throws {
        if isDirectory(path) { return }
        let parent = parent(of: path)
        if !parent.isEmpty && parent != path && parent != "/" { try createDirectory(parent, permissions: permissions) }
        if mkdir(path, mode_t(permissions.folderMode)) != 0 {
            if errno == EEXIST { return }
            throw failure("create the folder", path)
        }
        if permissions != .private { try setMode(permissions.folderMode, of: path) }
    }

    /// The names in a folder (without `.` and `..`); none if it does not exist.
    public static func contents(of path: String) throws -> [String] {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return [] }
            throw failure("list the folder", path)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The folder that holds `path`.
    public static func parent(of path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }
}

// URL forms, for stores that keep URLs.
extension FileIO {
    /// Whether a file or folder exists at `url`.
    public static func exists(_ url: URL) -> Bool { exists(url.path) }

    /// Whether `url` is a folder.
    public static func isDirectory(_ url: URL) -> Bool { isDirectory(url.path) }

    /// The size of a file, or 0 if it cannot be examined.
    public static func size(of url: URL) -> Int { size(of: url.path) }

    /// Writes a file atomically: a flushed temporary file renamed into place, then the folder flushed.
    public static func writeAtomically(_ bytes: [UInt8], to url: URL, permissions: FilePermissions = .private)
        throws
    {
        try writeAtomically(bytes, to: url.path, permissions: permissions)
    }

    /// Flushes a folder's entries to the disk.
    public static func syncDirectory(_ url: URL) throws { try syncDirectory(url.path) }

    /// Atomically replaces `destination` with `source`.
    public static func rename(_ source: URL, to destination: URL) throws {
        try rename(source.path, to: destination.path)
    }

    /// Removes a file; a missing file is not an error.
    public static func remove(_ url: URL) throws { try remove(url.path) }

    /// Creates a folder and its missing parents with `permissions`' folder bits.
    public static func createDirectory(_ url: URL, permissions: FilePermissions = .private) throws {
        try createDirectory(url.path, permissions: permissions)
    }

    /// The names in a folder; none if it does not exist.
    public static func contents(of url: URL) throws -> [String] { try contents(of: url.path) }
}

@inline(__always)
private func systemRename(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}
