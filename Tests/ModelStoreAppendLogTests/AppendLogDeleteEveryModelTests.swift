import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

/// A flat model with no relationships and nothing preserved on deletion, so a batch delete of every
/// reading takes the store's column path, whose tombstones are identifiers alone.
final class Reading: PersistentModel {
    @Attribute(.unique) var sensor: String = ""
    @Attribute var value: Double = 0
    @Attribute var count: Int = 0
    @Attribute var labels: [String] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ sensor: String, value: Double, count: Int, labels: [String] = []) {
        self.init()
        self.sensor = sensor
        self.value = value
        self.count = count
        self.labels = labels
    }
}

/// A second flat model, which a delete of every reading must leave alone.
final class Station: PersistentModel {
    @Attribute var name: String = ""

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ name: String) {
        self.init()
        self.name = name
    }
}

struct AppendLogDeleteEveryModelTests {
    private func configuration(_ directory: URL) -> AppendLogStoreConfiguration {
        AppendLogStoreConfiguration(
            directory: directory, durability: .everySave, compaction: .manual,
            schema: Schema(Reading.self, Station.self))
    }

    private func store(of container: ModelContainer) throws -> AppendLogStore {
        try #require(container.stores.first as? AppendLogStore)
    }

    /// The delete's record lists every reading, history gives each one back as a delete, the other
    /// entity keeps its models, and the live size the store keeps in memory is the one a fresh open
    /// computes from the files.
    @Test func deletingEveryModelRecordsEachAndKeepsTheLiveSizeExact() throws {
        let directory = try TemporaryDirectory()
        var ids: [PersistentIdentifier] = []
        var liveAfterDelete = 0
        do {
            let container = try ModelContainer(
                for: Reading.self, Station.self, configurations: configuration(directory.store))
            let context = ModelContext(container)
            let readings = (0..<300).map {
                Reading(
                    "sensor-\($0)", value: Double($0) / 3, count: $0 * 1_000, labels: $0 % 7 == 0 ? ["a", "bc"] : [])
            }
            for reading in readings { context.insert(reading) }
            for name in ["north", "south"] { context.insert(Station(name)) }
            try context.save()
            ids = readings.map(\.persistentModelID)
            let liveBefore = try store(of: container).info.liveByteCount

            try context.delete(model: Reading.self)
            #expect(try context.fetchCount(FetchDescriptor<Reading>()) == 0)
            #expect(try context.fetch(FetchDescriptor<Station>()).map(\.name).sorted() == ["north", "south"])
            liveAfterDelete = try store(of: container).info.liveByteCount
            #expect(liveAfterDelete > 0 && liveAfterDelete < liveBefore / 10)

            let last = try #require(context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
            var deleted: [PersistentIdentifier] = []
            for change in last.changes {
                guard case .delete(let delete) = change else {
                    Issue.record("the delete-all transaction holds \(change)")
                    continue
                }
                deleted.append(delete.changedPersistentIdentifier)
            }
            #expect(deleted == ids)
            try store(of: container).close()
        }
        // Reopened: the log replays to the same models and the same live size.
        let container = try ModelContainer(
            for: Reading.self, Station.self, configurations: configuration(directory.store))
        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<Reading>()) == 0)
        #expect(try context.fetchCount(FetchDescriptor<Station>()) == 2)
        #expect(try store(of: container).info.liveByteCount == liveAfterDelete)
        let deletes = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last?.changes.count
        #expect(deletes == ids.count)

        // The stations were all that was left: nothing is live afterwards, in memory and reopened.
        try context.delete(model: Station.self)
        #expect(try store(of: container).info.liveByteCount == 0)
        try store(of: container).close()
        let reopened = try ModelContainer(
            for: Reading.self, Station.self, configurations: configuration(directory.store))
        #expect(try ModelContext(reopened).fetchCount(FetchDescriptor<Station>()) == 0)
        #expect(try store(of: reopened).info.liveByteCount == 0)
    }
}
