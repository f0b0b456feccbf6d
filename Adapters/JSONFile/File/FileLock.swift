import Foundation
import ModelStore
import ModelStoreFileIO

/// The writers' lock of a JSON store: an ``AdvisoryLock`` on `<document>.lock`, held while a store
/// reads or replaces its document.
///
/// The lock file is separate from the document because each save replaces the document with a
/// new file. Two stores in one process exclude each other as two processes do.
final class FileLock: Sendable {
    private let lock: AdvisoryLock

    /// Opens (creating if needed, with `permissions`) the lock file; takes no lock yet.
    init(path: String, permissions: FilePermissions = .private) throws {
        lock = try AdvisoryLock(path: path, permissions: permissions)
    }

    /// Runs `body` holding the lock, waiting up to `timeout` for another holder to release it.
    ///
    /// Throws ``DataStoreError/locked`` if the lock stays taken for the whole timeout.
    func withLock<R>(timeout: Duration, document: String, _ body: () throws -> R) throws -> R {
        let acquired: Bool
        do {
            acquired = try lock.lock(timeout: timeout)
        } catch let error as DataStoreError {
            throw error.inContext("locking the JSON store '\(document)'")
        }
        guard acquired else {
            throw DataStoreError(
                .locked, "the JSON store '\(document)' stayed locked by another writer for \(timeout)",
                remedy:
                    "Another process or store is saving to the same file; retry, or raise the configuration's "
                    + "'lockTimeout'"
            )
        }
        defer { lock.unlock() }
        return try body()
    }
}
