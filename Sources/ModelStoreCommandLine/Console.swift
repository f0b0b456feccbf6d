import Foundation
import ModelStoreTooling

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where `modelstore` writes: reports to standard output, as text or as JSON; errors to standard
/// error as text, or to standard output as JSON; progress to standard error when it is a terminal.
struct Console {
    /// Whether `--json` was given: reports and errors are JSON objects on standard output.
    let json: Bool
    /// Whether long operations draw a progress bar: never with `--json`, and only when standard
    /// error is a terminal, so pipes and log files never receive one.
    let drawsProgress: Bool

    /// How long an operation runs before its bar appears: 300 ms, or the milliseconds in the
    /// environment variable `MODELSTORE_PROGRESS_DELAY` (which tests set to 0 to see the bar).
    let progressDelay: Duration

    /// A console for the given output mode.
    init(json: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.json = json
        drawsProgress = !json && isatty(STDERR_FILENO) == 1
        progressDelay = .milliseconds(environment["MODELSTORE_PROGRESS_DELAY"].flatMap(Int.init) ?? 300)
    }

    /// A progress bar for a long operation; it draws nothing unless ``drawsProgress``.
    func progress() -> ProgressBar {
        ProgressBar(enabled: drawsProgress, delay: progressDelay)
    }

    /// Prints a report.
    func print(_ report: any CommandReport) {
        if json {
            writeJSON(report)
        } else {
            Swift.print(report.text)
        }
    }

    /// Prints a failure: `modelstore COMMAND: error: …` on standard error, or
    /// `{"error": {…}}` on standard output with `--json`.
    func print(_ error: ToolError, command: String?) {
        if json {
            writeJSON(["error": error])
        } else {
            let prefix = command.map { "modelstore \($0)" } ?? "modelstore"
            Self.writeError("\(prefix): error: \(error)\n")
        }
    }

    /// Writes text to standard error, unbuffered.
    static func writeError(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }

    private func writeJSON(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        do {
            Swift.print(String(decoding: try encoder.encode(value), as: UTF8.self))
        } catch {
            Self.writeError("modelstore: error: the report could not be encoded as JSON (\(error))\n")
        }
    }
}
