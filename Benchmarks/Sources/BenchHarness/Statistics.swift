/// The summary of one benchmark's timed repetitions.
public struct TimingSummary: Sendable, Hashable, Codable {
    /// How many repetitions were timed.
    public var count: Int
    /// The median time, in seconds.
    public var median: Double
    /// The 90th percentile time (nearest rank), in seconds.
    public var p90: Double
    /// The fastest repetition, in seconds.
    public var minimum: Double
    /// The slowest repetition, in seconds.
    public var maximum: Double

    /// Summarizes samples in seconds; `nil` when there are none.
    ///
    /// The median of an even count is the mean of the two middle samples. The 90th percentile
    /// uses the nearest-rank method, so with fewer than ten samples it is the slowest one.
    public init?(seconds samples: [Double]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        count = sorted.count
        median = sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
        p90 = Self.nearestRank(0.9, in: sorted)
        minimum = sorted[0]
        maximum = sorted[sorted.count - 1]
    }

    /// The value at a percentile of sorted samples, by the nearest-rank method.
    static func nearestRank(_ fraction: Double, in sorted: [Double]) -> Double {
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

/// When to stop repeating a benchmark.
public struct RepetitionPolicy: Sendable, Hashable {
    /// Repetitions always run, whatever they cost.
    public var minimum: Int
    /// Repetitions never exceeded.
    public var maximum: Int
    /// After the minimum, stop once the timed repetitions add up to this many seconds.
    public var timeBudget: Double
    /// Stop even before the minimum once the timed repetitions add up to this many seconds, so a
    /// pathologically slow benchmark is reported from fewer samples instead of running for hours.
    public var timeCap: Double

    /// A policy. At least one repetition always runs.
    public init(minimum: Int, maximum: Int, timeBudget: Double, timeCap: Double = .infinity) {
        self.minimum = max(minimum, 1)
        self.maximum = max(maximum, self.minimum)
        self.timeBudget = timeBudget
        self.timeCap = timeCap
    }

    /// After the minimum, also stop once this many seconds of wall-clock time have passed,
    /// untimed set-up included, so a cheap operation with an expensive set-up ends in time.
    public var wallBudget: Double = 60

    /// Whether another repetition should run after `samples`, `elapsed` wall-clock seconds into the benchmark.
    public func wantsMore(after samples: [Double], elapsed: Double = 0) -> Bool {
        wantsMore(count: samples.count, total: samples.reduce(0, +), elapsed: elapsed)
    }

    /// Whether another repetition should run after `count` timed repetitions that add up to
    /// `total` seconds, `elapsed` wall-clock seconds into the benchmark: the same answer as
    /// ``wantsMore(after:elapsed:)`` for a caller that keeps the running total, so that deciding
    /// does not grow with the number of samples.
    public func wantsMore(count: Int, total: Double, elapsed: Double = 0) -> Bool {
        if count == 0 { return true }
        if count >= maximum { return false }
        if count < minimum { return total < timeCap }
        return total < timeBudget && elapsed < wallBudget
    }
}
