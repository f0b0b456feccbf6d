import Foundation

/// The studio's diagnostic log of its live updates, on standard error when the environment variable
/// `MODELSTORE_STUDIO_DEBUG` is `1`: which transaction each page was rendered at, when an event stream
/// subscribes and from which transaction, what the watch reads, and what each stream sends.
///
/// Lines carry paths without their queries, transaction numbers and counts: never the access token,
/// a filter, or a model's values.
enum StudioDebugLog {
    /// Whether the log is on, read once from the environment.
    static let isEnabled = ProcessInfo.processInfo.environment["MODELSTORE_STUDIO_DEBUG"] == "1"
    private static let started = ContinuousClock.now

    /// Writes `message` with the seconds since the studio started, when the log is on.
    static func write(_ message: @autoclosure () -> String) {
        guard isEnabled else { return }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        FileHandle.standardError.write(Data("studio-debug \(String(format: "%.3f", seconds)) \(message())\n".utf8))
    }
}
