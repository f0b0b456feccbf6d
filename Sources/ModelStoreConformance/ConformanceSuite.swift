import Foundation
import ModelStore

/// The conformance suite: every check an adapter must pass, as cases for one parameterized test.
///
/// ```swift
/// import ModelStoreConformance
/// import Testing
///
/// struct MyStoreConformance {
///     @Test(arguments: ConformanceSuite.cases(for: .myStore))
///     func conformance(_ testCase: ConformanceCase) throws {
///         try testCase.run()
///     }
/// }
/// ```
///
/// Each case opens fresh stores through the adapter's factory in its own temporary directory,
/// works through a `ModelContainer` on the fixture schema (``fixtureSchema``) or drives the
/// store directly, and removes the directory when it ends, passed or failed.
public enum ConformanceSuite {
    /// Every case of the suite for an adapter, optionally only those of some groups, in a stable order.
    ///
    /// Cases that need capabilities the adapter lacks (its store's type does not conform to them, or
    /// the adapter does not declare them; see ``ConformanceCapabilities``) are included and report
    /// ``ConformanceOutcome/skipped(reason:)`` when run, so nothing is silently left out. The store's
    /// type is read once for the returned cases, when the first of them needs it.
    public static func cases(
        for adapter: ConformanceAdapter, groups: Set<ConformanceGroup>? = nil
    ) -> [ConformanceCase] {
        let storeType = StoreTypeReading(adapter)
        return
            definitions
            .filter { groups?.contains($0.group) ?? true }
            .map { ConformanceCase(definition: $0, adapter: adapter, storeType: storeType) }
    }

    /// The identifiers of every case, for declaring expected failures.
    public static var caseIdentifiers: [String] {
        definitions.map { "\($0.group.rawValue).\($0.name)" }
    }

    /// The schema of the fixture models every case stores: seven entities with every supported
    /// value type, optionals, to-one and to-many relationships, a chain three levels deep with cascade,
    /// nullify, deny and no-action rules, unique attributes and a compound uniqueness constraint.
    public static var fixtureSchema: Schema { Fixtures.schema }

    /// The registered case lists, in run order: one entry per file of `Cases/`.
    ///
    /// To add cases, write `enum MyCases { static let all: [CaseDefinition] = [...] }` in a new file of
    /// `Cases/` (each definition names its ``ConformanceGroup``) and add `MyCases.all` to this list;
    /// nothing else needs to change. Case identifiers (`group.name`) must stay unique, which
    /// `ConformanceCaseTests` checks.
    static let registered: [[CaseDefinition]] = [
        DeclarationCases.all, CRUDCases.all, IdentifierCases.all, FetchCases.all, PendingChangesCases.all,
        RelationshipCases.all, UniquenessCases.all, BatchCases.all, PersistenceCases.all, EraseCases.all,
        ContextCases.all, ErrorCases.all, StoreContractCases.all, QueryingCases.all, PushDownCases.all,
        ExternalStorageCases.all, MultiProcessCases.all, HistoryCases.all, MigrationCases.all,
        GraphIntegrityCases.all, ContractRuleCases.all, ValueCases.all, FidelityCases.all, RandomizedCases.all,
        InheritanceCases.all,
    ]

    /// Every case definition, group by group.
    static let definitions: [CaseDefinition] = registered.flatMap { $0 }
}

/// A group of related conformance cases.
public enum ConformanceGroup: String, CaseIterable, Sendable, Hashable {
    /// The adapter's declarations match what its store does.
    case declarations
    /// Insert, fetch, update and delete, and every value type round-tripping.
    case crud
    /// The value corpus: extreme, precise, equivalent and empty values of every attribute type, round-tripping
    /// exactly and going through every operator, membership list, sort and count as Swift evaluates them.
    case values
    /// Temporary identifiers remapped to permanent ones, references to models saved together, cycles.
    case identifiers
    /// Predicates, stable sorts, offset and limit, counts and identifiers that agree with fetch.
    case fetch
    /// `includePendingChanges`: unsaved inserts, changes and deletes in fetches.
    case pendingChanges
    /// To-one and to-many relationships and every delete rule.
    case relationships
    /// Unique attributes and compound constraints: the typed error, and nothing of the save stored.
    case uniqueness
    /// Batch delete, update and insert.
    case batch
    /// Data surviving close and reopen, and failed opens that write nothing.
    case persistence
    /// `erase()`.
    case erase
    /// Two contexts on one container.
    case contexts
    /// Errors: the right `DataStoreError` codes, naming the right things, never leaking values.
    case errors
    /// The `DataStore` contract, driving the store directly with requests.
    case storeContract
    /// A seeded random run of inserts, updates, deletes, relationship changes, batches, reopens and queries
    /// over the value corpus, compared step by step with the reference store and shrunk on a difference.
    case differential
    /// The differential oracle: a predicate corpus run pushed, through the fallback, and on a
    /// reference store, with identical results.
    case pushDown
    /// Large `.externalStorage` attributes.
    case externalStorage
    /// Two stores on the same directory at once.
    case multiProcess
    /// History transactions, changes and tokens.
    case history
    /// Schema migrations on open.
    case migrations
    /// No silent data loss: deletes of new models, rollback of both sides, to-many as a set,
    /// changes between equal but differently stored values, two-phase saves.
    case graphIntegrity
    /// Model classes with subclasses: fetches across and within classes, type tests, relationships
    /// to a base class, cascades and uniqueness across the hierarchy, and reopening.
    case inheritance
}

/// A case before it is bound to an adapter.
struct CaseDefinition: Sendable {
    let group: ConformanceGroup
    let name: String
    let summary: String
    let requirements: ConformanceCapabilities
    let unavailableReason: String?
    let body: @Sendable (CaseEnvironment) throws -> Void

    init(
        _ group: ConformanceGroup, _ name: String, _ summary: String,
        requires requirements: ConformanceCapabilities = [],
        unavailable unavailableReason: String? = nil, body: @escaping @Sendable (CaseEnvironment) throws -> Void
    ) {
        self.group = group
        self.name = name
        self.summary = summary
        self.requirements = requirements
        self.unavailableReason = unavailableReason
        self.body = body
    }
}
