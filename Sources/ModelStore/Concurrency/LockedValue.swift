#if MODELSTORE_THREAD_SANITIZER
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif
#else
    import Synchronization
#endif

/// A value behind a lock: the one lock type of ModelStore and its adapters.
///
/// ```swift
/// let table = LockedValue(SnapshotTable(schema: schema))
/// let count = table.withLock { $0.count(of: "Trip") }
/// ```
///
/// In a normal build it is the standard library's `Synchronization.Mutex`, the fastest lock there
/// is. The thread sanitizer cannot see that lock on Linux (correct code under `Mutex.withLock`
/// still gets race reports), so a build with `-Xswiftc -DMODELSTORE_THREAD_SANITIZER`, which
/// `scripts/sanitize.sh` sets, uses a `pthread_mutex_t` instead, which the sanitizer understands.
/// Both behave the same: `withLock` is not reentrant, and the value never escapes the closure.
public final class LockedValue<Value: Sendable>: Sendable {
    #if MODELSTORE_THREAD_SANITIZER
        // Safety: the value is read and written only in `withLock`, holding `mutex`. It has an
        // allocation of its own (never empty: a stride is at least one byte), so its address is no
        // other field's. Stored in the object, an empty value (`LockedValue<Void>`) would share the
        // address of `mutex`, and the sanitizer would take the lock's read for a race with its use.
        private nonisolated(unsafe) let value: UnsafeMutablePointer<Value>
        private nonisolated(unsafe) let mutex: UnsafeMutablePointer<pthread_mutex_t>

        /// A lock guarding `value`.
        public init(_ value: Value) {
            self.value = .allocate(capacity: 1)
            self.value.initialize(to: value)
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
        }

        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
            value.deinitialize(count: 1)
            value.deallocate()
        }

        /// Runs `body` with the value, holding the lock.
        public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    #else
        private let mutex: Mutex<Value>

        /// A lock guarding `value`.
        public init(_ value: Value) { mutex = Mutex(value) }

        /// Runs `body` with the value, holding the lock.
        @inline(__always)
        public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
            try mutex.withLock { value throws -> sending Result in
                // Safety: the result leaves the lock as it would leave `NSLock.withLock`: the
                // value behind the lock is `Sendable`, so the result cannot share unguarded state.
                nonisolated(unsafe) let result = try body(&value)
                return result
            }
        }
    #endif
}
