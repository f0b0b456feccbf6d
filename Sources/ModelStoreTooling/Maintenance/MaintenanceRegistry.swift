import Foundation
import ModelStore

/// What each URL scheme's adapter offers tools, by scheme name: the tooling side of
/// `StoreRegistry`, which knows only how to open stores.
///
/// An adapter registers its maintenance with its scheme, usually in one expression:
///
/// ```swift
/// StoreRegistry.shared.register(.entityFiles.maintained(by: EntityFilesMaintenance(schema: schema)))
/// ```
///
/// A tool then asks `StoreScheme.maintenance` of the scheme a URL names.
public final class MaintenanceRegistry: Sendable {
    /// The registry tools read, shared by the process.
    public static let shared = MaintenanceRegistry()

    private let entries = LockedValue<[String: any DataStoreMaintenance]>([:])

    /// An empty registry; tools use ``shared``.
    public init() {}

    /// Registers `maintenance` for the stores of the scheme named `schemeName` (lowercase, no colon),
    /// replacing what was registered for it before.
    public func register(_ maintenance: any DataStoreMaintenance, forScheme schemeName: String) {
        entries.withLock { $0[schemeName.lowercased()] = maintenance }
    }

    /// What was registered for the scheme named `schemeName`, if anything.
    public func maintenance(forScheme schemeName: String) -> (any DataStoreMaintenance)? {
        entries.withLock { $0[schemeName.lowercased()] }
    }
}

extension StoreScheme {
    /// What the scheme's adapter offers tools for its stores (see ``DataStoreMaintenance``): what was
    /// registered with ``maintained(by:)``, or, for a scheme that only reads its stored schema, the
    /// protocol's defaults over that reader; `nil` for a scheme that does neither (`memory:`).
    public var maintenance: (any DataStoreMaintenance)? {
        MaintenanceRegistry.shared.maintenance(forScheme: name)
            ?? readStoredSchema.map(SchemaReadingMaintenance.init(read:))
    }

    /// The same scheme, with what its adapter offers tools: registers `maintenance` for the scheme's
    /// name in ``MaintenanceRegistry/shared``, and makes the maintenance's
    /// ``DataStoreMaintenance/storedSchema(_:)`` the scheme's `StoreScheme.readStoredSchema`.
    public func maintained(by maintenance: any DataStoreMaintenance) -> StoreScheme {
        MaintenanceRegistry.shared.register(maintenance, forScheme: name)
        let makeConfiguration = self.makeConfiguration
        return readingStoredSchema { url in
            try maintenance.storedSchema(
                StoreMaintenanceRequest(name: url.description, url: url, configuration: try makeConfiguration(url)))
        }
    }
}

/// The maintenance of a scheme that only reads its stored schema: the defaults for the rest.
private struct SchemaReadingMaintenance: DataStoreMaintenance {
    let read: @Sendable (StoreURL) throws -> Schema.Description

    func storedSchema(_ request: StoreMaintenanceRequest) throws -> Schema.Description {
        try read(request.url)
    }
}
