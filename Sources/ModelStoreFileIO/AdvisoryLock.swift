import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An advisory, exclusive `flock(2)` lock on a lock file: how a file store keeps two writers (in
/// one process or in two) from interleaving.
///
/// A `flock` lock belongs to the open file, so two ``AdvisoryLock`` objects on one path exclude
/// each other in one process as in two. The system releases it when the holder closes the file
/// or dies, even by `SIGKILL`, so a crash never leaves a store locked.
///
/// Taking the lock never writes the lock file; the holder may record itself in it (``file``)
/// once it has the lock and its open has succeeded.
public final class AdvisoryLock: Sendable {
    /// The lock file, open for reading and writing.
    public let file: OpenFile

    /// Opens the lock file at `path`, creating it (empty, with `permissions`) if it does not exist;
    /// takes no lock yet.
    public init(path: String, permissions: FilePermissions = .private) throws {
        file = try OpenFile(path, writable: true, create: true, permissions: permissions)
    }

    /// Takes the lock if no one holds it; returns whether it did.
    public func tryLock() throws -> Bool {
        while true {
            if flock(file.descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK || code == EAGAIN { return false }
            throw FileIO.failure("lock", file.path, code: code)
        }
    }

    /// Takes the lock, waiting up to `timeout` for its holder to release it; returns whether it did.
    public func lock(timeout: Duration) throws -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause: UInt32 = 200
        while true {
            if try tryLock() { return true }
            if clock.now >= deadline { return false }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Releases the lock.
    public func unlock() {
        flock(file.descriptor, LOCK_UN)
    }

    // Releases the lock explicitly before the file closes: a child process forked meanwhile shares
    // the open file description until it execs, and closing our descriptor alone would leave the
    // store locked for that instant. Unlocking a description that holds no lock changes nothing.
    deinit { flock(file.descriptor, LOCK_UN) }

    /// Whether someone holds the lock on the file at `path` right now (a shared lock is tried and
    /// released at once). A missing lock file is not held.
    public static func isHeld(path: String) -> Bool {
        guard let file = try? OpenFile(path, writable: false) else { return false }
        guard flock(file.descriptor, LOCK_SH | LOCK_NB) == 0 else { return true }
        flock(file.descriptor, LOCK_UN)
        return false
    }
}
