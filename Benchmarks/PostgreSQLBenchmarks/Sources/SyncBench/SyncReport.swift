import BenchHarness
import Foundation

/// The run as a markdown table: medians, models a second, the goal and the ratio to it, and the
/// peak resident size with its growth from the smallest to the largest size.
struct SyncReport {
    let results: [BenchmarkResult]
    let changes: Int

    /// Initial sync: at least this many models a second.
    static let initialGoal = 30_000.0
    /// An incremental round of 1k changes: under this many seconds.
    static let roundGoal = 0.100

    var markdown: String {
        var lines = [
            "| workload | system | N | median ms | p90 ms | models/s | goal | × goal | round RSS growth MiB |",
            "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |",
        ]
        for result in results {
            let peak = result.timedPeakGrowthBytes.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "–"
            guard let timing = result.timing, result.status == .measured else {
                lines.append(
                    "| \(result.workload) | \(result.system) | \(result.n) | \(result.status) | | | | | \(peak) |")
                continue
            }
            let models = result.workload.hasPrefix("initial") ? result.n : result.workload.hasSuffix("1k") ? changes : 0
            let rate = models > 0 ? String(format: "%.0f", Double(models) / timing.median) : "–"
            let (goal, ratio): (String, String) =
                if result.workload.hasPrefix("initial") {
                    ("≥ 30,000/s", String(format: "%.2f", Double(models) / timing.median / Self.initialGoal))
                } else if result.workload.hasSuffix("1k") {
                    ("< 100 ms", String(format: "%.2f", Self.roundGoal / timing.median))
                } else {
                    ("–", "–")
                }
            lines.append(
                "| \(result.workload) | \(result.system) | \(result.n) | "
                    + String(format: "%.1f | %.1f", timing.median * 1000, timing.p90 * 1000)
                    + " | \(rate) | \(goal) | \(ratio) | \(peak) |")
        }
        lines.append("")
        lines.append(
            "× goal ≥ 1 meets the goal. Memory: the largest growth of the resident size during one timed round "
                + "(set-up excluded), at the largest N against the smallest:")
        lines.append("")
        let sizes = Set(results.map(\.n)).sorted()
        if let small = sizes.first, let large = sizes.last, small != large {
            for key in Set(results.map { "\($0.workload) \($0.system)" }).sorted() {
                let peaks = results.filter { "\($0.workload) \($0.system)" == key }
                guard let a = peaks.first(where: { $0.n == small })?.timedPeakGrowthBytes,
                    let b = peaks.first(where: { $0.n == large })?.timedPeakGrowthBytes, a > 0
                else { continue }
                lines.append(
                    String(
                        format: "- %@: %.0f MiB at %d, %.0f MiB at %d (×%.2f for ×%d models)", key,
                        Double(a) / 1_048_576, small, Double(b) / 1_048_576, large, Double(b) / Double(a), large / small
                    ))
            }
        }
        return lines.joined(separator: "\n")
    }
}
