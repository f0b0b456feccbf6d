import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// The root of a synced class hierarchy.
class Asset: PersistentModel {
    @Attribute var label: String = ""
    @Attribute var value: Double = 0

    let persistentBackingData = BackingData()
    required init() {}
}

/// An asset with memory.
final class Laptop: Asset {
    @Attribute var memory: Int = 8
}

/// An asset with a width.
final class Desk: Asset {
    @Attribute var width: Double = 1.2
}

/// Sync carries each model's class: models arrive as their own classes, and edits to a subclass's
/// properties merge field by field like any other.
@Suite struct SyncInheritanceTests {
    let directory: TemporaryDirectory
    static let schema = Schema([Asset.self, Laptop.self, Desk.self]).includingSyncMetadata()

    init() throws { directory = try TemporaryDirectory() }

    private func replica(_ url: String, _ host: SyncHost) throws -> (ModelContainer, SyncEngine) {
        let container = try ModelContainer(for: Self.schema, url: url)
        return (container, try SyncEngine(container: container, transport: InProcessSyncTransport(host: host)))
    }

    /// Every asset as `Class label value extra`, sorted.
    private func assets(_ container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Asset>()).map { asset in
            switch asset {
            case let laptop as Laptop: "Laptop \(laptop.label) \(laptop.value) \(laptop.memory)"
            case let desk as Desk: "Desk \(desk.label) \(desk.value) \(desk.width)"
            default: "Asset \(asset.label) \(asset.value)"
            }
        }.sorted()
    }

    @Test func modelsOfEveryClassTravelAndMergeFieldByField() async throws {
        let host = try SyncHost(
            container: ModelContainer(for: Self.schema, url: "sqlite:" + directory.path("shared.sqlite")))
        let (a, engineA) = try replica("json:" + directory.path("a.json"), host)
        let (b, engineB) = try replica("sqlite:" + directory.path("b.sqlite"), host)
        let context = ModelContext(a)
        let laptop = Laptop()
        laptop.label = "work"
        laptop.memory = 16
        let desk = Desk()
        desk.label = "standing"
        desk.width = 1.6
        let lamp = Asset()
        lamp.label = "lamp"
        for model in [laptop, desk, lamp] as [Asset] { context.insert(model) }
        try context.save()
        #expect(try await engineA.syncNow().pushed == 3)
        #expect(try await engineB.syncNow().pulled == 3)
        #expect(try assets(b) == ["Asset lamp 0.0", "Desk standing 0.0 1.6", "Laptop work 0.0 16"])
        #expect(try ModelContext(b).fetch(FetchDescriptor<Laptop>()).map(\.memory) == [16])

        // A edits the root's property, B the subclass's: both edits survive, with no conflict.
        let contextA = ModelContext(a)
        let onA = try #require(try contextA.fetch(FetchDescriptor<Laptop>()).first)
        onA.value = 1200
        try contextA.save()
        let contextB = ModelContext(b)
        let onB = try #require(try contextB.fetch(FetchDescriptor<Laptop>()).first)
        onB.memory = 32
        try contextB.save()
        _ = try await engineA.syncNow()
        _ = try await engineB.syncNow()
        _ = try await engineA.syncNow()
        let (onA2, onB2, shared) = (try assets(a), try assets(b), try assets(host.container))
        #expect(onA2 == ["Asset lamp 0.0", "Desk standing 0.0 1.6", "Laptop work 1200.0 32"])
        #expect(onA2 == onB2)
        #expect(shared == onA2)
        #expect(try SyncConflicts(container: a).list().isEmpty)
    }
}
