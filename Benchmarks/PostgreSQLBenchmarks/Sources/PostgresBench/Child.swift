import BenchHarness
import Foundation

/// Runs one benchmark inside a child process, against the server, in a namespace of its own.
enum Child {
    static func run(workload name: String, system systemName: String, n: Int, options: PGOptions) async
        -> BenchmarkResult
    {
        var measurement = BenchmarkResult(workload: name, system: systemName, n: n, status: .failed("not run"))
        guard let workload = Workload(rawValue: name), let system = Systems.named(systemName) else {
            measurement.status = .failed("unknown workload '\(name)' or system '\(systemName)'")
            return measurement
        }
        if let reason = system.notApplicable(workload) {
            measurement.status = .notApplicable(reason)
            return measurement
        }
        let namespace = "bench_\(ProcessInfo.processInfo.processIdentifier)"
        var setUpPeak = 0
        do {
            let beforeData = ProcessMemory.currentResidentBytes()
            let data = Dataset(count: n)
            measurement.rawDataBytes = data.rawBytes
            measurement.baselineResidentBytes = ProcessMemory.currentResidentBytes()
            if let beforeData, let afterData = measurement.baselineResidentBytes {
                measurement.dataSetResidentBytes = max(afterData - beforeData, 0)
            }
            let trial = try await system.trial(workload, data: data, namespace: namespace)
            measurement.path = trial.path
            setUpPeak = ProcessMemory.peakResidentBytes()
            if ProcessMemory.resetPeak() { measurement.timedStartResidentBytes = ProcessMemory.currentResidentBytes() }
            let samples = try await trial.measure(options.repetitionPolicy)
            if measurement.timedStartResidentBytes != nil {
                measurement.timedPeakResidentBytes = ProcessMemory.peakResidentBytes()
            }
            try await trial.finish()
            measurement.timing = TimingSummary(seconds: samples)
            measurement.status = .measured
        } catch let error as NotApplicable {
            measurement.status = .notApplicable(error.reason)
        } catch {
            measurement.status = .failed(String(reflecting: error))
        }
        try? await Server.dropNamespace(namespace)
        measurement.peakResidentBytes = max(setUpPeak, ProcessMemory.peakResidentBytes())
        return measurement
    }
}
