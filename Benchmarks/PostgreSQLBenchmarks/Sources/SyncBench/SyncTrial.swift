import BenchHarness
import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStorePostgreSQL
import ModelStoreSync
import PostgresNIO

/// The workloads: what one timed repetition does.
enum SyncWorkload: String, CaseIterable {
    /// A replica holding N models that never synced runs its first round against an empty shared store.
    case initialPush = "initial-push"
    /// A new, empty replica runs its first round against a shared store holding N models.
    case initialPull = "initial-pull"
    /// A synced replica changed one attribute of 1k of its N models and runs a round (pushes them).
    case roundPush = "round-push-1k"
    /// A synced replica runs the round that brings it another replica's 1k changes (pulls them).
    case roundPull = "round-pull-1k"
    /// A synced replica runs a round with nothing to move.
    case roundQuiet = "round-quiet"
}

/// Where the shared store lives: a SQLite file, or a namespace on the PostgreSQL server.
enum SyncSystem: String, CaseIterable {
    case sqlite = "sqlite-to-sqlite"
    case postgres = "sqlite-to-postgres"

    /// A new, empty shared store, and its host.
    func sharedHost(directory: URL, label: String) throws -> SyncHost {
        switch self {
        case .sqlite:
            let url = "sqlite:" + directory.appendingPathComponent("shared-\(label).sqlite").path
            return try SyncHost(container: ModelContainer(for: syncSchema, url: url))
        case .postgres:
            guard let server = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"] else {
                throw WrongResult(
                    "MODELSTORE_POSTGRES_URL is not set: run under 'scripts/postgres.sh run -- …'")
            }
            let configuration = try PostgreSQLStoreConfiguration.postgreSQL(
                server, namespace: Self.namespacePrefix + label)
            return try SyncHost(container: ModelContainer(for: syncSchema, configurations: [configuration]))
        }
    }
}

extension SyncSystem {
    /// The start of the name of every namespace this process makes on the PostgreSQL server.
    static let namespacePrefix = "syncbench_\(ProcessInfo.processInfo.processIdentifier)_"

    /// Removes the shared store `sharedHost(directory:label:)` made, once its repetition is checked:
    /// a PostgreSQL namespace is dropped, so the server does not keep a store per repetition.
    func removeShared(label: String) async throws {
        switch self {
        case .sqlite: break  // The child's directory is removed when it ends.
        case .postgres: try await Server.dropNamespace(Self.namespacePrefix + label)
        }
    }

    /// Drops every namespace this process made that is still on the server (after a failed
    /// repetition too); does nothing without a server.
    static func removeLeftovers() async throws {
        guard ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"] != nil else { return }
        let connection = try await Server.connect()
        var names: [String] = []
        let rows = try await connection.query(
            "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, \(namespacePrefix))", logger: Server.logger)
        for try await name in rows.decode(String.self) { names.append(name) }
        try await connection.close()
        for name in names { try await Server.dropNamespace(name) }
    }
}

/// The main benchmarks' user (`Shared/` links their model and data set), with the sync entities.
let syncSchema = Schema([User.self]).includingSyncMetadata()

struct WrongResult: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One benchmark in a child process: set-up untimed, then the repetitions, each checked.
struct SyncTrial {
    let workload: SyncWorkload
    let system: SyncSystem
    let n: Int
    let changes: Int
    let directory: URL

    /// A replica on a new SQLite file holding the data set's users, or none, saved in one transaction.
    func replica(_ label: String, host: SyncHost, users: Dataset?) throws -> (ModelContainer, SyncEngine) {
        let url = "sqlite:" + directory.appendingPathComponent("local-\(label).sqlite").path
        let container = try ModelContainer(for: syncSchema, url: url)
        if let users {
            let context = ModelContext(container)
            for row in users.rows { context.insert(User(row)) }
            try context.save()
        }
        return (container, try SyncEngine(container: container, transport: InProcessSyncTransport(host: host)))
    }

    func count(_ container: ModelContainer) throws -> Int {
        try ModelContext(container).fetchCount(FetchDescriptor<User>())
    }

    /// Changes the score of `changes` users, spread over the store, to a value of `round`.
    func change(_ container: ModelContainer, round: Int) throws {
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<User>()
        let stride = max(1, n / changes)
        var changed = 0
        descriptor.fetchLimit = n
        for (position, user) in try context.fetch(descriptor).enumerated() where position % stride == 0 {
            guard changed < changes else { break }
            user.score = Double(round) + 0.5
            changed += 1
        }
        try context.save()
    }

    /// What the repetitions measured: seconds each, and the largest growth of the resident size
    /// during a timed round (from its start to the peak).
    struct Measured {
        var samples: [Double] = []
        var timedPeakGrowth = 0
        var timedPeak = 0
    }

    /// The timed repetitions, each checked after the clock stops.
    func measure(_ policy: RepetitionPolicy) async throws -> Measured {
        var measured = Measured()
        let started = Date()
        let data = Dataset(count: n)
        var round = 0
        func more() -> Bool { policy.wantsMore(after: measured.samples, elapsed: Date().timeIntervalSince(started)) }
        func time(_ engine: SyncEngine) async throws -> SyncSummary {
            // A new peak for the round alone: set-up (the seeded models) is not the engine's memory.
            let reset = ProcessMemory.resetPeak()
            let before = ProcessMemory.currentResidentBytes() ?? 0
            ProfilerControl.shared?.send("enable")
            let clock = ContinuousClock.now
            let summary = try await engine.syncNow()
            let (seconds, attoseconds) = (ContinuousClock.now - clock).components
            ProfilerControl.shared?.send("disable")
            measured.samples.append(Double(seconds) + Double(attoseconds) / 1e18)
            if reset {
                let peak = ProcessMemory.peakResidentBytes()
                measured.timedPeak = max(measured.timedPeak, peak)
                measured.timedPeakGrowth = max(measured.timedPeakGrowth, peak - before)
            }
            return summary
        }
        func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw WrongResult("wrong result: " + message()) }
        }
        switch workload {
        case .initialPush:
            while more() {
                round += 1
                let host = try system.sharedHost(directory: directory, label: "p\(round)")
                let (_, engine) = try replica("p\(round)", host: host, users: data)
                let summary = try await time(engine)
                try expect(summary.pushed == n, "pushed \(summary.pushed) of \(n)")
                let stored = try count(host.container)
                try expect(stored == n, "the shared store holds \(stored)")
                try await system.removeShared(label: "p\(round)")
            }
        case .initialPull:
            let host = try system.sharedHost(directory: directory, label: "seed")
            let (_, seeder) = try replica("seed", host: host, users: data)
            try await seeder.syncNow()
            while more() {
                round += 1
                let (container, engine) = try replica("r\(round)", host: host, users: nil)
                let summary = try await time(engine)
                try expect(summary.pulled == n, "pulled \(summary.pulled) of \(n)")
                let held = try count(container)
                try expect(held == n, "the replica holds \(held)")
            }
        case .roundPush, .roundPull, .roundQuiet:
            let host = try system.sharedHost(directory: directory, label: "seed")
            let (writer, writerEngine) = try replica("writer", host: host, users: data)
            try await writerEngine.syncNow()
            let (_, readerEngine) = try replica("reader", host: host, users: nil)
            try await readerEngine.syncNow()
            try await writerEngine.syncNow()
            while more() {
                round += 1
                switch workload {
                case .roundPush:
                    try change(writer, round: round)
                    let summary = try await time(writerEngine)
                    try expect(summary.pushed == changes, "pushed \(summary.pushed) of \(changes)")
                    try await readerEngine.syncNow()
                case .roundPull:
                    try change(writer, round: round)
                    try await writerEngine.syncNow()
                    let summary = try await time(readerEngine)
                    try expect(summary.pulled == changes, "pulled \(summary.pulled) of \(changes)")
                default:
                    let summary = try await time(readerEngine)
                    try expect(summary == SyncSummary(), "a quiet round moved \(summary)")
                }
            }
        }
        return measured
    }
}

/// A profiler's control channel, so that a profile holds the timed rounds only: with
/// `MODELSTORE_SYNC_BENCH_PERF_CONTROL=CTL,ACK` (the FIFOs of `perf record --control fifo:CTL,ACK -D -1`),
/// each timed round is enclosed in `enable` and `disable`, each acknowledged before the round goes on.
final class ProfilerControl: Sendable {
    private let control: FileHandle
    private let acknowledgement: FileHandle

    static let shared: ProfilerControl? = {
        guard let value = ProcessInfo.processInfo.environment["MODELSTORE_SYNC_BENCH_PERF_CONTROL"] else { return nil }
        let paths = value.split(separator: ",").map(String.init)
        guard paths.count == 2, let control = FileHandle(forWritingAtPath: paths[0]),
            let acknowledgement = FileHandle(forReadingAtPath: paths[1])
        else { return nil }
        return ProfilerControl(control: control, acknowledgement: acknowledgement)
    }()

    private init(control: FileHandle, acknowledgement: FileHandle) {
        self.control = control
        self.acknowledgement = acknowledgement
    }

    /// Sends a command and waits for its acknowledgement.
    func send(_ command: String) {
        control.write(Data((command + "\n").utf8))
        _ = acknowledgement.availableData
    }
}
