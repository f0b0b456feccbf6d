import Foundation
import ModelStore

/// A store named by a URL (on a command line, in a tool): its URL checked against the registry, and
/// what a tool can learn about it without the app's model types.
///
/// A scheme with maintenance (`StoreScheme.maintenance`: the built-in `json:`, `log:` and
/// `sqlite:`, or any scheme that reads its stored schema) is taken to name a file or a directory by
/// its location, unless its maintenance says its stores are not files
/// (``DataStoreMaintenance/storesFiles``, as for `postgres:`), and every command goes through that
/// maintenance.
public struct StoreReference {
    /// The URL as typed, with a password in it replaced by `***` (`StoreURL.redacted`): what
    /// reports and messages show.
    public let string: String
    /// The parsed URL.
    public let url: StoreURL
    /// The URL's registered scheme.
    public let scheme: StoreScheme

    /// Parses and checks a store URL against `registry`; throws `invalidConfiguration` naming the
    /// string and listing the registered schemes. A program that links `ModelStoreAdapters` has the
    /// built-in schemes registered.
    public init(_ string: String, registry: StoreRegistry = .shared) throws {
        url = try registry.url(string)
        guard let scheme = registry.scheme(named: url.scheme) else {
            throw DataStoreError(
                .unsupportedFeature, "the scheme '\(url.scheme):' of '\(string)' is not registered",
                remedy: "Use 'json:PATH' or 'log:DIR'")
        }
        self.string = url.redacted
        self.scheme = scheme
    }

    /// Whether the URL names a store that lives only in one process's memory: `memory:`, or the
    /// private in-memory database `sqlite::memory:` (whose location is SQLite's name, not a path).
    public var isInMemory: Bool {
        scheme.name == "memory" || (scheme.name == "sqlite" && url.location == ":memory:")
    }

    /// Whether the store is files at the URL's location, as its scheme's maintenance says
    /// (``DataStoreMaintenance/storesFiles``); `false` for a server's store and for a scheme with no
    /// maintenance.
    public var storesFiles: Bool {
        scheme.maintenance?.storesFiles ?? false
    }

    /// The file or directory the store lives at; `nil` for schemes that keep no stored data, and for
    /// stores a server keeps.
    public var path: URL? {
        storesFiles && !url.location.isEmpty && !isInMemory ? url.fileURL : nil
    }

    /// Whether something exists at ``path``.
    public var exists: Bool {
        path.map { FileManager.default.fileExists(atPath: $0.path) } ?? false
    }

    /// The configuration the URL names.
    public func configuration() throws -> any DataStoreConfiguration {
        try scheme.makeConfiguration(url)
    }

    /// The store's path, which must exist; `command` names what the tool was asked to do.
    ///
    /// Throws `DataStoreError.Code.unsupportedFeature` for a scheme whose stores keep nothing a tool
    /// can read (such as `memory:`) and `DataStoreError.Code.notFound` when nothing is at the path.
    public func existingPath(for command: String) throws -> URL {
        guard let path else {
            if scheme.maintenance != nil && !storesFiles {
                throw DataStoreError(
                    .unsupportedFeature, "'\(string)' names a store a server keeps, which has no path to " + command,
                    remedy: "Name a store on disk, such as 'json:PATH', 'log:DIR' or 'sqlite:PATH'")
            }
            if isInMemory {
                throw DataStoreError(
                    .unsupportedFeature,
                    "'\(string)' names an in-memory store, which keeps nothing between processes: there is nothing to "
                        + command,
                    remedy: "Name a store on disk, such as 'json:PATH', 'log:DIR' or 'sqlite:PATH'")
            }
            throw DataStoreError(
                .unsupportedFeature,
                "the scheme '\(scheme.name):' does not tell tools how to read the schema its stores keep, so "
                    + "'\(string)' cannot be opened without the app's model types",
                remedy: "Its adapter can set one with StoreScheme.readingStoredSchema(_:)")
        }
        guard FileManager.default.fileExists(atPath: path.path) else {
            throw DataStoreError(
                .notFound,
                "there is no store at '\(path.path)' (named by '\(string)')",
                remedy: "Check the path; a relative path starts from the current directory, "
                    + "'\(FileManager.default.currentDirectoryPath)'")
        }
        return path
    }

    /// The scheme's maintenance and the request for this store, which must exist; `command`
    /// names what the tool was asked to do (see ``existingPath(for:)``). A store a server keeps is
    /// not looked for here: the maintenance's operations throw `DataStoreError.Code.notFound` when
    /// the server holds none at the URL.
    public func maintenance(for command: String) throws -> (any DataStoreMaintenance, StoreMaintenanceRequest) {
        if let maintenance = scheme.maintenance, !maintenance.storesFiles {
            return (maintenance, StoreMaintenanceRequest(name: string, url: url, configuration: try configuration()))
        }
        _ = try existingPath(for: command)
        guard let maintenance = scheme.maintenance else {
            throw DataStoreError(.unsupportedFeature, "'\(string)' keeps no schema", remedy: "Name a store on disk")
        }
        return (maintenance, StoreMaintenanceRequest(name: string, url: url, configuration: try configuration()))
    }

    /// The schema the store was last written with, read from its own files.
    public func storedSchema(for command: String) throws -> Schema.Description {
        let (maintenance, request) = try maintenance(for: command)
        return try maintenance.storedSchema(request)
    }

    /// Opens the store with a schema built from a stored description, so that it is read and
    /// written as snapshots without the app's model types, with the configuration the scheme's
    /// maintenance asks for (an append log's manual compaction: the tool decides when to compact).
    public func open(schema: Schema) throws -> OpenedStore {
        let maintenance = scheme.maintenance
        var configuration = try configuration()
        configuration = maintenance?.configurationForMaintenance(configuration) ?? configuration
        return try OpenedStore(configuration: configuration, schema: schema, name: string, maintenance: maintenance)
    }

    /// The files the store keeps, with their sizes, as its scheme's maintenance lists them.
    public func filesOnDisk() -> [StoreFile] {
        guard exists, let maintenance = scheme.maintenance, let configuration = try? configuration() else { return [] }
        return maintenance.files(StoreMaintenanceRequest(name: string, url: url, configuration: configuration))
    }
}
