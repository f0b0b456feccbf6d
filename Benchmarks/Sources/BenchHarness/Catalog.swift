/// What a system promises about a save that returned: the class it is compared within.
public enum Durability: String, Sendable, Hashable, CaseIterable {
    /// Nothing reaches a disk.
    case memory
    /// Written to the OS, which flushes it later: survives the process crashing, not the machine.
    case osBuffered = "os-buffered"
    /// On disk (fsync) before the save returns.
    case synced = "fsync per save"
}

/// The systems the benchmarks compare, with the facts the report needs about each.
public enum Catalog {
    /// One system.
    public struct System: Sendable, Hashable {
        /// The name used on the command line and in the output.
        public let name: String
        /// Its durability class.
        public let durability: Durability
        /// Whether it is a ModelStore adapter (the systems the goals are about).
        public let isModelStore: Bool
        /// A one-line description for the README and `--list`.
        public let summary: String
    }

    /// Every system, in report order.
    public static let systems: [System] = [
        System(
            name: "inmemory", durability: .memory, isModelStore: true,
            summary: "ModelStore, in-memory adapter"),
        System(
            name: "jsonfile", durability: .synced, isModelStore: true,
            summary: "ModelStore, JSON-file adapter (whole file written atomically and fsynced per save)"),
        System(
            name: "appendlog", durability: .synced, isModelStore: true,
            summary: "ModelStore, append-log adapter, durability .batched (group commit, fsync before return)"),
        System(
            name: "appendlog-none", durability: .osBuffered, isModelStore: true,
            summary: "ModelStore, append-log adapter, durability .none (no fsync)"),
        System(
            name: "jsonfile-encrypted", durability: .synced, isModelStore: true,
            summary: "jsonfile encrypted at rest (AES-256-GCM over the whole document, raw key)"),
        System(
            name: "appendlog-encrypted", durability: .synced, isModelStore: true,
            summary: "appendlog encrypted at rest (AES-256-GCM per record, raw key)"),
        System(
            name: "appendlog-none-encrypted", durability: .osBuffered, isModelStore: true,
            summary: "appendlog-none encrypted at rest (AES-256-GCM per record, raw key)"),
        System(
            name: "sqlite", durability: .osBuffered, isModelStore: true,
            summary: "ModelStore, SQLite adapter, durability .batched (WAL, synchronous=NORMAL)"),
        System(
            name: "sqlite-encrypted", durability: .osBuffered, isModelStore: true,
            summary: "sqlite encrypted at rest (page cipher VFS: AES-256-GCM per page, raw key)"),
        System(
            name: "sqlite-sync", durability: .synced, isModelStore: true,
            summary: "ModelStore, SQLite adapter, durability .everySave (WAL, synchronous=FULL: fsync per save)"),
        System(
            name: "sqlite-raw", durability: .osBuffered, isModelStore: false,
            summary: "the SQLite C API, prepared statements, the adapter's tables and durability: SQLite's limit"),
        System(
            name: "sqlite-raw-history", durability: .osBuffered, isModelStore: false,
            summary: "sqlite-raw also writing the adapter's history rows and next key"),
        System(
            name: "grdb-memory", durability: .memory, isModelStore: false,
            summary: "GRDB 7.10 Codable records, in-memory DatabaseQueue"),
        System(
            name: "grdb-file", durability: .osBuffered, isModelStore: false,
            summary: "GRDB 7.10 Codable records, DatabasePool (WAL, GRDB's default synchronous=NORMAL)"),
        System(
            name: "grdb-file-sync", durability: .synced, isModelStore: false,
            summary: "GRDB 7.10 Codable records, DatabasePool (WAL, synchronous=FULL: fsync per commit)"),
        System(
            name: "foundation-json", durability: .synced, isModelStore: false,
            summary: "Foundation JSONEncoder/JSONDecoder over the same records, whole file fsynced per save"),
        System(
            name: "foundation-predicate", durability: .memory, isModelStore: false,
            summary: "Foundation Predicate.evaluate over materialised User models"),
        System(
            name: "array-baseline", durability: .memory, isModelStore: false,
            summary: "a Swift array of structs with hand-built hash indexes: the physical limit"),
    ]

    /// The ModelStore systems also measured inserting through the batch API, as `<name>-batch`.
    public static let batchInsertSuffix = "-batch"

    /// The system with this name; a `-batch` variant resolves to its base system.
    public static func system(named name: String) -> System? {
        if let system = systems.first(where: { $0.name == name }) { return system }
        guard name.hasSuffix(batchInsertSuffix) else { return nil }
        let base = String(name.dropLast(batchInsertSuffix.count))
        return systems.first { $0.name == base && $0.isModelStore }
    }

    /// What the name of a system encrypted at rest ends with (before a `-batch`); the rest names its
    /// plaintext twin, which the encryption goals divide its times by.
    public static let encryptedSuffix = "-encrypted"

    /// The plaintext system an encrypted one is compared with: `sqlite` for `sqlite-encrypted`,
    /// `jsonfile-batch` for `jsonfile-encrypted-batch`; `nil` for a system that is not encrypted.
    public static func plaintextTwin(of name: String) -> String? {
        let batch = name.hasSuffix(batchInsertSuffix)
        let base = batch ? String(name.dropLast(batchInsertSuffix.count)) : name
        guard base.hasSuffix(encryptedSuffix), system(named: name) != nil else { return nil }
        let plaintext = String(base.dropLast(encryptedSuffix.count))
        guard systems.contains(where: { $0.name == plaintext }) else { return nil }
        return batch ? plaintext + batchInsertSuffix : plaintext
    }

    /// The GRDB system of the same durability class: what a system's times are divided by in the report.
    public static func grdbPeer(of name: String) -> String? {
        guard let system = system(named: name) else { return nil }
        switch system.durability {
        case .memory: return "grdb-memory"
        case .osBuffered: return "grdb-file"
        case .synced: return "grdb-file-sync"
        }
    }

    /// The system that does a ModelStore system's work of `workload` with nothing above its
    /// engine: what the report divides its times by as "× limit". For the SQLite adapter it is
    /// `sqlite-raw`, or `sqlite-raw-history` for the workloads that write (which write history);
    /// for the stores on the table engine, the array of structs. The class-hierarchy workloads have
    /// none: they are divided by ``hierarchyReference`` instead. A write has a limit only in its
    /// system's durability class (none for the stores that fsync); a read has one whatever it is.
    public static func limit(of name: String, workload: String) -> String? {
        guard let system = system(named: name), system.isModelStore, !hierarchyWorkloads.contains(workload) else {
            return nil
        }
        let writes = ["insert", "update-one", "update-live", "delete-all"].contains(workload)
        if system.name.hasPrefix("sqlite") {
            guard !writes else { return system.durability == .osBuffered ? "sqlite-raw-history" : nil }
            return "sqlite-raw"
        }
        return !writes || system.durability == .memory ? arrayBaseline : nil
    }

    /// The baseline every system's times are also divided by.
    public static let arrayBaseline = "array-baseline"

    /// The workloads, in report order.
    public static let workloads =
        [
            "insert", "fetch-indexed", "fetch-unique", "fetch-scan", "fetch-all", "update-one", "update-live", "open",
            "open-page", "delete-all",
        ] + hierarchyWorkloads

    /// The class-hierarchy workloads: a fetch of a hierarchy's root class, the same rows fetched
    /// from one flat entity (what the first is divided by), and a fetch of one leaf subclass.
    public static let hierarchyWorkloads = ["hierarchy-base", "hierarchy-flat", "hierarchy-subclass"]

    /// The workload the class-hierarchy fetches are divided by: the flat entity's fetch of the same rows.
    public static let hierarchyReference = "hierarchy-flat"

    /// The extra size at which `update-one` also runs: the append log's reference point.
    public static let updateReferenceSize = 1_000
}
