import Foundation
import ModelStore

/// An adapter under test: how to open it, what it supports that its store's types cannot show,
/// and where it knowingly differs.
///
/// ```swift
/// extension ConformanceAdapter {
///     static let myStore = ConformanceAdapter(
///         name: "MyStore",
///         capabilities: [.durability, .erase]
///     ) { directory in
///         MyStoreConfiguration(url: directory.appending(path: "data.mystore"))
///     }
/// }
/// ```
///
/// The suite calls ``makeConfiguration`` once per store it needs, each time with an empty
/// temporary directory that belongs to one case, and calls it again with the *same* directory to
/// reopen a durable store. The configuration's schema is left `nil`: the suite's container
/// injects the fixture schema (``ConformanceSuite/fixtureSchema``), as an app's container would.
///
/// What the store says about itself is not declared here: the suite reads it from the store.
/// Its protocol conformances give batching, two-phase saves and history
/// (``ConformanceCapabilities/observable``), read from the type of store the configuration
/// creates. What a querying store runs natively comes from the store it opens, in the store's own
/// vocabulary (`DataStoreQuerying.queryCapabilities`, whose `StoreFilter.Kinds` name the filters it
/// runs): the suite checks that the store applies every filter those capabilities call exact,
/// never refuses a predicate made only of kinds they declare, and gives the same results as the
/// context's in-memory evaluation for everything else. Only what no type shows is declared in
/// ``capabilities``.
public struct ConformanceAdapter: Sendable {
    /// The adapter's name, used in skip reasons and failure messages.
    public var name: String
    /// What the adapter declares about its store that the store's types cannot show: durability,
    /// multi-process access, migrations, custom migration stages, `erase()` and external storage.
    /// Cases that need one it does not declare are reported as skipped.
    ///
    /// The ``ConformanceCapabilities/observable`` capabilities (batching, two-phase saves, history)
    /// need not be declared: the suite reads them from the store's protocol conformances. Declaring
    /// one is allowed and checked: a store that does not conform fails the `declarations` case of
    /// that capability.
    public var capabilities: ConformanceCapabilities
    /// Known divergences: case identifiers (``ConformanceCase/id``) or whole group names
    /// (``ConformanceGroup/rawValue``), each with the reason the adapter differs.
    ///
    /// A listed case that fails is reported as ``ConformanceOutcome/expectedFailure(reason:failure:)``;
    /// one that passes fails, so stale declarations are noticed; a name that matches no case fails
    /// the `declarations.expectedFailuresNameRealCases` case.
    public var expectedFailures: [String: String]
    /// Returns the configuration of a store that lives in `directory`.
    ///
    /// MUST return a configuration whose store keeps all of its files inside `directory`, so the
    /// suite can clean up and reopen it. Called with the same directory again, it MUST open the
    /// same data (for adapters that declare ``ConformanceCapabilities/durability``). The suite also
    /// calls it once, with a scratch directory it removes at once, to read the type of store the
    /// configuration creates; it opens no store for that.
    public var makeConfiguration: @Sendable (_ directory: URL) throws -> any DataStoreConfiguration

    /// Declares an adapter for the suite.
    ///
    /// - Parameters:
    ///   - name: the adapter's name, for messages.
    ///   - capabilities: what the adapter supports that its store's types cannot show (none by
    ///     default); see ``ConformanceCapabilities``.
    ///   - expectedFailures: known divergences by case identifier or group name, with reasons.
    ///   - makeConfiguration: the configuration of a store kept in the given directory.
    public init(
        name: String,
        capabilities: ConformanceCapabilities = [],
        expectedFailures: [String: String] = [:],
        makeConfiguration: @escaping @Sendable (_ directory: URL) throws -> any DataStoreConfiguration
    ) {
        self.name = name
        self.capabilities = capabilities
        self.expectedFailures = expectedFailures
        self.makeConfiguration = makeConfiguration
    }

    /// The reason a case is declared to fail, if it is (by its identifier, else by its group).
    func expectedFailureReason(for id: String, group: ConformanceGroup) -> String? {
        expectedFailures[id] ?? expectedFailures[group.rawValue]
    }
}

/// What an adapter supports, beyond the core contract every adapter must meet.
///
/// Every case that needs one of these is skipped, with the reason, for an adapter that lacks it.
/// The capabilities come from two places:
///
/// - **Read from the store** (``observable``): ``batching``, ``twoPhaseSaves`` and ``history``
///   are protocol conformances (`DataStoreBatching`, `DataStoreTwoPhaseSaving`,
///   `HistoryProviding`), so the suite reads them from the type of store the adapter's
///   configuration creates. Leave them out of ``ConformanceAdapter/capabilities``; a declared one
///   is checked against the store, and a store that does not conform fails the case
///   `declarations.batchingMatchesConformance` (or its two-phase saves or history twin).
/// - **Declared** (everything else): behaviour no protocol shows. ``durability`` and
///   ``multiProcessAccess`` are what the store does with its files; an in-memory store and a file
///   store conform to the same protocols. ``migrations`` and ``customMigrationStages`` happen inside
///   the `init` every store has, which receives the plan whether or not the store records a schema
///   version to migrate from. ``erase`` is a requirement of every `DataStore`, whose default throws
///   `unsupportedFeature`, so no type tells a store that erases from one that does not (the suite
///   calls `erase()` on a new store to check the declaration). ``externalStorage`` is a schema
///   option every store receives; whether it keeps multi-megabyte values is not in its type.
public struct ConformanceCapabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The capability bits.
    public let rawValue: Int
    /// Creates capabilities from bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The store conforms to `DataStoreBatching`: delete, update and insert by identifier. Read
    /// from the store; need not be declared.
    public static let batching = ConformanceCapabilities(rawValue: 1 << 0)
    /// The store conforms to `HistoryProviding`: it records history (transactions, changes,
    /// tokens). Read from the store; need not be declared.
    public static let history = ConformanceCapabilities(rawValue: 1 << 1)
    /// Saved data survives closing the container and opening the same directory again. Declared.
    public static let durability = ConformanceCapabilities(rawValue: 1 << 2)
    /// Two stores opened on the same directory at once see each other's saves and never lose one.
    /// Declared.
    public static let multiProcessAccess = ConformanceCapabilities(rawValue: 1 << 3)
    /// The store migrates data of an older schema version when it opens it: added, removed and
    /// renamed (`originalName`) properties, as a plan's lightweight stages describe. Declared.
    public static let migrations = ConformanceCapabilities(rawValue: 1 << 4)
    /// The store keeps multi-megabyte `.externalStorage` attributes, replaces and deletes them.
    /// Declared.
    public static let externalStorage = ConformanceCapabilities(rawValue: 1 << 5)
    /// The store implements `erase()` (the protocol's default throws `unsupportedFeature`). Declared,
    /// and checked: a new store's `erase()` must work exactly when this is declared.
    public static let erase = ConformanceCapabilities(rawValue: 1 << 6)
    /// The store runs a migration plan's custom stages (`willMigrate` on the old data, `didMigrate`
    /// on the new). A store with ``migrations`` but not this MUST refuse a plan with a custom stage.
    /// Declared.
    public static let customMigrationStages = ConformanceCapabilities(rawValue: 1 << 7)
    /// The store conforms to `DataStoreTwoPhaseSaving`, so a context can save across it and other
    /// stores all or nothing. Without it, a save that spans the store and another fails before
    /// anything is written. Read from the store; need not be declared.
    public static let twoPhaseSaves = ConformanceCapabilities(rawValue: 1 << 8)

    /// Every capability, for a store that does everything.
    public static let all: ConformanceCapabilities = [
        .batching, .history, .durability, .multiProcessAccess, .migrations, .externalStorage, .erase,
        .customMigrationStages, .twoPhaseSaves,
    ]

    /// The capabilities the suite reads from the store's protocol conformances (``batching``,
    /// ``twoPhaseSaves``, ``history``), so an adapter need not declare them.
    public static let observable = ConformanceCapabilities(ObservableCapability.all.map(\.capability))

    static let names: [(ConformanceCapabilities, String)] = [
        (.batching, "batching"), (.history, "history"), (.durability, "durability across reopen"),
        (.multiProcessAccess, "multi-process access"), (.migrations, "migrations"),
        (.externalStorage, "external storage"), (.erase, "erase()"),
        (.customMigrationStages, "custom migration stages"), (.twoPhaseSaves, "two-phase saves"),
    ]

    /// The capabilities' names, comma-separated.
    public var description: String {
        let named = Self.names.filter { contains($0.0) }.map(\.1)
        return named.isEmpty ? "none" : named.joined(separator: ", ")
    }

    /// The ``observable`` capabilities a store type's protocol conformances show.
    static func observed(in storeType: any DataStore.Type) -> ConformanceCapabilities {
        ObservableCapability.all.reduce(into: []) { found, item in
            if item.conforms(storeType) { found.insert(item.capability) }
        }
    }
}

/// A capability the store's protocol conformances show: the one table the suite reads them from,
/// derives them with, and checks declarations against.
struct ObservableCapability: Sendable {
    let capability: ConformanceCapabilities
    /// The capability's name in a declaration (`.batching`).
    let name: String
    let protocolName: String
    /// The identifier of the `declarations` case that checks a declaration of it.
    let caseName: String
    let conforms: @Sendable (any DataStore.Type) -> Bool

    static let all: [ObservableCapability] = [
        ObservableCapability(
            capability: .batching, name: "batching", protocolName: "DataStoreBatching",
            caseName: "batchingMatchesConformance", conforms: { $0 is any DataStoreBatching.Type }),
        ObservableCapability(
            capability: .twoPhaseSaves, name: "twoPhaseSaves", protocolName: "DataStoreTwoPhaseSaving",
            caseName: "twoPhaseSavesMatchConformance", conforms: { $0 is any DataStoreTwoPhaseSaving.Type }),
        ObservableCapability(
            capability: .history, name: "history", protocolName: "HistoryProviding",
            caseName: "historyMatchesConformance", conforms: { $0 is any HistoryProviding.Type }),
    ]
}
