import Foundation
import Synchronization

/// ModelStore's debug log: what Core Data's `-com.apple.CoreData.SQLDebug 1` shows, on standard
/// error. Off by default.
///
/// Turn it on for a run with the environment variable `MODELSTORE_DEBUG`, or in code:
///
/// | level | prints |
/// | --- | --- |
/// | `0` | nothing (the default) |
/// | `1` | each store's open, each save's counts and time, each fetch's entity, result count and time |
/// | `2` | also each fetch's plan, as ``ModelContext/explain(_:)`` gives it |
///
/// ```sh
/// MODELSTORE_DEBUG=2 swift run trips
/// ```
///
/// Each line starts with `[ModelStore]`. While the level is 0 a fetch or save pays one atomic load.
public enum DebugLog {
    /// The environment variable read at start-up, `MODELSTORE_DEBUG`: a level from 0 to 2 (any
    /// other non-empty value means 1).
    public static let environmentVariable = "MODELSTORE_DEBUG"

    private static let storage = Atomic<Int>(initialLevel())

    /// The current level (0 to 2); set it to change what is printed from now on, from any thread.
    public static var level: Int {
        get { storage.load(ordering: .relaxed) }
        set { storage.store(min(max(newValue, 0), 2), ordering: .relaxed) }
    }

    static func initialLevel() -> Int {
        guard let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty else { return 0 }
        guard let number = Int(value) else { return 1 }
        return min(max(number, 0), 2)
    }

    /// Writes one line to standard error when the level is at least `minimum`.
    static func write(_ minimum: Int, _ message: @autoclosure () -> String) {
        guard level >= minimum else { return }
        FileHandle.standardError.write(Data(("[ModelStore] " + message() + "\n").utf8))
    }

    /// Milliseconds since `start`, with two decimals.
    static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let duration = ContinuousClock.now - start
        let ms = Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
        return String(format: "%.2f ms", ms)
    }
}
