import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The identity of a file's current contents, as far as the file system tells it cheaply: which
/// inode, how long, when last changed. A save replaces the file (new inode) and stamps new times,
/// so two reads with equal identities read the same save.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modificationSeconds: Int64
    var modificationNanoseconds: Int64
    var changeSeconds: Int64
    var changeNanoseconds: Int64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        #if canImport(Darwin)
            modificationSeconds = Int64(status.st_mtimespec.tv_sec)
            modificationNanoseconds = Int64(status.st_mtimespec.tv_nsec)
            changeSeconds = Int64(status.st_ctimespec.tv_sec)
            changeNanoseconds = Int64(status.st_ctimespec.tv_nsec)
        #else
            modificationSeconds = Int64(status.st_mtim.tv_sec)
            modificationNanoseconds = Int64(status.st_mtim.tv_nsec)
            changeSeconds = Int64(status.st_ctim.tv_sec)
            changeNanoseconds = Int64(status.st_ctim.tv_nsec)
        #endif
    }
}

/// A failed system call: what was done, on which path, and the `errno`.
struct FileSystemFailure: Error, Sendable {
    var operation: String
    var path: String
    var code: Int32

    /// The failure as a ``DataStoreError/io`` error.
    func storeError(_ what: String, remedy: String? = nil) -> DataStoreError {
        let reason = String(cString: strerror(code))
        let defaultRemedy: String
        switch code {
        case EACCES, EPERM, EROFS: defaultRemedy = "Check the permissions of the folder and the file"
        case ENOSPC, EDQUOT: defaultRemedy = "Free some disk space and try again"
        default: defaultRemedy = "Check that the disk is available and try again"
        }
        return DataStoreError(
            .io, "\(what): could not \(operation) '\(path)' (\(reason))", remedy: remedy ?? defaultRemedy,
            underlyingError: POSIXErrorCode(rawValue: code).map { POSIXError($0) } ?? nil)
    }
}

/// The POSIX file operations the store needs, with the durability steps made explicit.
enum FileSystem {
    static func check(_ result: Int32, _ operation: String, _ path: String) throws {
        if result != 0 { throw FileSystemFailure(operation: operation, path: path, code: errno) }
    }

    /// The whole file and the identity of what was read, or `nil` if there is no file.
    static func read(_ path: String, limit: Int) throws -> (bytes: [UInt8], identity: FileIdentity)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw FileSystemFailure(operation: "open", path: path, code: errno)
        }
        defer { close(descriptor) }
        var status = stat()
        try check(fstat(descriptor, &status), "examine", path)
        let size = Int(status.st_size)
        guard size <= limit else {
            throw FileSystemFailure(operation: "read (larger than the size limit)", path: path, code: EFBIG)
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var total = 0
        try bytes.withUnsafeMutableBytes { buffer in
            while total < size {
                let count = systemRead(descriptor, buffer.baseAddress! + total, size - total)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw FileSystemFailure(operation: "read", path: path, code: errno)
                }
                if count == 0 { break }
                total += count
            }
        }
        if total < size { bytes.removeLast(size - total) }
        return (bytes, FileIdentity(status))
    }

    /// The identity of the file at `path`, or `nil` if there is none.
    static func identity(of path: String) throws -> FileIdentity? {
        var status = stat()
        if stat(path, &status) != 0 {
            if errno == ENOENT { return nil }
            throw FileSystemFailure(operation: "examine", path: path, code: errno)
        }
        return FileIdentity(status)
    }

    static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }

    /// Creates (or truncates) `path`, writes `bytes`, calls `afterWrite`, and flushes the file to the
    /// disk when `sync` is set.
    static func write(
        _ bytes: UnsafeBufferPointer<UInt8>, to path: String, sync: Bool, afterWrite: () throws -> Void = {}
    ) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemFailure(operation: "create", path: path, code: errno) }
        var closed = false
        defer { if !closed { close(descriptor) } }
        var written = 0
        while written < bytes.count {
            let count = systemWrite(descriptor, bytes.baseAddress! + written, bytes.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                throw FileSystemFailure(operation: "write", path: path, code: errno)
            }
            written += count
        }
        try afterWrite()
        if sync { try check(fsync(descriptor), "flush to disk", path) }
        closed = true
        try check(close(descriptor), "close", path)
    }

    /// Flushes a file's data and metadata to the disk.
    static func sync(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystemFailure(operation: "open", path: path, code: errno) }
        defer { close(descriptor) }
        try check(fsync(descriptor), "flush to disk", path)
    }

    /// Flushes a directory's entries (renames, new files) to the disk.
    static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileSystemFailure(operation: "open the folder", path: path, code: errno) }
        defer { close(descriptor) }
        try check(fsync(descriptor), "flush the folder to disk", path)
    }

    /// Atomically replaces `destination` with `source`.
    static func rename(_ source: String, to destination: String) throws {
        try check(systemRename(source, destination), "rename to '\(destination)'", source)
    }

    /// Makes `destination` a copy of `source`: a hard link when the file system allows it, else a byte copy.
    static func copy(_ source: String, to destination: String) throws {
        unlink(destination)
        if link(source, destination) == 0 { return }
        guard let contents = try read(source, limit: .max) else {
            throw FileSystemFailure(operation: "copy", path: source, code: ENOENT)
        }
        try contents.bytes.withUnsafeBufferPointer { try write($0, to: destination, sync: true) }
    }

    static func remove(_ path: String) {
        unlink(path)
    }

    /// Creates a folder and its missing parents.
    static func createDirectory(_ path: String) throws {
        if exists(path) { return }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path { try createDirectory(parent) }
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw FileSystemFailure(operation: "create the folder", path: path, code: errno)
        }
    }

    /// The names in a folder (without `.` and `..`), or none if it doesn't exist.
    static func contents(of path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
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
}

// The system calls whose names clash with the store's own methods.
@inline(__always)
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

@inline(__always)
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

@inline(__always)
private func systemRename(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}
