import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreSyncTestSupport
import ModelStoreTestSupport
import Testing

/// Four replicas (in memory, a JSON file, SQLite, an append log) make random offline edits against a shared
/// SQLite store and sync at random points. Afterwards every replica and the shared store hold what
/// a plain-Swift model of the documented merge says, and all agree. Seeded; a failure shrinks to a
/// short sequence of steps. `MODELSTORE_SYNC_RUNS` and `MODELSTORE_SYNC_STEPS` make the long run
/// (`scripts/sync-soak.sh`).
@Suite struct SyncRandomizedTests {
    @Test func replicasConvergeOnWhatTheModelOfTheMergeSays() async throws {
        let environment = ProcessInfo.processInfo.environment
        let failure = try await SyncRandomRun.firstFailure(
            firstSeed: environment["MODELSTORE_SYNC_SEED"].flatMap(UInt64.init) ?? 20_261_125,
            runs: environment["MODELSTORE_SYNC_RUNS"].flatMap(Int.init) ?? 4,
            length: environment["MODELSTORE_SYNC_STEPS"].flatMap(Int.init) ?? 40
        ) { configuration in
            let directory = try TemporaryDirectory()
            let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
            let replicas = [
                try Replica(url: "memory:", host: host, configuration: configuration),
                try Replica(url: "json:" + directory.path("r1.json"), host: host, configuration: configuration),
                try Replica(url: "sqlite:" + directory.path("r2.sqlite"), host: host, configuration: configuration),
                try Replica(url: "log:" + directory.path("r3-log"), host: host, configuration: configuration),
            ]
            return SyncRandomRun.Stores(host: host, replicas: replicas, keep: [directory])
        }
        if let failure { Issue.record(Comment(rawValue: failure)) }
    }
}
