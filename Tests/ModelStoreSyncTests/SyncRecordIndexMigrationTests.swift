import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// The indexes of a record entity's `pending`, `globalID`, `key` and `deletedAt` attributes, in new
/// stores and in stores written before them.
@Suite struct SyncRecordIndexMigrationTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    static let recordEntity = SyncMetadata.recordEntityName(for: "Journey")
    static let pendingQuery = StoreQuery(entityName: recordEntity, filter: .equal("pending", .bool(true)))

    static let indexed: [(property: String, value: StoreValue)] = [
        ("pending", .bool(true)), ("globalID", .string("8B6F0C2E-0000-4000-8000-000000000000")),
        ("key", .string("7")), ("deletedAt", .int(3)),
    ]

    /// The test schema as a replica written before records had these indexes stored it.
    static func schemaWithoutPendingIndex() throws -> Schema {
        var description = Replica.schema.storedDescription
        for index in description.entities.indices where SyncMetadata.isMetadata(description.entities[index].name) {
            description.entities[index].indices.removeAll { $0 != ["model"] }
        }
        return try Schema(description)
    }

    func accessPath(_ container: ModelContainer, query: StoreQuery = pendingQuery) throws -> StoreAccessPath? {
        try #require(container.stores[0] as? any DataStoreQuerying).accessPath(for: query)
    }

    @Test(arguments: ["sqlite", "log"])
    func recordsAreFoundByEachLookUpThroughAnIndex(scheme: String) throws {
        let container = try ModelContainer(for: Replica.schema, url: scheme + ":" + directory.path("new." + scheme))
        for (property, value) in Self.indexed {
            let query = StoreQuery(entityName: Self.recordEntity, filter: .equal(property, value))
            let path = try #require(try accessPath(container, query: query))
            #expect(path.kind != .scan, "\(property)")
            #expect(path.properties == [property])
        }
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
        for (property, value) in Self.indexed {
            let query = StoreQuery(entityName: Self.recordEntity, filter: .equal(property, value))
            #expect(try accessPath(replica.container, query: query)?.properties == [property])
        }
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
