import Foundation
import ModelStore
import ModelStoreConformance
import ModelStoreInMemory
import Testing

/// The capabilities a store's protocol conformances show are read from the store: an adapter that
/// leaves them out gets their cases run, and one that declares them for a store without the
/// conformance fails a case that says so.
struct ObservedCapabilitiesTests {
    /// An observable capability: a case that needs it, the protocol that gives it, and the case that
    /// checks a declaration of it.
    struct Observable: Sendable, CustomStringConvertible {
        let capability: String, caseID: String, protocolName: String, declarations: String
        var description: String { capability }
    }

    static let observable = [
        Observable(
            capability: "batching", caseID: "batch.storeBatchRequests", protocolName: "DataStoreBatching",
            declarations: "declarations.batchingMatchesConformance"),
        Observable(
            capability: "twoPhaseSaves", caseID: "graphIntegrity.twoPhaseSaveContract",
            protocolName: "DataStoreTwoPhaseSaving", declarations: "declarations.twoPhaseSavesMatchConformance"),
        Observable(
            capability: "history", caseID: "history.transactionsRecordEveryChange", protocolName: "HistoryProviding",
            declarations: "declarations.historyMatchesConformance"),
    ]

    static func capability(named name: String) throws -> ConformanceCapabilities {
        let named: [String: ConformanceCapabilities] = [
            "batching": .batching, "twoPhaseSaves": .twoPhaseSaves, "history": .history,
        ]
        return try #require(named[name])
    }

    static func testCase(_ id: String, of adapter: ConformanceAdapter) throws -> ConformanceCase {
        try #require(ConformanceSuite.cases(for: adapter).first { $0.id == id }, "no case '\(id)'")
    }

    /// `InMemoryStore` conforms to all three protocols; this adapter declares none of them.
    static let undeclared = ConformanceAdapter(name: "InMemoryStore, nothing declared", capabilities: [.erase]) { _ in
        InMemoryStoreConfiguration()
    }

    /// A store that conforms to none of the three protocols, whose adapter declares all three.
    static let overstated = ConformanceAdapter(
        name: "plain store, everything declared", capabilities: [.batching, .twoPhaseSaves, .history, .erase]
    ) { _ in
        PlainConfiguration(inner: FallbackConfiguration(inner: ReferenceStoreConfiguration()))
    }

    @Test(arguments: observable)
    func undeclaredCapabilityOfTheStoreRunsItsCases(_ item: Observable) throws {
        let (capability, caseID, protocolName, declarations) =
            (item.capability, item.caseID, item.protocolName, item.declarations)
        let testCase = try Self.testCase(caseID, of: Self.undeclared)
        #expect(testCase.capabilities.contains(try Self.capability(named: capability)), "\(testCase.capabilities)")
        #expect(testCase.skipReason == nil, "\(testCase.skipReason ?? "")")
        let outcome = try testCase.run()
        guard case .passed = outcome else {
            Issue.record("'\(caseID)' did not run on a store conforming to \(protocolName): \(outcome)")
            return
        }
        // Leaving the capability to the store and declaring it as before both pass its declarations case.
        let declaringAll = ConformanceAdapter(name: "InMemoryStore, everything declared", capabilities: .all) { _ in
            InMemoryStoreConfiguration()
        }
        for adapter in [Self.undeclared, declaringAll] {
            guard case .passed = try Self.testCase(declarations, of: adapter).run() else {
                Issue.record("'\(declarations)' failed '\(adapter.name)', whose store conforms to \(protocolName)")
                continue
            }
        }
    }

    @Test(arguments: observable)
    func declaredCapabilityTheStoreLacksFailsClearly(_ item: Observable) throws {
        let (capability, caseID, protocolName, declarations) =
            (item.capability, item.caseID, item.protocolName, item.declarations)
        let failure = #expect(throws: ConformanceFailure.self) {
            try Self.testCase(declarations, of: Self.overstated).run()
        }
        #expect(
            failure?.message.contains(
                "the adapter declares .\(capability), but its store 'PlainStore<FallbackConfiguration<"
                    + "ReferenceStoreConfiguration>>' does not conform to \(protocolName)") == true,
            "\(failure?.description ?? "no failure")")
        // The cases that need it do not run (and fail for the wrong reason): they are skipped, naming the protocol.
        let testCase = try Self.testCase(caseID, of: Self.overstated)
        #expect(!testCase.capabilities.contains(try Self.capability(named: capability)))
        guard case .skipped(let reason) = try testCase.run() else {
            Issue.record("'\(caseID)' ran on a store that does not conform to \(protocolName)")
            return
        }
        #expect(reason.contains("does not conform to (\(protocolName))") && reason.contains("PlainStore"), "\(reason)")
    }

    /// A store conforming to one protocol and not another: each is read on its own, and the adapter's
    /// declared capabilities still gate what no type shows.
    @Test func eachConformanceIsReadOnItsOwn() throws {
        let adapter = ConformanceAdapter(name: "fallback on memory") { _ in
            FallbackConfiguration(inner: InMemoryStoreConfiguration())
        }
        let cases = ConformanceSuite.cases(for: adapter)
        #expect(cases.first?.capabilities == .batching)
        let reasons = Dictionary(uniqueKeysWithValues: cases.map { ($0.id, $0.skipReason) })
        #expect(reasons["batch.storeBatchRequests"] == .some(nil))
        #expect(
            reasons["history.batchChangesAppearInHistory"]
                == "needs history, which the store 'FallbackStore<InMemoryStoreConfiguration>' does not conform to "
                + "(HistoryProviding)")
        #expect(
            reasons["history.tokensResumeAfterReopen"]
                == "needs history, which the store 'FallbackStore<InMemoryStoreConfiguration>' does not conform to "
                + "(HistoryProviding); and durability across reopen, which the adapter 'fallback on memory' does not "
                + "declare")
    }
}

/// A store with none of the optional conformances (not batching, not two-phase, no history, not
/// querying): it forwards everything to the store it wraps.
final class PlainStore<Inner: DataStoreConfiguration>: ForwardingStore {
    typealias Configuration = PlainConfiguration<Inner>
    typealias Snapshot = Inner.Store.Snapshot

    let inner: Inner.Store
    let configuration: PlainConfiguration<Inner>

    init(_ configuration: PlainConfiguration<Inner>, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.inner = try Inner.Store(configuration.inner, migrationPlan: migrationPlan)
        self.configuration = configuration
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, Snapshot> {
        try inner.fetch(request)
    }
}

/// The configuration of a ``PlainStore``.
struct PlainConfiguration<Inner: DataStoreConfiguration>: DataStoreConfiguration {
    typealias Store = PlainStore<Inner>
    var inner: Inner
    var name: String { inner.name }
    var schema: Schema? {
        get { inner.schema }
        set { inner.schema = newValue }
    }
}
