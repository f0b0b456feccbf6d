import Foundation
import ModelStore

/// What the suite reads from the type of store an adapter's configurations create: read once for
/// all the cases of one ``ConformanceSuite/cases(for:groups:)``, when a case first needs it.
///
/// It makes one configuration in a scratch directory, removed at once, and reads the configuration's
/// `Store` type, which is the type of every store the cases open; it opens no store.
final class StoreTypeReading: Sendable {
    /// What was read.
    struct Reading: Sendable {
        /// The store type's name, for messages; `nil` when no configuration could be made.
        let storeName: String?
        /// The ``ConformanceCapabilities/observable`` capabilities the store type conforms to;
        /// `nil` when no configuration could be made.
        let observed: ConformanceCapabilities?
    }

    private let adapter: ConformanceAdapter
    private let reading = LockedValue<Reading?>(nil)

    init(_ adapter: ConformanceAdapter) { self.adapter = adapter }

    /// The reading, made on first use.
    var value: Reading {
        reading.withLock { cached in
            if let cached { return cached }
            let made = Self.read(adapter)
            cached = made
            return made
        }
    }

    /// The capabilities a case of the adapter runs with: the ``ConformanceCapabilities/observable``
    /// ones the store type conforms to, and the others the adapter declares (a declared observable
    /// one the store lacks is left out, and its `declarations` case fails). When no configuration
    /// could be made, every observable one counts as present, so the cases run and fail on the
    /// adapter's own error instead of being skipped for it.
    var capabilities: ConformanceCapabilities {
        let declared = adapter.capabilities.subtracting(.observable)
        return declared.union(value.observed ?? .observable)
    }

    private static func read(_ adapter: ConformanceAdapter) -> Reading {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ModelStoreConformance-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func storeType<C: DataStoreConfiguration>(_: C) -> any DataStore.Type { C.Store.self }
        do {
            let storeDirectory = directory.appendingPathComponent("store", isDirectory: true)
            try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
            let type = storeType(try adapter.makeConfiguration(storeDirectory))
            return Reading(storeName: "\(type)", observed: ConformanceCapabilities.observed(in: type))
        } catch {
            return Reading(storeName: nil, observed: nil)
        }
    }
}
