import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The directory operations of an append log, with the syncs that make them durable.
enum FileSystem {
    /// An I/O error naming what failed and the system's reason.
    static func error(_ code: Int32, _ what: String) -> DataStoreError {
        let reason = String(cString: strerror(code))
        var remedy = "Check that the directory exists, is writable, and that the disk has space"
        if code == ENOSPC || code == EDQUOT { remedy = "Free disk space, then save again" }
        if code == EACCES || code == EPERM || code == EROFS {
            remedy = "Make the store's directory writable by this process"
        }
        return DataStoreError(.io, "\(what): \(reason) (errno \(code))", remedy: remedy)
    }

    /// Syncs a directory, so that files created, renamed or removed in it stay so after a crash.
    static func syncDirectory(_ url: URL) throws {
        let descriptor = url.withUnsafeFileSystemRepresentation { open($0!, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw error(errno, "cannot open the directory '\(url.path)' to sync it") }
        defer { close(descriptor) }
        #if os(Linux)
            guard fsync(descriptor) == 0 else { throw error(errno, "cannot sync the directory '\(url.path)'") }
        #else
            _ = fsync(descriptor)
        #endif
    }

    /// Renames a file, replacing any file at the destination atomically.
    static func rename(_ source: URL, to destination: URL) throws {
        let result = source.withUnsafeFileSystemRepresentation { from in
            destination.withUnsafeFileSystemRepresentation { to in
                #if canImport(Glibc) || canImport(Musl)
                    Glibc.rename(from!, to!)
                #else
                    Darwin.rename(from!, to!)
                #endif
            }
        }
        guard result == 0 else {
            throw error(errno, "cannot rename '\(source.path)' to '\(destination.lastPathComponent)'")
        }
    }

    /// Creates a directory (and its parents) if it does not exist.
    static func makeDirectory(_ url: URL) throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw DataStoreError(
                .io, "cannot create the directory '\(url.path)'",
                remedy: "Check that its parent exists and is writable", underlyingError: error)
        }
    }

    /// Removes a file; a missing file is not an error.
    static func remove(_ url: URL) throws {
        let result = url.withUnsafeFileSystemRepresentation { unlink($0!) }
        guard result == 0 || errno == ENOENT else { throw error(errno, "cannot remove '\(url.path)'") }
    }

    /// The names of the entries of a directory; empty when it does not exist.
    static func names(in url: URL) throws -> [String] {
        guard exists(url) else { return [] }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw DataStoreError(.io, "cannot list the directory '\(url.path)'", underlyingError: error)
        }
    }

    /// Whether a file or directory exists at `url`.
    static func exists(_ url: URL) -> Bool {
        var info = stat()
        return url.withUnsafeFileSystemRepresentation { stat($0!, &info) } == 0
    }

    /// Whether `url` is a directory.
    static func isDirectory(_ url: URL) -> Bool {
        var info = stat()
        guard url.withUnsafeFileSystemRepresentation({ stat($0!, &info) }) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The size of a file, or 0 if it cannot be read.
    static func size(of url: URL) -> Int {
        var info = stat()
        guard url.withUnsafeFileSystemRepresentation({ stat($0!, &info) }) == 0 else { return 0 }
        return Int(info.st_size)
    }

    /// Writes a file so that, after a crash, it is either absent or whole: a temporary file,
    /// synced, renamed over the destination, then the directory synced.
    static func writeAtomically(_ bytes: [UInt8], to url: URL) throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + ".tmp")
        try remove(temporary)
        do {
            let file = try LogFile(temporary, writable: true, create: true, exclusive: true)
            try file.write(bytes, at: 0)
            try file.sync()
        } catch {
            try? remove(temporary)
            throw error
        }
        try rename(temporary, to: url)
        try syncDirectory(url.deletingLastPathComponent())
    }
}
