import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open file, read and written at explicit offsets with POSIX calls (`pread`, `pwrite`),
/// closed by ``close()`` or when the last reference to it goes away.
///
/// Holding a reference keeps the descriptor valid, so one thread can flush a file while another
/// moves on to the next one. Reads and writes at explicit offsets never share a file position,
/// so threads may use one file at once (the caller decides who writes where).
public final class OpenFile: @unchecked Sendable {
    // Safety: `descriptor` and `path` never change; `closed` is set once, by `close()`, which the
    // owner calls when no other thread uses the file any more.
    /// The descriptor.
    public let descriptor: Int32
    /// The file's path.
    public let path: String
    private var closed = false

    /// Opens a file.
    ///
    /// - Parameters:
    ///   - writable: Whether to open it for writing as well as reading.
    ///   - create: Whether to create it if it does not exist (`exclusive`: fail if it does).
    ///   - truncate: Whether to empty it.
    ///   - permissions: The bits a file this call creates gets (owner only by default), whatever
    ///     the `umask`. An existing file keeps its bits.
    public init(
        _ path: String, writable: Bool, create: Bool = false, exclusive: Bool = false, truncate: Bool = false,
        permissions: FilePermissions = .private
    ) throws {
        var flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC
        if truncate { flags |= O_TRUNC }
        // A create is tried exclusively first, so that the open knows whether it made the file: a
        // file it made gets exactly `permissions` (the `umask` may have removed bits), an existing
        // one keeps its own.
        var descriptor: Int32 = -1
        var created = false
        if create {
            descriptor = open(path, flags | O_CREAT | O_EXCL, mode_t(permissions.fileMode))
            created = descriptor >= 0
            if descriptor < 0 && (exclusive || errno != EEXIST) { throw FileIO.failure("create", path) }
        }
        if descriptor < 0 { descriptor = open(path, flags) }
        guard descriptor >= 0 else { throw FileIO.failure(create ? "create" : "open", path) }
        self.descriptor = descriptor
        self.path = path
        if created && permissions != .private {
            guard fchmod(descriptor, mode_t(permissions.fileMode)) == 0 else {
                throw FileIO.failure("change the permissions to \(permissions) of", path)
            }
        }
    }

    /// Opens an existing file for reading, or returns `nil` if there is none at `path`, without
    /// making the error a missing file would throw from ``init(_:writable:create:exclusive:truncate:permissions:)``
    /// (checking for a file that is usually absent, such as a write-ahead log, is then a system call).
    public static func openForReadingIfPresent(_ path: String) throws -> OpenFile? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw FileIO.failure("open", path)
        }
        return OpenFile(descriptor: descriptor, path: path)
    }

    /// Takes ownership of an open descriptor.
    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Opens the file at `url`; see the `String` form.
    public convenience init(
        _ url: URL, writable: Bool, create: Bool = false, exclusive: Bool = false,
        permissions: FilePermissions = .private
    ) throws {
        try self.init(url.path, writable: writable, create: create, exclusive: exclusive, permissions: permissions)
    }

    deinit { if !closed { systemClose(descriptor) } }

    /// Closes the file now, reporting a failure (on some file systems, a write error shows only here).
    public func close() throws {
        guard !closed else { return }
        closed = true
        guard systemClose(descriptor) == 0 else { throw FileIO.failure("close", path) }
    }

    /// The file's name, for messages.
    public var name: String { (path as NSString).lastPathComponent }

    /// The file's location.
    public var url: URL { URL(fileURLWithPath: path) }

    /// The file's size in bytes.
    public func size() throws -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileIO.failure("examine", path) }
        return Int(info.st_size)
    }

    /// Whether ``path`` still names this open file: `false` once another file was renamed over it
    /// (as editors, sync tools and restores do) or it was removed, when writes through this
    /// descriptor would reach a file nobody opens again.
    public func isStillAtItsPath() throws -> Bool {
        var open = stat()
        guard fstat(descriptor, &open) == 0 else { throw FileIO.failure("examine", path) }
        guard let named = try FileIO.identity(of: path) else { return false }
        let identity = FileIdentity(open)
        return named.device == identity.device && named.inode == identity.inode
    }

    /// Writes all of `bytes` at `offset`, retrying short and interrupted writes.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        var done = 0
        while done < bytes.count {
            let written = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if written < 0 {
                if errno == EINTR { continue }
                throw FileIO.failure("write \(bytes.count) bytes at offset \(offset) to", path)
            }
            done += written
        }
    }

    /// Writes all of `bytes` at `offset`.
    public func write(_ bytes: [UInt8], at offset: Int) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    /// Reads `count` bytes at `offset`, or fewer if the file ends first.
    public func read(count: Int, at offset: Int) throws -> [UInt8] {
        // Nothing to read: the shared empty array. `Array(unsafeUninitializedCapacity: 0)` would store
        // its count into the standard library's one empty-array buffer, which every thread reads (the
        // thread sanitizer reported it against an append-log save reading an empty change list).
        guard count > 0 else { return [] }
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let got = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if got < 0 {
                    if errno == EINTR { continue }
                    initialized = done
                    throw FileIO.failure("read at offset \(offset + done)", path)
                }
                if got == 0 { break }
                done += got
            }
            initialized = done
        }
    }

    /// Reads the whole file.
    public func readAll() throws -> [UInt8] { try read(count: try size(), at: 0) }

    /// Cuts the file to `length` bytes.
    public func truncate(to length: Int) throws {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw FileIO.failure("truncate to \(length) bytes", path)
        }
    }

    /// Forces the file's data (and the size needed to read it) to stable storage: `fdatasync` on
    /// Linux, `F_FULLFSYNC` on Apple platforms (a plain `fsync` there stops at the drive's cache).
    public func sync() throws {
        #if os(Linux)
            let result = fdatasync(descriptor)
        #else
            let result = fcntl(descriptor, F_FULLFSYNC)
        #endif
        guard result == 0 else { throw FileIO.failure("flush to disk", path) }
    }
}

@inline(__always)
@discardableResult
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
