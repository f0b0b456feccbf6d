import Foundation
import ModelStore
import ModelStorePostgreSQL
import ModelStoreSync
import ModelStoreSyncTestSupport
import ModelStoreTestSupport
import Testing

/// Sync with a PostgreSQL store as the shared one and JSON, SQLite and append-log stores as the
/// local replicas: the basic scenarios, paging through more models than a page holds, and the
/// seeded randomized run against the plain-Swift model of the merge.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLSyncTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// A host over a PostgreSQL store in a namespace of its own.
    static func host(_ label: String = "sync") throws -> SyncHost {
        try SyncHost(
            container: ModelContainer(
                for: Replica.schema,
                configurations: [try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace(label))]
            ))
    }

    /// Two hosts over one new namespace, as two server processes on one database.
    static func hosts(sharing label: String) throws -> [SyncHost] {
        let namespace = PostgreSQLServer.freshNamespace(label)
        return try (0..<2).map { _ in
            try SyncHost(
                container: ModelContainer(
                    for: Replica.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)]))
        }
    }

    // The basic scenarios of ModelStoreSyncTestSupport, with every kind of local store.

    @Test func modelsAndRelationshipsReachAnotherReplica() async throws {
        try await SyncScenarios.modelsAndRelationshipsReachAnotherReplica(
            host: Self.host(), "json:" + directory.path("a.json"), "log:" + directory.path("b-log"))
    }

    @Test func editsToDifferentPropertiesBothSurvive() async throws {
        try await SyncScenarios.editsToDifferentPropertiesBothSurvive(
            host: Self.host(), "sqlite:" + directory.path("a.sqlite"), "json:" + directory.path("b.json"))
    }

    @Test func aClashIsDecidedByThePolicyAndKeptAsAConflict() async throws {
        try await SyncScenarios.aClashIsDecidedByThePolicyAndKeptAsAConflict(
            host: Self.host(), "log:" + directory.path("a-log"), "sqlite:" + directory.path("b.sqlite"))
    }

    @Test func deletesTravelAndAnEditBeatsADelete() async throws {
        try await SyncScenarios.deletesTravelAndAnEditBeatsADelete(
            host: Self.host(), "json:" + directory.path("a.json"), "log:" + directory.path("b-log"))
    }

    @Test func aRoundWithNothingToMoveMovesNothing() async throws {
        try await SyncScenarios.aRoundWithNothingToMoveMovesNothing(
            host: Self.host(), "sqlite:" + directory.path("a.sqlite"))
    }

    @Test func twoOfflineModelsWithOneUniqueValueBecomeOne() async throws {
        try await SyncScenarios.twoOfflineModelsWithOneUniqueValueBecomeOne(
            host: Self.host(), "sqlite:" + directory.path("a.sqlite"), "json:" + directory.path("b.json"))
    }

    @Test func aClashGoesToTheLaterWriterByDefaultAndReachesEveryone() async throws {
        // Two replicas change one property from the same base; the default policy (last writer
        // wins on the stamps the replicas sent) keeps the later edit, on the shared store too.
        let host = try Self.host()
        let a = try Replica(url: "sqlite:" + directory.path("a.sqlite"), host: host)
        let b = try Replica(url: "sqlite:" + directory.path("b.sqlite"), host: host)
        let context = a.context()
        context.insert(Journey("Faro", budget: 1))
        try context.save()
        try await a.engine.syncNow()
        try await b.engine.syncNow()
        let onA = a.context()
        try #require(try onA.fetch(FetchDescriptor<Journey>()).first).notes = "a"
        try onA.save()
        // Later by more than the resolution of any store's transaction times, so the order is certain.
        try await Task.sleep(for: .milliseconds(1100))
        let onB = b.context()
        try #require(try onB.fetch(FetchDescriptor<Journey>()).first).notes = "b"
        try onB.save()
        try await a.engine.syncNow()
        let round = try await b.engine.syncNow()
        #expect(round.conflicts == 1)
        let shared = try ModelContext(host.container).fetch(FetchDescriptor<Journey>())
        #expect(shared.map(\.notes) == ["b"])
        try await a.engine.syncNow()
        #expect(try a.journeys() == ["Faro: 1 b []"])
    }

    @Test func aFirstPullPagesThroughDeletionsWithoutSkippingAny() async throws {
        try await SyncScenarios.aFirstPullPagesThroughDeletionsWithoutSkippingAny(
            host: Self.host(), "sqlite:" + directory.path("a.sqlite"), "json:" + directory.path("b.json"),
            "log:" + directory.path("c-log"))
    }

    @Test func twoHostsTakingTheSamePushesStoreEachModelOnce() async throws {
        // Two hosts on one namespace both find no record for a pushed model: the unique index on the
        // records' global identifiers lets only one store it.
        let hosts = try Self.hosts(sharing: "sync2push")
        try await SyncScenarios.twoHostsTakingTheSamePushesStoreEachModelOnce(first: hosts[0], second: hosts[1])
    }

    @Test func twoHostsOnOneStoreTurnConcurrentWritesIntoRetriesNotFailures() async throws {
        // Two hosts serve one namespace, as two server processes would: a push one host reads and
        // another host's push changes before the first saves is caught by PostgreSQL's check of
        // the expected values, and must come back as stale (pull, merge, push again), not fail
        // the round.
        let hosts = try Self.hosts(sharing: "sync2")
        let replicas = try (0..<4).map { index in
            try Replica(url: "sqlite:" + directory.path("r\(index).sqlite"), host: hosts[index % 2])
        }
        let context = replicas[0].context()
        for index in 0..<4 { context.insert(Journey("j\(index)")) }
        try context.save()
        for replica in replicas { try await replica.engine.syncNow() }
        let failures = await withTaskGroup(of: [String].self) { group in
            for (number, replica) in replicas.enumerated() {
                let container = replica.container
                let engine = replica.engine
                group.addTask {
                    var failures: [String] = []
                    for round in 0..<12 {
                        do {
                            let context = ModelContext(container)
                            let journeys = try context.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)]))
                            journeys[round % journeys.count].budget = number * 100 + round
                            journeys[(round + number) % journeys.count].notes = "r\(number)-\(round)"
                            try context.save()
                            try await engine.syncNow()
                        } catch {
                            failures.append("r\(number) round \(round): \(error)")
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(failures.isEmpty, "\(failures)")
        for _ in 0..<2 {
            for replica in replicas { try await replica.engine.syncNow() }
        }
        let shared = try ModelContext(hosts[0].container).fetch(FetchDescriptor<Journey>()).map {
            "\($0.name): \($0.budget) \($0.notes) []"
        }.sorted()
        #expect(shared.count == 4)
        for replica in replicas { #expect(try replica.journeys() == shared) }
    }

    @Test func replicasConvergeOnWhatTheModelOfTheMergeSays() async throws {
        let environment = ProcessInfo.processInfo.environment
        let failure = try await SyncRandomRun.firstFailure(
            firstSeed: environment["MODELSTORE_SYNC_SEED"].flatMap(UInt64.init) ?? 20_261_125,
            runs: environment["MODELSTORE_SYNC_RUNS"].flatMap(Int.init) ?? 3,
            length: environment["MODELSTORE_SYNC_STEPS"].flatMap(Int.init) ?? 40
        ) { configuration in
            let directory = try TemporaryDirectory()
            let host = try Self.host("syncr")
            let replicas = [
                try Replica(url: "json:" + directory.path("r0.json"), host: host, configuration: configuration),
                try Replica(url: "sqlite:" + directory.path("r1.sqlite"), host: host, configuration: configuration),
                try Replica(url: "log:" + directory.path("r2-log"), host: host, configuration: configuration),
                try Replica(url: "memory:", host: host, configuration: configuration),
            ]
            return SyncRandomRun.Stores(host: host, replicas: replicas, keep: [directory])
        }
        if let failure { Issue.record(Comment(rawValue: failure)) }
    }
}
