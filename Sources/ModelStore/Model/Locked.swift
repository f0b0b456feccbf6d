import Foundation

/// A value guarded by a lock, for state that holds non-`Sendable` objects (such as probe models)
/// which `Mutex` cannot hold across its closure boundary.
final class Locked<Value>: @unchecked Sendable {
    // Safety: every access to `value` goes through `withLock`, which holds `lock`.
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
