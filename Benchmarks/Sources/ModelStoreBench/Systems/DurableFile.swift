import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Replaces a file the way the JSON-file adapter does: write a temporary file, fsync it, rename
/// it over the old one, fsync the directory. Used by the baselines so that they pay the same
/// durability as the adapter they are compared with.
enum DurableFile {
    static func write(_ data: Data, to url: URL) throws {
        let temporary = url.path + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw posixError("open", temporary) }
        var written = 0
        let failed: Bool = data.withUnsafeBytes { buffer in
            while written < buffer.count {
                let result = Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return true
                }
                written += result
            }
            return false
        }
        if failed || fsync(descriptor) != 0 {
            let error = posixError("write", temporary)
            close(descriptor)
            throw error
        }
        close(descriptor)
        guard rename(temporary, url.path) == 0 else { throw posixError("rename", temporary) }
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY)
        guard directory >= 0 else { throw posixError("open", url.deletingLastPathComponent().path) }
        defer { close(directory) }
        guard fsync(directory) == 0 else { throw posixError("fsync", url.deletingLastPathComponent().path) }
    }

    private static func posixError(_ call: String, _ path: String) -> Error {
        WrongResult("\(call) failed on '\(path)': \(String(cString: strerror(errno)))")
    }
}
