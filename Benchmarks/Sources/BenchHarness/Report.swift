import Foundation

/// Renders a run's measurements as the markdown report: results with ratios, then the goals.
public enum Report {
    /// The markdown report: a results table (ratios against the GRDB system of the same durability
    /// class and against `array-baseline`) and a goals table marking each goal met or missed.
    public static func markdown(_ measurements: [BenchmarkResult]) -> String {
        var lines: [String] = []
        lines.append(
            "| workload | n | system | median | p90 | reps | peak RSS | timed peak (rise) | × GRDB | × array | path |")
        lines.append("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        let index = Dictionary(
            measurements.map { ("\($0.workload)|\($0.system)|\($0.n)", $0) }, uniquingKeysWith: { $1 })
        for measurement in sorted(measurements) {
            let key = { (system: String) in "\(measurement.workload)|\(system)|\(measurement.n)" }
            let grdb = Catalog.grdbPeer(of: measurement.system).flatMap { index[key($0)]?.median }
            let array = index[key(Catalog.arrayBaseline)]?.median
            var cells = ["`\(measurement.workload)`", size(measurement.n), "`\(measurement.system)`"]
            switch measurement.status {
            case .measured:
                let median = measurement.timing?.median
                cells.append(median.map(seconds) ?? "–")
                cells.append(measurement.timing.map { seconds($0.p90) } ?? "–")
                cells.append(measurement.timing.map { String($0.count) } ?? "–")
                cells.append(measurement.peakResidentBytes.map(bytes) ?? "–")
                cells.append(
                    measurement.timedPeakResidentBytes.map { peak in
                        bytes(peak) + " (+" + bytes(measurement.timedPeakGrowthBytes ?? 0) + ")"
                    } ?? "–")
                cells.append(ratio(median, grdb))
                cells.append(ratio(median, array))
                cells.append(measurement.path)
            case .notApplicable(let reason):
                cells += ["n/a", "", "", "", "", "", "", reason]
            case .failed(let reason):
                cells += ["**failed**", "", "", "", "", "", "", reason]
            }
            lines.append("| " + cells.map(escape).joined(separator: " | ") + " |")
        }
        lines.append("")
        lines.append(
            "× GRDB: median over the median of the GRDB system of the same durability class "
                + "(memory: `grdb-memory`; OS-buffered: `grdb-file`; fsync per save: `grdb-file-sync`). "
                + "× array: median over `array-baseline`'s. Below 1 is faster.")
        lines.append("")
        lines.append("| goal | system | status | evidence |")
        lines.append("| --- | --- | --- | --- |")
        for result in GoalEvaluator(measurements).evaluate() {
            let status =
                switch result.status {
                case .met: "met"
                case .missed: "**missed**"
                case .notMeasured: "not measured"
                case .reported: "reported"
                }
            lines.append(
                "| "
                    + [result.goal, "`\(result.system)`", status, result.evidence].map(escape)
                    .joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Measurements in report order: workload, then size, then the catalog's system order.
    public static func sorted(_ measurements: [BenchmarkResult]) -> [BenchmarkResult] {
        func workloadRank(_ name: String) -> Int { Catalog.workloads.firstIndex(of: name) ?? Int.max }
        func systemRank(_ name: String) -> Int {
            let base = Catalog.system(named: name)?.name ?? name
            let rank = Catalog.systems.firstIndex { $0.name == base } ?? Catalog.systems.count
            return rank * 2 + (name == base ? 0 : 1)
        }
        return measurements.sorted {
            (workloadRank($0.workload), $0.workload, $0.n, systemRank($0.system), $0.system)
                < (workloadRank($1.workload), $1.workload, $1.n, systemRank($1.system), $1.system)
        }
    }

    /// A duration in seconds, with a unit that keeps three significant digits.
    public static func seconds(_ value: Double) -> String {
        switch value {
        case ..<1e-6: return String(format: "%.0f ns", value * 1e9)
        case ..<1e-3: return String(format: "%.3g µs", value * 1e6)
        case ..<1: return String(format: "%.3g ms", value * 1e3)
        case ..<100: return String(format: "%.3g s", value)
        default: return String(format: "%.0f s", value)
        }
    }

    /// A byte count in binary units.
    public static func bytes(_ value: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1024 && unit < units.count - 1 {
            amount /= 1024
            unit += 1
        }
        return unit == 0 ? "\(value) B" : String(format: "%.1f", amount) + " " + units[unit]
    }

    /// A size such as `10k` or `1M`.
    public static func size(_ n: Int) -> String {
        if n >= 1_000_000 && n % 1_000_000 == 0 { return "\(n / 1_000_000)M" }
        if n >= 1_000 && n % 1_000 == 0 { return "\(n / 1_000)k" }
        return "\(n)"
    }

    /// A ratio such as `0.42×`.
    public static func factor(_ value: Double) -> String {
        guard value.isFinite else { return "∞×" }
        return value >= 100 ? String(format: "%.0f×", value) : String(format: "%.3g×", value)
    }

    private static func ratio(_ value: Double?, _ reference: Double?) -> String {
        guard let value, let reference, reference > 0 else { return "–" }
        return factor(value / reference)
    }

    private static func escape(_ cell: String) -> String {
        cell.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
