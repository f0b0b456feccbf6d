import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreConformance
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// A model whose values are all read in line, so a large insert of it is saved in chunks.
final class Subscriber: PersistentModel {
    @Attribute(.unique) var email: String = ""
    @Attribute var name: String = ""
    @Attribute var age: Int = 0
    @Attribute var score: Double = 0
    @Attribute var joined: Date = Date(timeIntervalSinceReferenceDate: 0)

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ index: Int) {
        self.init()
        email = "user-\(index)@example.com"
        name = "User \(index)"
        age = index % 90
        score = Double(index) / 4
        joined = Date(timeIntervalSinceReferenceDate: Double(index))
    }
}

/// What a ``ChunkProbeStore`` saw of the save requests it passed on.
final class ChunkProbe: Sendable {
    struct Seen {
        var chunkSizes: [[Int]] = []
        var inserted: [[PersistentIdentifier]] = []
        var kept: [DataStoreSaveChangesRequest<DefaultSnapshot>] = []
    }
    let seen = LockedValue(Seen())
    /// Whether the store reads ``DataStoreSaveChangesRequest/inserted`` before it saves, as an
    /// adapter written before the chunks does.
    let readsInserted: Bool
    /// Whether the store keeps each request after the save.
    let keepsRequests: Bool

    init(readsInserted: Bool = false, keepsRequests: Bool = false) {
        self.readsInserted = readsInserted
        self.keepsRequests = keepsRequests
    }
}

/// Configures a ``ChunkProbeStore`` over an in-memory store.
struct ChunkProbeConfiguration: DataStoreConfiguration {
    typealias Store = ChunkProbeStore
    var inner: InMemoryStoreConfiguration
    let probe: ChunkProbe
    var name: String { inner.name }
    var schema: Schema? {
        get { inner.schema }
        set { inner.schema = newValue }
    }
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.inner == rhs.inner }
    func hash(into hasher: inout Hasher) { hasher.combine(inner) }
}

/// An in-memory store that records how each save request gives its inserted snapshots.
final class ChunkProbeStore: ForwardingStore {
    typealias Snapshot = DefaultSnapshot
    typealias Inner = InMemoryStoreConfiguration
    let inner: InMemoryStore
    let configuration: ChunkProbeConfiguration

    init(_ configuration: ChunkProbeConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        inner = try InMemoryStore(configuration.inner, migrationPlan: migrationPlan)
        self.configuration = configuration
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<
        DefaultSnapshot
    > {
        let probe = configuration.probe
        var sizes: [Int] = []
        request.forEachInsertedChunk { sizes.append($0.count) }
        let inserted = probe.readsInserted ? request.inserted.map(\.persistentIdentifier) : []
        probe.seen.withLock {
            $0.chunkSizes.append(sizes)
            $0.inserted.append(inserted)
            if probe.keepsRequests { $0.kept.append(request) }
        }
        return try inner.save(request)
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, Snapshot> {
        try inner.fetch(request)
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try inner.fetchCount(request)
    }

    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        try inner.fetchIdentifiers(request)
    }
}

/// Querying and enforcing uniqueness as the in-memory store does, so saves take the same paths.
extension ChunkProbeStore: DataStoreQuerying {
    var queryCapabilities: QueryCapabilities { inner.queryCapabilities }
}

/// The in-memory store's history.
extension ChunkProbeStore: HistoryProviding {
    func fetchHistory(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>
    ) throws -> [DefaultHistoryTransaction] {
        try inner.fetchHistory(descriptor)
    }

    func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try inner.deleteHistory(descriptor)
    }
}

/// A save of many new models whose store reads their snapshots a chunk at a time.
struct ChunkedInsertSaveTests {
    static let count = 20_000

    private func container(probe: ChunkProbe) throws -> ModelContainer {
        try ModelContainer(
            for: Subscriber.self,
            configurations: ChunkProbeConfiguration(
                inner: InMemoryStoreConfiguration(historyLimit: nil), probe: probe))
    }

    private func insertSubscribers(into context: ModelContext, _ range: Range<Int>) -> [Subscriber] {
        range.map { index in
            let subscriber = Subscriber(index)
            context.insert(subscriber)
            return subscriber
        }
    }

    @Test func theStoreReadsTheInsertedSnapshotsInChunks() throws {
        let probe = ChunkProbe()
        let context = ModelContext(try container(probe: probe))
        _ = insertSubscribers(into: context, 0..<Self.count)
        try context.save()
        let sizes = try #require(probe.seen.withLock { $0.chunkSizes.first })
        #expect(sizes.count == 3, "20,000 snapshots in chunks of 8,192, not in one array: \(sizes)")
        #expect(sizes.reduce(0, +) == Self.count)
        #expect(sizes.allSatisfy { $0 <= 8_192 })
    }

    @Test func theStoreAndHistoryHoldEveryModelAsSaved() throws {
        let context = ModelContext(try container(probe: ChunkProbe()))
        let subscribers = insertSubscribers(into: context, 0..<Self.count)
        let posted = LockedValue<[PersistentIdentifier]?>(nil)
        let observer = NotificationCenter.default.addObserver(
            forName: ModelContext.didSave, object: context, queue: nil
        ) { notification in
            let inserted = notification.userInfo?[ModelContext.NotificationKey.insertedIdentifiers.rawValue]
            posted.withLock { $0 = inserted as? [PersistentIdentifier] }
        }
        try context.save()
        NotificationCenter.default.removeObserver(observer)
        #expect(!context.hasChanges && context.insertedModelsArray.isEmpty)
        let ids = subscribers.map(\.persistentModelID)
        #expect(posted.withLock { $0 } == ids, "didSave names every inserted model, in order")
        #expect(ids.allSatisfy { !$0.isTemporary })
        #expect(Set(ids).count == Self.count)

        // A fresh context reads what the store holds.
        let reader = ModelContext(context.container)
        let stored = try reader.fetch(
            FetchDescriptor<Subscriber>(sortBy: [SortDescriptor(\.age), SortDescriptor(\.score)]))
        #expect(stored.count == Self.count)
        let byID = Dictionary(uniqueKeysWithValues: stored.map { ($0.persistentModelID, $0) })
        for (index, id) in ids.enumerated() {
            let model = try #require(byID[id])
            #expect(model.email == "user-\(index)@example.com" && model.name == "User \(index)")
            #expect(model.age == index % 90 && model.score == Double(index) / 4)
            #expect(model.joined == Date(timeIntervalSinceReferenceDate: Double(index)))
        }

        // One transaction, inserting every model, in order.
        let transactions = try reader.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(transactions.count == 1)
        #expect(transactions.first?.changes.map(\.changedPersistentIdentifier) == ids)

        // The saved models keep working: a change is saved and read back.
        subscribers[10_000].name = "Renamed"
        try context.save()
        let renamed = try ModelContext(context.container).fetch(
            FetchDescriptor<Subscriber>(predicate: #Predicate { $0.name == "Renamed" }))
        #expect(renamed.map(\.persistentModelID) == [ids[10_000]])
    }

    @Test func aSaveThatFailsInALaterChunkChangesNothing() throws {
        let probe = ChunkProbe()
        let context = ModelContext(try container(probe: probe))
        context.duplicateInsertPolicy = .error
        let first = Subscriber(15_000)
        context.insert(first)
        try context.save()
        let before = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())

        // The duplicate of a stored email is in the second chunk, after the first went into the table.
        let subscribers = insertSubscribers(into: context, 0..<Self.count)
        #expect(throws: DataStoreError.self) { try context.save() }
        #expect(probe.seen.withLock { $0.chunkSizes.last?.count } == 3, "the failed save was read in chunks")

        let reader = ModelContext(context.container)
        #expect(try reader.fetchCount(FetchDescriptor<Subscriber>()) == 1)
        let after = try reader.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(after.map(\.token) == before.map(\.token))
        #expect(context.hasChanges)
        #expect(subscribers.allSatisfy { $0.persistentModelID.isTemporary })

        // Once the duplicate goes, the same save goes through whole.
        context.delete(subscribers[15_000])
        try context.save()
        #expect(try reader.fetchCount(FetchDescriptor<Subscriber>()) == Self.count)
        #expect(
            subscribers.enumerated().allSatisfy { $0.offset == 15_000 || !$0.element.persistentModelID.isTemporary })
    }

    /// Saves `count` new subscribers through `probe`; returns the context, the models and their
    /// temporary identifiers.
    private func saveSubscribers(
        through probe: ChunkProbe
    ) throws -> (context: ModelContext, subscribers: [Subscriber], temporary: [PersistentIdentifier]) {
        let context = ModelContext(try container(probe: probe))
        let subscribers = insertSubscribers(into: context, 0..<Self.count)
        let temporary = subscribers.map(\.persistentModelID)
        try context.save()
        return (context, subscribers, temporary)
    }

    @Test func aStoreThatReadsInsertedSeesEverySnapshot() throws {
        let probe = ChunkProbe(readsInserted: true)
        let (context, _, temporary) = try saveSubscribers(through: probe)
        let read = try #require(probe.seen.withLock { $0.inserted.first })
        #expect(read == temporary)
        #expect(try ModelContext(context.container).fetchCount(FetchDescriptor<Subscriber>()) == Self.count)
    }

    @Test func aRequestAStoreKeptStillReadsTheTemporaryIdentifiers() throws {
        let probe = ChunkProbe(keepsRequests: true)
        let (_, subscribers, temporary) = try saveSubscribers(through: probe)
        let kept = try #require(probe.seen.withLock { $0.kept.first })
        #expect(kept.insertedCount == Self.count)
        #expect(kept.inserted.map(\.persistentIdentifier) == temporary)
        let emails = kept.inserted.map { snapshot -> String? in
            if case .string(let email) = snapshot["email"] { email } else { nil }
        }
        #expect(emails == subscribers.map(\.email))
        #expect(subscribers.allSatisfy { !$0.persistentModelID.isTemporary })
    }
}
