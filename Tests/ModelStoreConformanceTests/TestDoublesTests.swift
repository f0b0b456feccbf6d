import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreConformance
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// A model of the author's own, as an adapter's tests would define it (the suite's fixtures are not public).
final class Reading: PersistentModel {
    @Attribute var station: String = ""
    @Attribute var value: Int = 0

    let persistentBackingData = BackingData()
    init() {}

    convenience init(_ station: String, _ value: Int) {
        self.init()
        self.station = station
        self.value = value
    }
}

/// The suite's test doubles, used the way an adapter author would use them in the adapter's own tests:
/// the reference store as an oracle, the spy to see what the context pushes, the fallback store to
/// force the context's in-memory path, and `ForwardingStore` to build a double of one's own.
struct TestDoublesTests {
    static let schema = Schema([Reading.self])
    static let readings = [("north", 7), ("south", 3), ("north", 12), ("east", 7), ("west", 1)]

    /// Opens a container over `configuration` holding ``readings``.
    static func seeded(_ configuration: some DataStoreConfiguration) throws -> ModelContainer {
        let container = try ModelContainer(for: schema, configurations: [configuration])
        let context = ModelContext(container)
        for (station, value) in readings { context.insert(Reading(station, value)) }
        try context.save()
        return container
    }

    static let descriptor = FetchDescriptor<Reading>(
        predicate: #Predicate { $0.value >= 3 && $0.station != "east" },
        sortBy: [SortDescriptor(\.value, order: .reverse)])

    static func answer(_ container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(descriptor).map { "\($0.station)=\($0.value)" }
    }

    /// The reference store is an oracle: the adapter under test must answer a query as it does.
    @Test func referenceStoreIsAnOracleForAnAdaptersAnswers() throws {
        let expected = try Self.answer(Self.seeded(ReferenceStoreConfiguration()))
        #expect(expected == ["north=12", "north=7", "south=3"])
        #expect(try Self.answer(Self.seeded(InMemoryStoreConfiguration())) == expected)
    }

    /// The spy shows what the context pushed to the wrapped store and that the store refused nothing.
    @Test func spyRecordsWhatTheContextPushes() throws {
        let log = SpyLog()
        let container = try Self.seeded(SpyConfiguration(inner: InMemoryStoreConfiguration(), log: log))
        log.reset()
        #expect(try Self.answer(container).count == 3)
        let fetch = try #require(log.all.first, "the spy recorded no fetch")
        #expect(fetch.entityName == "Reading")
        #expect(fetch.hadFilter && fetch.hadSort)
        #expect(fetch.filterKinds.contains(.ordering) && fetch.filterKinds.contains(.equality))
        #expect(fetch.refusal == nil, "the in-memory store refused what it declares it runs")
    }

    /// Behind the fallback store every predicate and sort is refused, the context evaluates them in
    /// memory, and the answer is the same; a spy around it records the refusal.
    @Test func fallbackStoreForcesTheInMemoryPathWithTheSameAnswer() throws {
        let log = SpyLog()
        let container = try Self.seeded(
            SpyConfiguration(inner: FallbackConfiguration(inner: InMemoryStoreConfiguration()), log: log))
        log.reset()
        #expect(try Self.answer(container) == Self.answer(Self.seeded(ReferenceStoreConfiguration())))
        #expect(log.all.first?.refusal == .preferInMemoryFilter, "\(log.all.map(\.refusal))")
        #expect(log.all.contains { $0.refusal == nil }, "the context did not fetch again without the predicate")
    }

    /// An author's own double: `ForwardingStore` forwards everything it does not implement, so a store
    /// that fails its saves on demand (ModelStoreTestSupport's `SaveHookStore`) implements only its save
    /// and the fetches.
    @Test func forwardingStoreBuildsAnAuthorsOwnDouble() throws {
        let hook = SaveHook()
        let container = try Self.seeded(SaveHookConfiguration(inner: InMemoryStoreConfiguration(), hook: hook))
        let context = ModelContext(container)
        hook.beforeEverySave {
            throw DataStoreError(.io, "the failing store fails its saves on purpose", remedy: "Clear its hook")
        }
        context.insert(Reading("lost", 99))
        #expect(throws: DataStoreError.self) { try context.save() }
        context.rollback()
        hook.clear()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Reading>()) == Self.readings.count)
        #expect(try Self.answer(container) == ["north=12", "north=7", "south=3"], "fetches were not forwarded")
    }
}
