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
        var setUpPeak = 0
        do {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let beforeData = ProcessMemory.currentResidentBytes()
            let data = Dataset(count: n)
            measurement.rawDataBytes = data.rawBytes
            measurement.baselineResidentBytes = ProcessMemory.currentResidentBytes()
            if let beforeData, let afterData = measurement.baselineResidentBytes {
                measurement.dataSetResidentBytes = max(afterData - beforeData, 0)
            }
            let trial = try system.trial(workload, data: data, directory: scratch)
            measurement.path = trial.path
            // A peak of the timed phase alone, without the data generation and set-up before it; the
            // whole child's peak is kept first.
            setUpPeak = ProcessMemory.peakResidentBytes()
            if ProcessMemory.resetPeak() {
                measurement.timedStartResidentBytes = ProcessMemory.currentResidentBytes()
            }
            let samples = try trial.measure(options.repetitionPolicy)
            if measurement.timedStartResidentBytes != nil {
                measurement.timedPeakResidentBytes = ProcessMemory.peakResidentBytes()
            }
            measurement.timing = TimingSummary(seconds: samples)
            if let probe = trial.memoryProbe {
                measurement.peakResidentBytes = max(setUpPeak, ProcessMemory.peakResidentBytes())
                let held = try probe()
                measurement.objectsResidentBytes = held.objects
                measurement.heldPeakBytes = max(held.peak - held.objects, 0)
                measurement.heldAfterSaveBytes = max(held.afterwards - held.objects, 0)
            }
            measurement.status = .measured
        } catch let error as NotApplicable {
            measurement.status = .notApplicable(error.reason)
        } catch {
            measurement.status = .failed("\(error)")
        }
        if measurement.objectsResidentBytes == nil {
            measurement.peakResidentBytes = max(setUpPeak, ProcessMemory.peakResidentBytes())
        }
        return measurement
    }
}
