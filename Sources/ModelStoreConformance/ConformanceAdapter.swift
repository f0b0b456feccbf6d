import Foundation
import ModelStore

/// An adapter under test: how to open it, what it supports, and where it knowingly differs.
///
/// ```swift
/// extension ConformanceAdapter {
///     static let myStore = ConformanceAdapter(
///         name: "MyStore",
///         capabilities: [.batching, .durability, .erase]
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
/// What a store runs natively is not declared here: the suite reads it from the store it opens, in
/// the store's own vocabulary (`DataStoreQuerying.queryCapabilities`, whose `StoreFilter.Kinds` name
/// the filters it runs). It checks that the store applies every filter those capabilities call exact,
/// never refuses a predicate made only of kinds they declare, and gives the same results as the
/// context's in-memory evaluation for everything else.
public struct ConformanceAdapter: Sendable {
    /// The adapter's name, used in skip reasons and failure messages.
    public var name: String
    /// What the adapter declares it supports. Cases that need anything else are reported as skipped.
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
    /// same data (for adapters that declare ``ConformanceCapabilities/durability``).
    public var makeConfiguration: @Sendable (_ directory: URL) throws -> any DataStoreConfiguration

    /// Declares an adapter for the suite.
    ///
    /// - Parameters:
    ///   - name: the adapter's name, for messages.
    ///   - capabilities: what the adapter supports; see ``ConformanceCapabilities``.
    ///   - expectedFailures: known divergences by case identifier or group name, with reasons.
    ///   - makeConfiguration: the configuration of a store kept in the given directory.
    public init(
        name: String,
        capabilities: ConformanceCapabilities,
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
/// Every case that needs one of these is skipped, with the reason, for an adapter that does not
/// declare it. Declare only what the adapter really does: the suite checks the declarations it
/// can observe (for example that a store declaring ``batching`` conforms to `DataStoreBatching`).
public struct ConformanceCapabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The capability bits.
    public let rawValue: Int
    /// Creates capabilities from bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The store conforms to `DataStoreBatching`: delete, update and insert by identifier.
    public static let batching = ConformanceCapabilities(rawValue: 1 << 0)
    /// The store records history (transactions, changes, tokens).
    public static let history = ConformanceCapabilities(rawValue: 1 << 1)
    /// Saved data survives closing the container and opening the same directory again.
    public static let durability = ConformanceCapabilities(rawValue: 1 << 2)
    /// Two stores opened on the same directory at once see each other's saves and never lose one.
    public static let multiProcessAccess = ConformanceCapabilities(rawValue: 1 << 3)
    /// The store migrates data of an older schema version when it opens it: added, removed and
    /// renamed (`originalName`) properties, as a plan's lightweight stages describe.
    public static let migrations = ConformanceCapabilities(rawValue: 1 << 4)
    /// The store keeps `.externalStorage` attributes outside its main file.
    public static let externalStorage = ConformanceCapabilities(rawValue: 1 << 5)
    /// The store implements `erase()` (the protocol's default throws `unsupportedFeature`).
    public static let erase = ConformanceCapabilities(rawValue: 1 << 6)
    /// The store runs a migration plan's custom stages (`willMigrate` on the old data, `didMigrate`
    /// on the new). A store with ``migrations`` but not this MUST refuse a plan with a custom stage.
    public static let customMigrationStages = ConformanceCapabilities(rawValue: 1 << 7)
    /// The store conforms to `DataStoreTwoPhaseSaving`, so a context can save across it and other
    /// stores all or nothing. Without it, a save that spans the store and another fails before
    /// anything is written.
    public static let twoPhaseSaves = ConformanceCapabilities(rawValue: 1 << 8)

    /// Every capability, for a store that does everything.
    public static let all: ConformanceCapabilities = [
        .batching, .history, .durability, .multiProcessAccess, .migrations, .externalStorage, .erase,
        .customMigrationStages, .twoPhaseSaves,
    ]

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
}
