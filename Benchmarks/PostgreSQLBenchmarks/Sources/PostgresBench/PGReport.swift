import BenchHarness
import Foundation

/// The markdown report: results with ratios against Fluent and raw PostgresNIO, then the goals.
enum PGReport {
    static func sorted(_ results: [BenchmarkResult]) -> [BenchmarkResult] {
        func workloadRank(_ name: String) -> Int { Workload.allCases.firstIndex { $0.rawValue == name } ?? Int.max }
        func systemRank(_ name: String) -> Int { Systems.all.firstIndex { $0.name == name } ?? Int.max }
        return results.sorted {
            (workloadRank($0.workload), $0.n, systemRank($0.system)) < (
                workloadRank($1.workload), $1.n, systemRank($1.system)
            )
        }
    }

    static func environment(command: String) -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }.map { $0.trimmingCharacters(in: .whitespaces) }
            ?? "unknown CPU"
        let load =
            (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "unknown"
        let date = String(ISO8601DateFormatter().string(from: Date()).prefix(16)).replacingOccurrences(
            of: "T", with: " ")
        return """
            Machine: \(model), \(ProcessInfo.processInfo.activeProcessorCount) cores, \
            \(Report.bytes(Int(ProcessInfo.processInfo.physicalMemory))) RAM, load average \(load) at the end of \
            the run (shared machine). PostgreSQL 15 on loopback (scripts/postgres.sh, fsync on).
            Run: \(date) UTC, \(BuildKind.description), command `modelstore-pg-bench \(command)`.

            """
    }

    static func markdown(_ results: [BenchmarkResult]) -> String {
        let index = Dictionary(results.map { ("\($0.workload)|\($0.system)|\($0.n)", $0) }, uniquingKeysWith: { $1 })
        func median(_ workload: String, _ system: String, _ n: Int) -> Double? {
            index["\(workload)|\(system)|\(n)"]?.median
        }
        var lines = [
            "| workload | n | system | median | p90 | reps | peak RSS | × Fluent | × PostgresNIO | path |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for result in sorted(results) {
            var cells = ["`\(result.workload)`", Report.size(result.n), "`\(result.system)`"]
            switch result.status {
            case .measured:
                let value = result.median
                cells.append(value.map(Report.seconds) ?? "–")
                cells.append(result.timing.map { Report.seconds($0.p90) } ?? "–")
                cells.append(result.timing.map { String($0.count) } ?? "–")
                cells.append(result.peakResidentBytes.map(Report.bytes) ?? "–")
                cells.append(ratio(value, median(result.workload, Systems.fluent, result.n)))
                cells.append(ratio(value, median(result.workload, Systems.floor, result.n)))
                cells.append(result.path)
            case .notApplicable(let reason): cells += ["n/a", "", "", "", "", "", reason]
            case .failed(let reason): cells += ["**failed**", "", "", "", "", "", reason]
            }
            lines.append("| " + cells.map(escape).joined(separator: " | ") + " |")
        }
        lines += [
            "",
            "× Fluent, × PostgresNIO: median over that system's median at the same workload and N. Below 1 is faster.",
            "",
        ]
        lines += ["| goal | system | status | evidence |", "| --- | --- | --- | --- |"]
        for goal in goals(results, median: median) {
            lines.append("| " + goal.map(escape).joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The goals for each ModelStore system: no slower than Fluent on every workload (each size), and
    /// within 1.3× of raw PostgresNIO doing the adapter's statements' work (`postgres-nio-same-work`) on
    /// fetch-unique, fetch-indexed and update-one.
    static func goals(_ results: [BenchmarkResult], median: (String, String, Int) -> Double?) -> [[String]] {
        let sizes = Set(results.map(\.n)).sorted()
        var rows: [[String]] = []
        for system in Systems.all where system.isModelStore {
            let mine = results.filter { $0.system == system.name && $0.median != nil }
            if mine.isEmpty { continue }
            for workload in Workload.allCases {
                let pairs = sizes.compactMap { n -> (Int, Double, Double)? in
                    guard let value = median(workload.rawValue, system.name, n),
                        let fluent = median(workload.rawValue, Systems.fluent, n)
                    else { return nil }
                    return (n, value, fluent)
                }
                if !pairs.isEmpty {
                    rows.append(
                        goal(
                            "\(workload.rawValue): no slower than fluent-postgres", system.name, pairs, limit: 1,
                            strict: false))
                }
                guard [.fetchUnique, .fetchIndexed, .updateOne].contains(workload) else { continue }
                let limits = sizes.compactMap { n -> (Int, Double, Double)? in
                    guard let value = median(workload.rawValue, system.name, n),
                        let limit = median(workload.rawValue, Systems.sameWork, n)
                    else { return nil }
                    return (n, value, limit)
                }
                if !limits.isEmpty {
                    rows.append(
                        goal(
                            "\(workload.rawValue): within 1.3× of \(Systems.sameWork)", system.name, limits,
                            limit: 1.3, strict: false))
                }
            }
        }
        return rows
    }

    private static func goal(
        _ name: String, _ system: String, _ pairs: [(Int, Double, Double)], limit: Double, strict: Bool
    )
        -> [String]
    {
        var met = true
        let evidence = pairs.map { n, value, peer in
            let ratio = value / peer
            let ok = strict ? ratio < limit : ratio <= limit
            if !ok { met = false }
            return "\(Report.size(n)): \(Report.seconds(value)) vs \(Report.seconds(peer)) (\(Report.factor(ratio)))"
                + (ok ? "" : " ✗")
        }
        return [name, "`\(system)`", met ? "met" : "**missed**", evidence.joined(separator: "; ")]
    }

    private static func ratio(_ value: Double?, _ reference: Double?) -> String {
        guard let value, let reference, reference > 0 else { return "–" }
        return Report.factor(value / reference)
    }

    private static func escape(_ cell: String) -> String {
        cell.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
