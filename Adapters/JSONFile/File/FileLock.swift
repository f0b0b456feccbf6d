import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An advisory, exclusive lock on `<document>.lock`, held while a store reads or replaces its document.
///
/// It is a `flock(2)` lock: it belongs to this open file, so two stores in one process exclude
/// each other as two processes do, and the system releases it when a process dies. The lock file
/// is separate from the document because each save replaces the document with a new file.
final class FileLock: Sendable {
    /// The lock file's path.
    let path: String
    private let descriptor: Int32

    /// Opens (creating if needed) the lock file.
    init(path: String) throws {
        self.path = path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileSystemFailure(operation: "open the lock file", path: path, code: errno) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Runs `body` holding the lock, waiting up to `timeout` for another holder to release it.
    ///
    /// Throws ``DataStoreError/locked`` if the lock stays taken for the whole timeout.
    func withLock<R>(timeout: Duration, document: String, _ body: () throws -> R) throws -> R {
        try acquire(timeout: timeout, document: document)
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    private func acquire(timeout: Duration, document: String) throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause: UInt32 = 200
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK || code == EAGAIN else {
                throw FileSystemFailure(operation: "lock", path: path, code: code).storeError("locking the store")
            }
            if clock.now >= deadline {
                throw DataStoreError(
                    .locked, "the JSON store '\(document)' stayed locked by another writer for \(timeout)",
                    remedy:
                        "Another process or store is saving to the same file; retry, or raise the configuration's "
                        + "'lockTimeout'"
                )
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }
}
