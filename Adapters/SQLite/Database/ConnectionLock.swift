import Foundation

/// The store's connection behind a lock: every use of the connection goes through ``withLock(_:)``.
///
/// An `NSLock` rather than `Synchronization.Mutex`, because the thread sanitizer understands it
/// (see the house style) and because the connection is a non-`Sendable` class the lock hands out
/// by reference.
final class ConnectionLock: @unchecked Sendable {
    // Safety: `connection` is reached only inside `withLock`, while `lock` is held, so no two
    // threads use it at once; SQLite itself is opened with SQLITE_OPEN_NOMUTEX for that reason.
    private let lock = NSLock()
    private let connection: SQLiteConnection

    init(_ connection: SQLiteConnection) { self.connection = connection }

    /// Takes the lock and hands out the connection until ``release()``: for a two-phase save,
    /// which holds the store from prepare to finish. The caller releases it on the same thread.
    func acquire() -> SQLiteConnection {
        lock.lock()
        return connection
    }

    /// Releases the lock ``acquire()`` took.
    func release() { lock.unlock() }

    /// Runs `body` with the connection, holding the lock.
    func withLock<Result>(_ body: (SQLiteConnection) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(connection)
    }
}
