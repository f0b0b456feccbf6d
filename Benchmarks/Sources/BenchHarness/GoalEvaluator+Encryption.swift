/// The cost of encryption at rest: each encrypted store against its plaintext twin in the same run.
extension GoalEvaluator {
    /// The most an encrypted store's time of a write may be, as a multiple of its plaintext twin's.
    public static let encryptedWriteFactor = 1.10

    /// The most an encrypted store's time of a read may be, as a multiple of its plaintext twin's.
    public static let encryptedReadFactor = 1.05

    /// The workloads that save (insert, update, delete): held to ``encryptedWriteFactor``.
    public static let encryptedWriteWorkloads = ["insert", "update-one", "update-live", "delete-all"]

    /// The workloads that open or fetch without writing: held to ``encryptedReadFactor``. The
    /// class-hierarchy fetches are left out: they decrypt the same rows as `fetch-all`.
    public static let encryptedReadWorkloads = [
        "open", "open-page", "fetch-indexed", "fetch-unique", "fetch-scan", "fetch-all",
    ]

    /// One row per encrypted system (its `-batch` variant too, for insert) and workload: its median
    /// over its plaintext twin's at every N either was run at.
    func encryptionGoals() -> [GoalResult] {
        let encrypted = Catalog.systems.map(\.name).filter { Catalog.plaintextTwin(of: $0) != nil }
        let kinds = [
            (Self.encryptedWriteWorkloads, Self.encryptedWriteFactor, "a write"),
            (Self.encryptedReadWorkloads, Self.encryptedReadFactor, "a read"),
        ]
        var rows: [GoalResult] = []
        for (workloads, factor, kind) in kinds {
            for workload in workloads {
                let variants = workload == "insert" ? ["", Catalog.batchInsertSuffix] : [""]
                for system in encrypted {
                    for variant in variants {
                        rows.append(overPlaintext(workload, system + variant, factor: factor, kind: kind))
                    }
                }
            }
        }
        return rows
    }

    /// `system`'s time of `workload` at most `factor`× its plaintext twin's at every N either was measured at.
    private func overPlaintext(_ workload: String, _ system: String, factor: Double, kind: String) -> GoalResult {
        let plaintext = Catalog.plaintextTwin(of: system) ?? ""
        let goal =
            "encrypted at rest, \(workload) (\(kind)): at most \(Report.factor(factor)) the plaintext store's time, "
            + "at every N"
        let measured = sizes.filter { n in
            results[Self.key(workload, system, n)] != nil || results[Self.key(workload, plaintext, n)] != nil
        }
        if measured.isEmpty {
            return GoalResult(
                goal: goal, system: system, status: .notMeasured,
                evidence: "neither \(workload)/\(system) nor \(workload)/\(plaintext) was run")
        }
        return atMost(
            goal, (workload, system), over: (workload, plaintext), factor: factor, at: measured,
            evidence: "vs \(plaintext) at every N: ")
    }
}
