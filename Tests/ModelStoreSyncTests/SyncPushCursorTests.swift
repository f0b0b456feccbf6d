import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// Where a replica's push cursor stands after its rounds: past the engine's own saves, so a later
/// round reads none of them back from the history, and never past a change of the app.
@Suite struct SyncPushCursorTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// A replica on a SQLite store, pushing `pageSize` models at a time.
    func replica(_ name: String, host: SyncHost, pageSize: Int = 1000) throws -> Replica {
        var configuration = SyncConfiguration()
        configuration.pageSize = pageSize
        return try Replica(url: "sqlite:" + directory.path(name + ".sqlite"), host: host, configuration: configuration)
    }

    /// The stored push cursor of the replica's state row for the remote, and its newest transaction.
    func cursorAndNewest(_ replica: Replica) throws -> (pushed: Int64, newest: Int64) {
        let store = replica.container.stores[0]
        let rows = try store.fetchErased(
            DataStoreFetchRequest<SchemaOnlyModel>(
                descriptor: FetchDescriptor(), editingState: EditingState(author: "test"),
                query: StoreQuery(entityName: SyncMetadata.stateEntityName))
        ).snapshots
        let pushed = rows.compactMap { row -> Int64? in
            guard case .string(let remote)? = row["remote"], !remote.isEmpty, case .int(let value)? = row["pushed"]
            else { return nil }
            return value
        }
        let state = try #require(pushed.first, "the replica has no state row for the remote")
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(
            sortBy: [SortDescriptor(\.transactionIdentifier, order: .reverse)])
        descriptor.fetchLimit = 1
        let history = try #require(store as? any HistoryProviding)
        let newest = try history.fetchHistory(descriptor).first?.transactionIdentifier ?? 0
        return (state, newest)
    }

    @Test func aPagedFirstPushLeavesTheCursorPastItsAcknowledgements() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let phone = try replica("phone", host: host, pageSize: 10)
        let context = phone.context()
        for number in 0..<55 { context.insert(Journey("J\(number)", budget: number)) }
        try context.save()
        #expect(try await phone.engine.syncNow().pushed == 55)
        // Six pages, each acknowledged in a save of its own, then the save of the cursor itself.
        let (pushed, newest) = try cursorAndNewest(phone)
        #expect(pushed == newest - 1, "pushed \(pushed), newest \(newest)")
        #expect(newest >= 8)
    }

    @Test func aReplicaThatOnlyPullsKeepsItsCursorAtItsNewestTransactions() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let laptop = try replica("laptop", host: host)
        let phone = try replica("phone", host: host)
        let laptopContext = laptop.context()
        for number in 0..<10 { laptopContext.insert(Journey("J\(number)", budget: number)) }
        try laptopContext.save()
        _ = try await laptop.engine.syncNow()
        _ = try await phone.engine.syncNow()
        for round in 1...12 {
            for journey in try laptopContext.fetch(FetchDescriptor<Journey>()) { journey.budget = round * 100 }
            try laptopContext.save()
            _ = try await laptop.engine.syncNow()
            let summary = try await phone.engine.syncNow()
            #expect(summary.pulled == 10 && summary.pushed == 0, "\(summary)")
            let (pushed, newest) = try cursorAndNewest(phone)
            #expect(newest - pushed <= 2, "round \(round): pushed \(pushed), newest \(newest)")
        }
        // An app change after all those rounds is pushed, and only it.
        let phoneContext = phone.context()
        let first = try #require(
            try phoneContext.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)])).first)
        first.notes = "phone"
        try phoneContext.save()
        #expect(try await phone.engine.syncNow().pushed == 1)
        _ = try await laptop.engine.syncNow()
        #expect(try laptop.journeys() == phone.journeys())
    }
}
