import Foundation

/// The outcome of one benchmark: a workload on a system at a size.
public struct BenchmarkResult: Sendable, Hashable, Codable {
    /// Whether the benchmark produced numbers.
    public enum Status: Sendable, Hashable, Codable {
        /// Timed; `timing` holds the numbers.
        case measured
        /// The system cannot do this workload; the reason says why. Never replaced by a stand-in.
        case notApplicable(String)
        /// The benchmark ran and failed (an error, a wrong result, a crash or a timeout).
        case failed(String)
    }

    /// The workload's name, such as `fetch-indexed`.
    public var workload: String
    /// The system's name, such as `grdb-file`.
    public var system: String
    /// The number of users in the store.
    public var n: Int
    /// Measured, not applicable or failed.
    public var status: Status
    /// The timed repetitions, when measured.
    public var timing: TimingSummary?
    /// The child process's peak resident set size, in bytes.
    public var peakResidentBytes: Int?
    /// The child's resident size once its data set was generated, before the system was set up.
    public var baselineResidentBytes: Int?
    /// The raw size of the data set: string bytes plus 8 bytes per number and date.
    public var rawDataBytes: Int?
    /// How much the resident size grew while the child generated its data set (rows the harness
    /// keeps to check results; not part of any system's memory).
    public var dataSetResidentBytes: Int?
    /// The resident size when the timed repetitions began (data generated, system set up, freed
    /// heap returned to the kernel), where the peak was reset (``ProcessMemory/resetPeak()``).
    public var timedStartResidentBytes: Int?
    /// The peak resident size during the timed repetitions alone; `nil` where the peak could not be reset.
    public var timedPeakResidentBytes: Int?
    /// What the memory ModelStore holds is measured against, where the child measured it (the
    /// `insert` through models of the in-memory store): the resident growth of making the same N
    /// model objects without a store.
    public var objectsResidentBytes: Int?
    /// The peak resident growth of inserting the N models and saving them, from a fresh store, less
    /// ``objectsResidentBytes``: what ModelStore holds at its peak.
    public var heldPeakBytes: Int?
    /// The resident growth once the save returned (the models still referenced), less
    /// ``objectsResidentBytes``: what ModelStore keeps.
    public var heldAfterSaveBytes: Int?
    /// The API path the system's timed code takes, as shown in the report.
    public var path: String
    /// The median of each round, in the order they ran, when the benchmark ran in more than one round
    /// (`--rounds`); `nil` for a benchmark run once. ``timing``'s median is then the median of these.
    public var roundMedians: [Double]?

    /// A measurement.
    public init(
        workload: String, system: String, n: Int, status: Status, timing: TimingSummary? = nil,
        peakResidentBytes: Int? = nil, baselineResidentBytes: Int? = nil, rawDataBytes: Int? = nil, path: String = ""
    ) {
        self.workload = workload
        self.system = system
        self.n = n
        self.status = status
        self.timing = timing
        self.peakResidentBytes = peakResidentBytes
        self.baselineResidentBytes = baselineResidentBytes
        self.rawDataBytes = rawDataBytes
        self.path = path
    }

    /// One result from the results of the same benchmark run in several rounds (`--rounds`), each in a
    /// child process of its own, at different times: the median of the rounds' medians, so that a round
    /// slowed as a whole (a shared machine slows down for seconds at a time; see the README's "Rounds")
    /// does not decide a comparison.
    ///
    /// The memory figures and the path are the round whose median is the median (of an even count,
    /// the faster of the two middle rounds); the timing counts every repetition, with the fastest and
    /// slowest of all and that round's 90th percentile. A round that failed or was not applicable is
    /// the result, with its reason. `rounds` must not be empty; one round is returned as it is.
    public static func combiningRounds(_ rounds: [BenchmarkResult]) -> BenchmarkResult {
        precondition(!rounds.isEmpty, "combiningRounds needs at least one round")
        if rounds.count == 1 { return rounds[0] }
        if let unmeasured = rounds.first(where: { $0.status != .measured || $0.timing == nil }) { return unmeasured }
        let timings = rounds.map { $0.timing! }
        let order = timings.indices.sorted { timings[$0].median < timings[$1].median }
        let lowerMiddle = order[(order.count - 1) / 2]
        var combined = rounds[lowerMiddle]
        let medians = order.map { timings[$0].median }
        let middle = medians.count / 2
        combined.timing?.median =
            medians.count.isMultiple(of: 2) ? (medians[middle - 1] + medians[middle]) / 2 : medians[middle]
        combined.timing?.count = timings.reduce(0) { $0 + $1.count }
        combined.timing?.minimum = timings.map(\.minimum).min()!
        combined.timing?.maximum = timings.map(\.maximum).max()!
        combined.roundMedians = timings.map(\.median)
        return combined
    }

    /// The median in seconds, when measured.
    public var median: Double? { status == .measured ? timing?.median : nil }

    /// How much the peak resident size grew over the baseline: the memory the workload itself took.
    public var peakGrowthBytes: Int? {
        guard let peakResidentBytes, let baselineResidentBytes else { return nil }
        return max(peakResidentBytes - baselineResidentBytes, 0)
    }

    /// How far the resident size rose above its level at the start of the timed repetitions: the
    /// memory the timed work itself took.
    public var timedPeakGrowthBytes: Int? {
        guard let timedPeakResidentBytes, let timedStartResidentBytes else { return nil }
        return max(timedPeakResidentBytes - timedStartResidentBytes, 0)
    }

    /// The result as one JSON object on one line, with the keys `workload`, `system`, `n`,
    /// `median_s`, `p90_s` and `peak_rss_bytes`, in that order, then `timed_peak_rss_bytes` and
    /// `timed_start_rss_bytes` where the child could reset its peak.
    ///
    /// A benchmark without numbers has `null` times and a `note` key with the reason, prefixed
    /// with `n/a: ` or `failed: `.
    public var jsonLine: String {
        var fields = [
            "\"workload\":\(JSONText.quoted(workload))",
            "\"system\":\(JSONText.quoted(system))",
            "\"n\":\(n)",
        ]
        let timing = status == .measured ? timing : nil
        fields.append("\"median_s\":\(timing.map { JSONText.number($0.median) } ?? "null")")
        fields.append("\"p90_s\":\(timing.map { JSONText.number($0.p90) } ?? "null")")
        fields.append("\"peak_rss_bytes\":\(peakResidentBytes.map(String.init) ?? "null")")
        if let timedPeakResidentBytes, let timedStartResidentBytes {
            fields.append("\"timed_peak_rss_bytes\":\(timedPeakResidentBytes)")
            fields.append("\"timed_start_rss_bytes\":\(timedStartResidentBytes)")
        }
        switch status {
        case .measured: break
        case .notApplicable(let reason): fields.append("\"note\":\(JSONText.quoted("n/a: " + reason))")
        case .failed(let reason): fields.append("\"note\":\(JSONText.quoted("failed: " + reason))")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }
}

/// Small JSON text helpers for output whose key order is fixed.
enum JSONText {
    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case let control where control.value < 0x20:
                result +=
                    "\\u" + String(repeating: "0", count: 4 - String(control.value, radix: 16).count)
                    + String(control.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// A JSON number for seconds: shortest round-tripping form; non-finite values become `null`.
    static func number(_ value: Double) -> String {
        value.isFinite ? "\(value)" : "null"
    }
}
