import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// The index on a record entity's `pending` attribute, in new stores and in stores written before it.
@Suite struct SyncRecordIndexMigrationTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    static let recordEntity = SyncMetadata.recordEntityName(for: "Journey")
    static let pendingQuery = StoreQuery(entityName: recordEntity, filter: .equal("pending", .bool(true)))

    /// The test schema as a replica written before records had the `pending` index stored it.
    static func schemaWithoutPendingIndex() throws -> Schema {
        var description = Replica.schema.storedDescription
        for index in description.entities.indices where SyncMetadata.isMetadata(description.entities[index].name) {
            description.entities[index].indices.removeAll { $0 == ["pending"] }
        }
        return try Schema(description)
    }

    func accessPath(_ container: ModelContainer) throws -> StoreAccessPath? {
        try #require(container.stores[0] as? any DataStoreQuerying).accessPath(for: Self.pendingQuery)
    }

    @Test func recordsFindPendingOnesThroughAnIndex() throws {
        let container = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("new.sqlite"))
        let path = try #require(try accessPath(container))
        #expect(path.kind != .scan)
        #expect(path.properties == ["pending"])
    }

    @Test func aReplicaWrittenWithoutTheIndexGainsItAndKeepsItsRecords() async throws {
        let hostContainer = try ModelContainer(for: Replica.schema, url: "memory:")
        let hostContext = ModelContext(hostContainer)
        for number in 0..<20 { hostContext.insert(Journey("J\(number)", budget: number)) }
        try hostContext.save()
        let host = try SyncHost(container: hostContainer)
        let url = "sqlite:" + directory.path("replica.sqlite")

        // A replica written with the record entities as they were before the index.
        do {
            let old = try ModelContainer(for: try Self.schemaWithoutPendingIndex(), url: url)
            #expect(try accessPath(old)?.kind == .scan)
            let engine = try SyncEngine(container: old, transport: InProcessSyncTransport(host: host))
            #expect(try await engine.syncNow().pulled == 20)
        }

        let replica = try Replica(url: url, host: host)
        let path = try #require(try accessPath(replica.container))
        #expect(path.properties == ["pending"])
        let context = ModelContext(replica.container)
        #expect(try context.fetchCount(FetchDescriptor<Journey>()) == 20)
        let records = try replica.container.stores[0].fetchErased(
            DataStoreFetchRequest<SchemaOnlyModel>(
                descriptor: FetchDescriptor(), editingState: EditingState(author: "test"),
                query: StoreQuery(entityName: Self.recordEntity))
        ).snapshots
        #expect(records.count == 20)

        // The migrated replica goes on syncing from where it was: one edit, one change pushed.
        #expect(try await replica.engine.syncNow().pushed == 0)
        let first = try #require(
            try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == "J3" })).first)
        first.budget = 333
        try context.save()
        let summary = try await replica.engine.syncNow()
        #expect(summary.pushed == 1)
        #expect(summary.pulled == 0)
        let onHost = try ModelContext(hostContainer).fetch(
            FetchDescriptor<Journey>(predicate: #Predicate { $0.name == "J3" }))
        #expect(onHost.map(\.budget) == [333])
    }
}
