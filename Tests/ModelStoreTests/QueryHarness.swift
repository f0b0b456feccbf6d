import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory
import Testing

/// The three ways a fetch can run, which must agree exactly.
enum FetchWay: String, CaseIterable, Sendable {
    /// Pushed to ``InMemoryStore``, which runs everything.
    case pushed
    /// Partially pushed to ``LimitedStore``: some conditions in the store (some inexactly), the rest
    /// on snapshots or models, sort and window in the context.
    case partial
    /// Fully in memory: ``SwiftDataStyleStore`` throws `preferInMemoryFilter`/`preferInMemorySort`,
    /// so `Predicate.evaluate` and `SortDescriptor.compare` run on models.
    case memory
}

extension QueryCapabilities {
    /// What ``LimitedStore`` runs in the differential tests.
    static let partial = QueryCapabilities(
        filters: [.identifiers, .equality, .membership, .negation, .disjunction, .toOneTraversal],
        inexactFilters: [.ordering, .range], sorting: false, offsetAndLimit: false, enforcesUniqueness: true)
}

/// Builds a descriptor in a given context (so identifiers can be looked up per container).
typealias DescriptorBuilder = @Sendable (ModelContext) throws -> FetchDescriptor<Reading>

/// Three containers with the same data, one per ``FetchWay``.
struct QueryHarness: Sendable {
    let containers: [(way: FetchWay, container: ModelContainer)]

    init(
        limited: QueryCapabilities = .partial, seed: (ModelContext) throws -> Void = QueryDataset.seed
    ) throws {
        let schema = Schema([Reading.self, Sensor.self])
        containers = [
            (.pushed, try ModelContainer(for: schema, configurations: [InMemoryStoreConfiguration()])),
            (
                .partial,
                try ModelContainer(
                    for: schema, configurations: [LimitedStore.Configuration(name: "limited", capabilities: limited)])
            ),
            (
                .memory,
                try ModelContainer(for: schema, configurations: [SwiftDataStyleStore.Configuration(name: "swiftdata")])
            ),
        ]
        for (_, container) in containers { try seed(ModelContext(container)) }
    }

    func container(_ way: FetchWay) -> ModelContainer {
        containers.first { $0.way == way }!.container
    }

    /// What one way returns for a descriptor, through every read path.
    struct Outcome: Equatable, CustomStringConvertible {
        var fetched: [String] = []
        var count = 0
        var keys: [PrimaryKey] = []
        var enumerated: [String] = []
        var error: String?

        var description: String {
            if let error { return "error \(error)" }
            return "\(fetched) count \(count) keys \(keys.count) enumerated \(enumerated.count)"
        }
    }

    func outcome(_ way: FetchWay, _ build: DescriptorBuilder) -> Outcome {
        let container = container(way)
        var outcome = Outcome()
        do {
            outcome.fetched = try ModelContext(container).fetch(build(ModelContext(container))).map(\.code)
            outcome.count = try ModelContext(container).fetchCount(build(ModelContext(container)))
            outcome.keys = try ModelContext(container).fetchIdentifiers(build(ModelContext(container))).map(
                \.primaryKey)
            let context = ModelContext(container)
            try context.enumerate(build(context), batchSize: 7) { outcome.enumerated.append($0.code) }
        } catch let error as DataStoreError {
            return Outcome(error: error.code.name)
        } catch {
            return Outcome(error: "\(error)")
        }
        return outcome
    }

    /// Runs a descriptor every way and records an issue unless all agree; returns the pushed outcome.
    @discardableResult
    func expectAgreement(
        _ label: String, sourceLocation: SourceLocation = #_sourceLocation, _ build: DescriptorBuilder
    ) -> Outcome {
        let outcomes = FetchWay.allCases.map { ($0, outcome($0, build)) }
        let reference = outcomes[0].1
        for (way, outcome) in outcomes.dropFirst() {
            #expect(
                outcome == reference, "\(label): \(way) gave \(outcome), pushed gave \(reference)",
                sourceLocation: sourceLocation)
        }
        #expect(
            reference.error != nil || reference.fetched == reference.enumerated,
            "\(label): enumerate differs from fetch",
            sourceLocation: sourceLocation)
        #expect(
            reference.error != nil || reference.count == reference.fetched.count, "\(label): count differs from fetch",
            sourceLocation: sourceLocation)
        return reference
    }
}

/// Identifiers of known models in a context's container.
enum KnownModels {
    static func reading(_ code: String, in context: ModelContext) throws -> PersistentIdentifier {
        try #require(try context.fetch(FetchDescriptor<Reading>()).first { $0.code == code }).persistentModelID
    }

    static func station(_ name: String, in context: ModelContext) throws -> PersistentIdentifier {
        try #require(try context.fetch(FetchDescriptor<Station>()).first { $0.name == name }).persistentModelID
    }
}
