import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A one-line progress bar on standard error, redrawn ten times a second by a thread of its own.
///
/// A phase with a total shows a bar, a percentage and a count; a phase without one (a single call
/// into a store that cannot report progress) shows a moving block and the time spent. A disabled
/// bar (see ``Console/drawsProgress``) does nothing at all, so commands call it unconditionally.
final class ProgressBar: Sendable {
    private struct State {
        var label = ""
        var done = 0
        var total: Int?
        var phaseStart = ContinuousClock.now
        var finished = false
        var drawn = false
    }

    /// When the bar was created; it first draws after ``delay``, so quick operations show nothing.
    private let created = ContinuousClock.now
    private let delay: Duration

    private let enabled: Bool
    private let state = LockedValue(State())
    private let stopped = DispatchSemaphore(value: 0)
    private static let width = 24

    /// A bar that draws only when `enabled`, starting `delay` after it is created.
    init(enabled: Bool, delay: Duration = .milliseconds(300)) {
        self.enabled = enabled
        self.delay = delay
        guard enabled else { return }
        Thread.detachNewThread { [self] in
            while redraw() { Thread.sleep(forTimeInterval: 0.1) }
            stopped.signal()
        }
    }

    /// Starts a phase: what is being done, and how many steps it takes if that is known.
    func phase(_ label: String, total: Int? = nil) {
        guard enabled else { return }
        state.withLock { state in
            state.label = label
            state.done = 0
            state.total = total
            state.phaseStart = .now
        }
        _ = redraw()  // show the new phase at once rather than at the next tick
    }

    /// Counts steps done in the current phase.
    func advance(by steps: Int = 1) {
        guard enabled else { return }
        state.withLock { $0.done += steps }
    }

    /// Stops drawing and erases the bar. Call it before printing anything else.
    func finish() {
        guard enabled else { return }
        let wasRunning = state.withLock { state in
            defer { state.finished = true }
            return !state.finished
        }
        if wasRunning { stopped.wait() }
    }

    /// Draws the current state; returns `false` once finished (after erasing the line).
    private func redraw() -> Bool {
        let (line, running) = state.withLock { state -> (String, Bool) in
            if state.finished { return (state.drawn ? "\r\u{1B}[2K" : "", false) }
            guard ContinuousClock.now - created >= delay else { return ("", true) }
            state.drawn = true
            return ("\r\u{1B}[2K" + Self.render(state), true)
        }
        if !line.isEmpty { Console.writeError(line) }
        return running
    }

    private static func render(_ state: State) -> String {
        let elapsed = ContinuousClock.now - state.phaseStart
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if let total = state.total, total > 0 {
            let fraction = min(1, Double(state.done) / Double(total))
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            return "\(state.label) [\(bar)] \(Int(fraction * 100))% \(state.done)/\(total)"
        }
        // A block of four that sweeps back and forth, one step per tick.
        let span = width - 4
        let step = Int(seconds * 10) % (2 * span)
        let position = step < span ? step : 2 * span - step
        let bar = String(repeating: " ", count: position) + "####" + String(repeating: " ", count: span - position)
        return "\(state.label) [\(bar)] " + String(format: "%.1f s", seconds)
    }
}
