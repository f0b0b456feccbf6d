import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// A model the remote changed in several transactions comes in several pages of one pull, each time
/// in its current state; a clash of a local edit with the remote's delete is still one clash, one
/// conflict record.
@Suite struct SyncPagedClashTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// Sets the notes of the only journey of `replica`.
    func setNotes(_ notes: String, on replica: Replica) throws {
        let context = replica.context()
        try #require(try context.fetch(FetchDescriptor<Journey>()).first).notes = notes
        try context.save()
    }

    /// Deletes the only journey of `replica`.
    func deleteJourney(on replica: Replica) throws {
        let context = replica.context()
        context.delete(try #require(try context.fetch(FetchDescriptor<Journey>()).first))
        try context.save()
    }

    @Test(arguments: [1, 1_000])
    func anEditAgainstADeleteSeenInEveryPageIsOneConflict(pageSize: Int) async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        var configuration = SyncConfiguration()
        configuration.pageSize = pageSize
        let a = try Replica(url: "memory:", host: host, configuration: configuration)
        let b = try Replica(url: "sqlite:" + directory.path("b.sqlite"), host: host, configuration: configuration)
        let c = try Replica(url: "json:" + directory.path("c.json"), host: host, configuration: configuration)
        let context = a.context()
        context.insert(Journey("Faro", budget: 1))
        try context.save()
        for replica in [a, b, c] { try await replica.engine.syncNow() }

        // B edits offline. Meanwhile the remote's journey is deleted (by A), brought back by C's
        // edit (an edit beats a delete), and deleted again (by A): three transactions.
        try setNotes("b", on: b)
        try deleteJourney(on: a)
        try await a.engine.syncNow()
        try setNotes("c", on: c)
        try await c.engine.syncNow(pushFirst: true)
        try await a.engine.syncNow()
        try deleteJourney(on: a)
        try await a.engine.syncNow()

        // B's pull reads them in pages of `pageSize` models: with one a page, the journey comes
        // three times, deleted each time.
        let round = try await b.engine.syncNow()
        #expect(round.conflicts == 1)
        let conflicts = try b.engine.conflicts.list(includingResolved: true)
        #expect(conflicts.map(\.kind) == [.updateDeleted])
        // B's edit beat the delete: every replica ends with B's journey.
        for replica in [a, c] { try await replica.engine.syncNow() }
        for replica in [a, b, c] { #expect(try replica.journeys() == ["Faro: 1 b []"]) }
    }
}
