import BenchHarness
import Foundation

/// Runs one benchmark inside a child process and describes the outcome.
enum Child {
    static func run(workload name: String, system systemName: String, n: Int, options: Options) -> BenchmarkResult {
        var measurement = BenchmarkResult(workload: name, system: systemName, n: n, status: .failed("not run"))
        guard let workload = Workload(rawValue: name), let system = Registry.system(named: systemName) else {
            measurement.status = .failed("unknown workload '\(name)' or system '\(systemName)'")
            return measurement
        }
        if let reason = system.notApplicable(workload) {
            measurement.status = .notApplicable(reason)
            return measurement
        }
        let scratch = URL(fileURLWithPath: options.scratchDirectory ?? NSTemporaryDirectory())
            .appendingPathComponent("\(name)-\(systemName)-\(n)-\(ProcessInfo.processInfo.processIdentifier)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        do {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let data = Dataset(count: n)
            measurement.rawDataBytes = data.rawBytes
            measurement.baselineResidentBytes = ProcessMemory.currentResidentBytes()
            let trial = try system.trial(workload, data: data, directory: scratch)
            measurement.path = trial.path
            let samples = try trial.measure(options.repetitionPolicy)
            measurement.timing = TimingSummary(seconds: samples)
            measurement.status = .measured
        } catch let error as NotApplicable {
            measurement.status = .notApplicable(error.reason)
        } catch {
            measurement.status = .failed("\(error)")
        }
        measurement.peakResidentBytes = ProcessMemory.peakResidentBytes()
        return measurement
    }
}
