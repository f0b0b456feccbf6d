import Foundation
import ModelStore
import ModelStoreFileIO

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The single-writer lock of an append log: an exclusive ``AdvisoryLock`` on the `lock` file in
/// the store's directory, which records the holder's process identifier.
///
/// `flock` locks belong to an open file description, so a second open in the same process is
/// refused just like one in another process. The lock is released when the lock's file is closed
/// (when the last reference to this object goes) or when the process exits, even by a crash.
///
/// Taking the lock writes nothing: the holder's pid is written by ``recordHolder()`` once the open
/// has succeeded, so a failed open leaves the lock file as it was.
final class DirectoryLock: Sendable {
    /// The name of the lock file in a store's directory.
    static let fileName = "lock"

    private let lock: AdvisoryLock

    private init(lock: AdvisoryLock) { self.lock = lock }

    /// Takes the lock of the store in `directory`, or throws ``DataStoreError/Code/locked`` naming
    /// the store and the process that holds it.
    static func acquire(directory: URL, permissions: FilePermissions = .private) throws -> DirectoryLock {
        let lock = try AdvisoryLock(path: directory.appendingPathComponent(fileName).path, permissions: permissions)
        let acquired: Bool
        do {
            acquired = try lock.tryLock()
        } catch let error as DataStoreError {
            throw error.inContext("cannot lock the append log '\(directory.path)'")
        }
        guard acquired else { throw lockedError(directory: directory, holder: holder(of: lock.file)) }
        return DirectoryLock(lock: lock)
    }

    /// Writes `pid N` into the lock file: call once the store has opened.
    func recordHolder() throws {
        let record = Array("pid \(getpid())\n".utf8)
        try lock.file.truncate(to: 0)
        try lock.file.write(record, at: 0)
    }

    /// Whether the store in `directory` is locked by a writer right now.
    static func isLocked(directory: URL) -> (locked: Bool, holder: Int32?) {
        let path = directory.appendingPathComponent(fileName).path
        guard AdvisoryLock.isHeld(path: path) else { return (false, nil) }
        return (true, (try? OpenFile(path, writable: false)).flatMap(holder(of:)))
    }

    /// The process identifier the lock file records, if it records one.
    private static func holder(of file: OpenFile) -> Int32? {
        guard let bytes = try? file.read(count: 64, at: 0) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(separator: "\n").first, line.hasPrefix("pid ") else { return nil }
        return Int32(line.dropFirst(4).trimmingCharacters(in: .whitespaces))
    }

    /// The error for a store that another writer holds.
    static func lockedError(directory: URL, holder: Int32?) -> DataStoreError {
        let who: String
        let remedy: String
        switch holder {
        case getpid()?:
            who = "this process (pid \(getpid())), through another open store"
            remedy =
                "Use the container that already has it open, or close that store first (AppendLogStore.close(), "
                + "or release its container); an append log has a single writer"
        case let pid?:
            who = "process \(pid)"
            remedy = "Quit process \(pid) or close the store there; an append log has a single writer"
        case nil:
            who = "another process"
            remedy = "Close the store in the other process; an append log has a single writer"
        }
        return DataStoreError(
            .locked, "the append log '\(directory.path)' is open for writing by \(who)", remedy: remedy)
    }
}
