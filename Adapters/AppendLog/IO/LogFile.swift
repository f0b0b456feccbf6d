import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open file, read and written at explicit offsets with POSIX calls, closed when the last
/// reference to it goes away.
///
/// Holding a reference keeps the descriptor valid, so a group-commit leader can sync a segment
/// while another thread rolls the log to the next one.
final class LogFile: Sendable {
    /// The descriptor.
    let descriptor: Int32
    /// The file's location.
    let url: URL

    /// Opens a file.
    ///
    /// - Parameters:
    ///   - create: Whether to create the file if it does not exist (`exclusive`: fail if it does).
    ///   - writable: Whether to open it for writing as well as reading.
    init(_ url: URL, writable: Bool, create: Bool = false, exclusive: Bool = false) throws {
        var flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC
        if create { flags |= O_CREAT }
        if exclusive { flags |= O_EXCL }
        let descriptor = url.withUnsafeFileSystemRepresentation { path in open(path!, flags, 0o644) }
        guard descriptor >= 0 else {
            throw FileSystem.error(errno, "cannot open '\(url.path)'")
        }
        self.descriptor = descriptor
        self.url = url
    }

    deinit { close(descriptor) }

    /// The file's name, for messages.
    var name: String { url.lastPathComponent }

    /// The file's size in bytes.
    func size() throws -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw FileSystem.error(errno, "cannot read the size of '\(url.path)'")
        }
        return Int(info.st_size)
    }

    /// Writes all of `bytes` at `offset`, retrying short writes.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        var done = 0
        while done < bytes.count {
            let written = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if written < 0 {
                if errno == EINTR { continue }
                throw FileSystem.error(errno, "cannot write \(bytes.count) bytes to '\(url.path)' at offset \(offset)")
            }
            done += written
        }
    }

    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: [UInt8], at offset: Int) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }

    /// Reads `count` bytes at `offset`, or fewer if the file ends first.
    func read(count: Int, at offset: Int) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let got = pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if got < 0 {
                    if errno == EINTR { continue }
                    initialized = done
                    throw FileSystem.error(errno, "cannot read '\(url.path)' at offset \(offset + done)")
                }
                if got == 0 { break }
                done += got
            }
            initialized = done
        }
    }

    /// Reads the whole file.
    func readAll() throws -> [UInt8] { try read(count: try size(), at: 0) }

    /// Cuts the file to `length` bytes.
    func truncate(to length: Int) throws {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw FileSystem.error(errno, "cannot truncate '\(url.path)' to \(length) bytes")
        }
    }

    /// Forces the file's data (and the size needed to read it) to stable storage.
    func sync() throws {
        #if os(Linux)
            let result = fdatasync(descriptor)
        #else
            let result = fcntl(descriptor, F_FULLFSYNC)
        #endif
        guard result == 0 else { throw FileSystem.error(errno, "cannot sync '\(url.path)' to disk") }
    }
}
