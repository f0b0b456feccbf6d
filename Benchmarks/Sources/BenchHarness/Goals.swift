/// One goal of the benchmarks issue, evaluated on one system's measurements.
public struct GoalResult: Sendable, Hashable {
    /// Whether the measurements meet the goal.
    public enum Status: String, Sendable, Hashable {
        /// Every measurement the goal names meets it.
        case met
        /// At least one measurement misses it.
        case missed
        /// A measurement the goal needs is missing, not applicable or failed.
        case notMeasured = "not measured"
        /// Not a goal: a number shown beside the goals it explains (the whole peak beside what
        /// ModelStore holds of it, the insert through models beside the batch insert).
        case reported
    }

    /// The goal, as the issue states it.
    public var goal: String
    /// The system the goal was evaluated on.
    public var system: String
    /// Met, missed or not measured.
    public var status: Status
    /// The numbers behind the status, for the table.
    public var evidence: String
}

/// The goals the benchmarks hold ModelStore to, evaluated on a run's measurements.
///
/// Goals stated at 1M are evaluated at the largest size the run measured, and the evidence says
/// which size that was; a `--quick` run thus evaluates them at 100k.
public struct GoalEvaluator: Sendable {
    let results: [String: BenchmarkResult]
    let sizes: [Int]

    /// An evaluator over a run's measurements.
    public init(_ measurements: [BenchmarkResult]) {
        var results: [String: BenchmarkResult] = [:]
        for measurement in measurements {
            results[Self.key(measurement.workload, measurement.system, measurement.n)] = measurement
        }
        self.results = results
        sizes = Array(Set(measurements.map(\.n))).sorted()
    }

    static func key(_ workload: String, _ system: String, _ n: Int) -> String { "\(workload)|\(system)|\(n)" }

    /// Every goal, one row per goal and system it concerns.
    public func evaluate() -> [GoalResult] {
        var rows: [GoalResult] = []
        let modelStore = Catalog.systems.filter(\.isModelStore).map(\.name)
        let top = sizes.filter { $0 != Catalog.updateReferenceSize }.max() ?? 0
        let atTop = top == 1_000_000 ? "1M" : "\(Self.size(top)) (1M not run)"
        for system in ["inmemory", "inmemory" + Catalog.batchInsertSuffix] {
            rows.append(
                faster(
                    "insert 1M in memory: faster than grdb-memory", "insert", system, than: "grdb-memory",
                    factor: 1, at: [top], label: atTop, orEqual: false))
            rows.append(
                withinFactor(
                    "insert 1M in memory: within 10× of array-baseline", "insert", system, of: "array-baseline",
                    factor: 10, at: top, label: atTop))
        }
        for system in modelStore {
            let peer = Catalog.grdbPeer(of: system) ?? "grdb-memory"
            rows.append(
                faster(
                    "fetch-indexed: no slower than GRDB with its index, at every N", "fetch-indexed", system,
                    than: peer,
                    factor: 1, at: sizes.filter { $0 != Catalog.updateReferenceSize }, label: "every N"))
        }
        let uniqueBase = sizes.contains(10_000) ? 10_000 : sizes.first ?? 0
        for system in modelStore {
            rows.append(
                scaling(
                    "fetch-unique: time at 1M at most 2× its time at 10k", "fetch-unique", system,
                    from: uniqueBase, to: top, factor: 2))
        }
        for system in modelStore {
            rows.append(
                faster(
                    "fetch-scan: at least 3× faster than foundation-predicate", "fetch-scan", system,
                    than: "foundation-predicate", factor: 3, at: sizes.filter { $0 != Catalog.updateReferenceSize },
                    label: "every N"))
            rows.append(
                faster(
                    "fetch-scan: no slower than GRDB's scan", "fetch-scan", system,
                    than: Catalog.grdbPeer(of: system) ?? "",
                    factor: 1, at: sizes.filter { $0 != Catalog.updateReferenceSize }, label: "every N"))
        }
        let jsonSize = sizes.contains(100_000) ? 100_000 : top
        let jsonLabel = jsonSize == 100_000 ? "100k" : "\(Self.size(jsonSize)) (100k not run)"
        for system in ["jsonfile", "jsonfile" + Catalog.batchInsertSuffix] {
            rows.append(
                faster(
                    "JSON file, save at 100k: at least 5× faster than foundation-json", "insert", system,
                    than: "foundation-json", factor: 5, at: [jsonSize], label: jsonLabel))
        }
        rows.append(
            faster(
                "JSON file, open at 100k: at least 5× faster than foundation-json", "open", "jsonfile",
                than: "foundation-json", factor: 5, at: [jsonSize], label: jsonLabel))
        for system in ["appendlog", "appendlog-none"] {
            rows.append(
                scaling(
                    "append log: update-one at 1M at most 2× its time at 1k", "update-one", system,
                    from: Catalog.updateReferenceSize, to: top, factor: 2))
            rows.append(
                faster(
                    "append log: open 1M no slower than grdb-file open plus fetch-all", "open", system,
                    than: "grdb-file", factor: 1, at: [top], label: atTop))
        }
        // The SQLite adapter: opening costs the same at 1k and 1M, and a scan of 1M stays small.
        for system in ["sqlite", "sqlite-sync"] {
            rows.append(
                scaling(
                    "SQLite: open-page at 1M at most 2× its time at 1k", "open-page", system,
                    from: sizes.min() ?? 0, to: top, factor: 2))
            rows.append(
                timedPeak(
                    "SQLite: peak RSS during fetch-scan at 1M under 128 MiB", "fetch-scan", system, at: top,
                    label: atTop, limit: 128 << 20))
        }
        rows += tableEngineGoals(top: top)
        rows += sqliteLimitGoals()
        rows += memoryGoals(top: top, label: atTop)
        rows += hierarchyGoals()
        rows += encryptionGoals()
        return rows
    }

    /// How much longer a fetch of a class hierarchy's root may take than a fetch of the same rows
    /// from one flat entity.
    public static let hierarchyFactor = 1.2

    /// A fetch of a hierarchy's root class against the same rows in a flat entity, in memory and in
    /// SQLite, at every N the hierarchy workloads were run at; the fetch of one subclass is
    /// reported beside it.
    private func hierarchyGoals() -> [GoalResult] {
        var rows: [GoalResult] = []
        for system in ["inmemory", "sqlite"] {
            let measured = sizes.filter { n in
                Catalog.hierarchyWorkloads.contains { results[Self.key($0, system, n)] != nil }
            }
            rows.append(
                overReference(
                    "class hierarchy: a fetch of the root class at most \(Report.factor(Self.hierarchyFactor)) "
                        + "the time of the same rows in a flat entity, at every N",
                    "hierarchy-base", system, factor: Self.hierarchyFactor, at: measured))
            var subclass = overReference(
                "class hierarchy: a fetch of one leaf subclass (a quarter of the rows), over the flat fetch of all N",
                "hierarchy-subclass", system, factor: .infinity, at: measured)
            if subclass.status != .notMeasured { subclass.status = .reported }
            rows.append(subclass)
        }
        return rows
    }

    /// `system`'s time of `workload` at most `factor`× its time of ``Catalog/hierarchyReference`` at each size.
    private func overReference(
        _ goal: String, _ workload: String, _ system: String, factor: Double, at sizes: [Int]
    ) -> GoalResult {
        let reference = Catalog.hierarchyReference
        return atMost(
            goal, (workload, system), over: (reference, system), factor: factor, at: sizes,
            evidence: "\(workload) over \(reference) at every N: ")
    }

    /// The median of `mine` at most `factor`× the median of `reference` at each of `sizes` (workload and
    /// system each); the evidence lists both times and their ratio at every size, after `evidence`.
    func atMost(
        _ goal: String, _ mine: (workload: String, system: String), over reference: (workload: String, system: String),
        factor: Double, at sizes: [Int], evidence: String
    ) -> GoalResult {
        if sizes.isEmpty {
            return GoalResult(goal: goal, system: mine.system, status: .notMeasured, evidence: "no size measured")
        }
        var notes: [String] = []
        var missed = false
        for n in sizes {
            switch (median(mine.workload, mine.system, n), median(reference.workload, reference.system, n)) {
            case (.success(let time), .success(let theirs)):
                let ratio = theirs > 0 ? time / theirs : .infinity
                let ok = ratio <= factor
                if !ok { missed = true }
                notes.append(
                    "\(Self.size(n)): \(Report.seconds(time)) vs \(Report.seconds(theirs)) "
                        + "(\(Report.factor(ratio)))\(ok ? "" : " ✗")")
            case (.failure(let why), _), (_, .failure(let why)):
                return GoalResult(goal: goal, system: mine.system, status: .notMeasured, evidence: why.description)
            }
        }
        return GoalResult(
            goal: goal, system: mine.system, status: missed ? .missed : .met,
            evidence: evidence + notes.joined(separator: "; "))
    }

    /// The SQLite adapter against its engine's limit (`sqlite-raw`, and `sqlite-raw-history` where
    /// the adapter writes history) and against GRDB, at 100k and 1M.
    private func sqliteLimitGoals() -> [GoalResult] {
        let large = sizes.filter { $0 >= 100_000 }
        let label = large.isEmpty ? "100k and 1M (neither run)" : large.map(Self.size).joined(separator: " and ")
        var rows: [GoalResult] = []
        for workload in Catalog.workloads
        where workload != "update-live" && !Catalog.hierarchyWorkloads.contains(workload) {
            let writes = ["insert", "update-one", "delete-all"].contains(workload)
            let system = workload == "insert" ? "sqlite" + Catalog.batchInsertSuffix : "sqlite"
            let limit = writes ? "sqlite-raw-history" : "sqlite-raw"
            rows.append(
                faster(
                    "SQLite adapter, \(workload): within 1.5× of \(limit) at 100k and 1M", workload, system,
                    than: limit, factor: 1 / 1.5, at: large, label: label))
            if workload == "insert" {
                var models = faster(
                    "SQLite adapter, insert through models (beside the batch insert): × \(limit)", workload, "sqlite",
                    than: limit, factor: 0, at: large, label: label)
                if models.status != .notMeasured { models.status = .reported }
                rows.append(models)
            }
            rows.append(
                faster(
                    "SQLite adapter, \(workload): no slower than grdb-file at 100k and 1M", workload, system,
                    than: "grdb-file", factor: 1, at: large, label: label))
        }
        return rows
    }

    /// What ModelStore holds of the memory of inserting 1M users in memory, and the whole peak.
    private func memoryGoals(top: Int, label: String) -> [GoalResult] {
        var rows: [GoalResult] = []
        rows.append(
            held(
                "memory ModelStore holds at the peak of inserting 1M users through models: at most 3× the raw data",
                "inmemory", at: top, label: label, afterSave: false))
        rows.append(
            held(
                "memory ModelStore keeps after saving 1M users through models: at most 3× the raw data", "inmemory",
                at: top, label: label, afterSave: true))
        rows.append(
            memory(
                "peak memory inserting 1M users in memory through the batch API: at most 3× the raw data",
                "inmemory" + Catalog.batchInsertSuffix, at: top, label: label))
        var whole = memory(
            "peak memory inserting 1M users in memory through models, the caller's objects included", "inmemory",
            at: top, label: label)
        if whole.status != .notMeasured { whole.status = .reported }
        rows.append(whole)
        return rows
    }

    /// What ModelStore holds (the probe's growth less the caller's objects) against three times the raw data.
    private func held(_ goal: String, _ system: String, at n: Int, label: String, afterSave: Bool) -> GoalResult {
        guard let measurement = results[Self.key("insert", system, n)], measurement.status == .measured else {
            return GoalResult(
                goal: goal, system: system, status: .notMeasured,
                evidence: "insert/\(system)/\(Self.size(n)) was not measured")
        }
        guard let objects = measurement.objectsResidentBytes,
            let held = afterSave ? measurement.heldAfterSaveBytes : measurement.heldPeakBytes,
            let raw = measurement.rawDataBytes, raw > 0
        else {
            return GoalResult(
                goal: goal, system: system, status: .notMeasured,
                evidence: "the child did not measure the memory held beside the models' own")
        }
        let ratio = Double(held) / Double(raw)
        let moment = afterSave ? "after the save" : "at the peak"
        return GoalResult(
            goal: goal, system: system, status: ratio <= 3 ? .met : .missed,
            evidence: "at \(label): \(Report.bytes(held)) \(moment) beyond the \(Report.bytes(objects)) the models "
                + "take without a store, over \(Report.bytes(raw)) raw (\(Report.factor(ratio)))")
    }

    /// The goals of the stores on the table engine (in memory, JSON file, append log), at 100k and
    /// 1M, or at the sizes of those the run measured.
    private func tableEngineGoals(top: Int) -> [GoalResult] {
        let large = sizes.filter { $0 >= 100_000 }
        let largeLabel = large.isEmpty ? "100k and 1M (neither run)" : large.map(Self.size).joined(separator: " and ")
        let topLabel = top == 1_000_000 ? "1M" : "\(Self.size(top)) (1M not run)"
        let engine = ["inmemory", "jsonfile", "appendlog", "appendlog-none"]
        var rows: [GoalResult] = []
        for (system, factor) in [("inmemory", 10.0), ("inmemory" + Catalog.batchInsertSuffix, 5)] {
            let goal = "insert at 100k and 1M in memory: within \(Int(factor))× of array-baseline"
            if large.isEmpty {
                rows.append(
                    GoalResult(goal: goal, system: system, status: .notMeasured, evidence: "100k and 1M not run"))
            }
            for n in large {
                rows.append(
                    withinFactor(
                        goal, "insert", system, of: Catalog.arrayBaseline, factor: factor, at: n, label: Self.size(n)))
            }
        }
        for system in ["jsonfile", "appendlog", "appendlog-none"] {
            rows.append(
                faster(
                    "open + fetch all at 100k and 1M: no slower than grdb-file", "open", system,
                    than: "grdb-file", factor: 1, at: large, label: largeLabel))
        }
        for system in engine {
            let peer = Catalog.grdbPeer(of: system) ?? "grdb-memory"
            rows.append(
                faster(
                    "delete-all at every N: no slower than GRDB of the same durability", "delete-all", system,
                    than: peer, factor: 1, at: sizes.filter { $0 != Catalog.updateReferenceSize }, label: "every N"))
            rows.append(
                faster(
                    "fetch-scan at 100k and 1M: at most 0.5× GRDB's time", "fetch-scan", system, than: peer,
                    factor: 2, at: large, label: largeLabel))
            rows.append(
                faster(
                    "fetch-indexed at 1M: at most 0.5× GRDB's time", "fetch-indexed", system, than: peer,
                    factor: 2, at: [top], label: topLabel))
            rows.append(
                perModel(
                    "materializing a model: at most 0.5 µs (fetch-all's time over N, at 100k and 1M)",
                    "fetch-all", system, limit: 0.5e-6, at: large, label: largeLabel))
        }
        return rows
    }

    /// `system`'s time per item (its median over N) at most `limit` seconds at each size.
    private func perModel(
        _ goal: String, _ workload: String, _ system: String, limit: Double, at sizes: [Int], label: String
    ) -> GoalResult {
        if sizes.isEmpty {
            return GoalResult(goal: goal, system: system, status: .notMeasured, evidence: "no size measured")
        }
        var notes: [String] = []
        var missed = false
        for n in sizes {
            switch median(workload, system, n) {
            case .success(let time):
                let each = time / Double(n)
                let ok = each <= limit
                if !ok { missed = true }
                notes.append(
                    "\(Self.size(n)): \(Report.seconds(time)), \(Report.seconds(each)) each\(ok ? "" : " ✗")")
            case .failure(let why):
                return GoalResult(goal: goal, system: system, status: .notMeasured, evidence: why.description)
            }
        }
        return GoalResult(
            goal: goal, system: system, status: missed ? .missed : .met,
            evidence: "at \(label), against \(Report.seconds(limit)): " + notes.joined(separator: "; "))
    }

    // MARK: Kinds of goal

    /// `system` at least `factor`× faster than `reference` at each size; with `orEqual` false, strictly faster.
    private func faster(
        _ goal: String, _ workload: String, _ system: String, than reference: String, factor: Double, at sizes: [Int],
        label: String, orEqual: Bool = true
    ) -> GoalResult {
        var notes: [String] = []
        var missed = false
        for n in sizes {
            switch (median(workload, system, n), median(workload, reference, n)) {
            case (.success(let mine), .success(let theirs)):
                let ratio = mine > 0 ? theirs / mine : .infinity
                let ok = orEqual ? ratio >= factor : ratio > factor
                if !ok { missed = true }
                notes.append(
                    "\(Self.size(n)): \(Report.seconds(mine)) vs \(Report.seconds(theirs)) "
                        + "(\(Self.speed(ratio)))\(ok ? "" : " ✗")")
            case (.failure(let why), _), (_, .failure(let why)):
                return GoalResult(goal: goal, system: system, status: .notMeasured, evidence: why.description)
            }
        }
        if sizes.isEmpty {
            return GoalResult(goal: goal, system: system, status: .notMeasured, evidence: "no size measured")
        }
        let status: GoalResult.Status = missed ? .missed : .met
        return GoalResult(
            goal: goal, system: system, status: status,
            evidence: "vs \(reference) at \(label): " + notes.joined(separator: "; "))
    }

    /// `system` at most `factor`× slower than `reference` at one size.
    private func withinFactor(
        _ goal: String, _ workload: String, _ system: String, of reference: String, factor: Double, at n: Int,
        label: String
    ) -> GoalResult {
        switch (median(workload, system, n), median(workload, reference, n)) {
        case (.success(let mine), .success(let theirs)):
            let ratio = theirs > 0 ? mine / theirs : .infinity
            return GoalResult(
                goal: goal, system: system, status: ratio <= factor ? .met : .missed,
                evidence: "at \(label): \(Report.seconds(mine)) vs \(Report.seconds(theirs)) "
                    + "(\(Report.factor(ratio)) \(reference)'s time)")
        case (.failure(let why), _), (_, .failure(let why)):
            return GoalResult(goal: goal, system: system, status: .notMeasured, evidence: why.description)
        }
    }

    /// `system`'s time at `to` at most `factor`× its time at `from`.
    private func scaling(
        _ goal: String, _ workload: String, _ system: String, from: Int, to: Int, factor: Double
    ) -> GoalResult {
        guard from < to else {
            return GoalResult(
                goal: goal, system: system, status: .notMeasured,
                evidence: "needs two sizes; the run measured \(sizes.map(Self.size))")
        }
        switch (median(workload, system, from), median(workload, system, to)) {
        case (.success(let small), .success(let large)):
            let ratio = small > 0 ? large / small : .infinity
            let label = to == 1_000_000 ? "" : " (1M not run)"
            return GoalResult(
                goal: goal, system: system, status: ratio <= factor ? .met : .missed,
                evidence: "\(Self.size(to))\(label): \(Report.seconds(large)) vs \(Self.size(from)): "
                    + "\(Report.seconds(small)) (\(Report.factor(ratio)))")
        case (.failure(let why), _), (_, .failure(let why)):
            return GoalResult(goal: goal, system: system, status: .notMeasured, evidence: why.description)
        }
    }

    /// The growth of `system`'s peak resident size while inserting, against three times the raw data.
    private func memory(_ goal: String, _ system: String, at n: Int, label: String) -> GoalResult {
        guard let measurement = results[Self.key("insert", system, n)], measurement.status == .measured else {
            return GoalResult(
                goal: goal, system: system, status: .notMeasured,
                evidence: "insert/\(system)/\(Self.size(n)) was not measured")
        }
        guard let growth = measurement.peakGrowthBytes, let raw = measurement.rawDataBytes, raw > 0 else {
            return GoalResult(
                goal: goal, system: system, status: .notMeasured,
                evidence: "the child did not report its baseline and peak resident sizes")
        }
        let ratio = Double(growth) / Double(raw)
        return GoalResult(
            goal: goal, system: system, status: ratio <= 3 ? .met : .missed,
            evidence: "at \(label): peak grew \(Report.bytes(growth)) over the data set's \(Report.bytes(raw)) raw "
                + "(\(Report.factor(ratio)))")
    }

    /// The peak resident size of `system`'s timed repetitions (the peak reset after set-up) under `limit`.
    private func timedPeak(
        _ goal: String, _ workload: String, _ system: String, at n: Int, label: String, limit: Int
    ) -> GoalResult {
        guard let measurement = results[Self.key(workload, system, n)], measurement.status == .measured else {
            return GoalResult(
                goal: goal, system: system, status: .notMeasured,
                evidence: "\(workload)/\(system)/\(Self.size(n)) was not measured")
        }
        guard let peak = measurement.timedPeakResidentBytes, let growth = measurement.timedPeakGrowthBytes,
            let data = measurement.dataSetResidentBytes
        else {
            return GoalResult(
                goal: goal, system: system, status: .notMeasured,
                evidence: "the child could not reset its peak (Linux's /proc/self/clear_refs)")
        }
        // The harness's own copy of the data set (kept to check results) is not the store's memory.
        let storePeak = peak - data
        return GoalResult(
            goal: goal, system: system, status: storePeak < limit ? .met : .missed,
            evidence: "at \(label): \(Report.bytes(storePeak)) without the harness's data set "
                + "(\(Report.bytes(peak)) peak while timed, less \(Report.bytes(data)) of generated rows); "
                + "\(Report.bytes(growth)) above the process at the start of the timed phase")
    }

    // MARK: Lookups

    func median(_ workload: String, _ system: String, _ n: Int) -> Result<Double, Missing> {
        guard let measurement = results[Self.key(workload, system, n)] else {
            return .failure(Missing("\(workload)/\(system)/\(Self.size(n)) was not run"))
        }
        switch measurement.status {
        case .measured:
            guard let median = measurement.timing?.median else { return .failure(Missing("no timing")) }
            return .success(median)
        case .notApplicable(let reason):
            return .failure(Missing("\(workload)/\(system)/\(Self.size(n)): n/a (\(reason))"))
        case .failed(let reason):
            return .failure(Missing("\(workload)/\(system)/\(Self.size(n)): failed (\(reason))"))
        }
    }

    /// Why a goal could not be evaluated.
    struct Missing: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func size(_ n: Int) -> String { Report.size(n) }

    /// A speed-up as words: `3.2× faster` or `4.1× slower`.
    static func speed(_ speedUp: Double) -> String {
        speedUp >= 1 ? "\(Report.factor(speedUp)) faster" : "\(Report.factor(1 / speedUp)) slower"
    }
}
