import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreCrypto
import ModelStoreInMemory
import ModelStoreJSONFile
import ModelStoreSQLite

/// SwiftData's `ModelConfiguration`: a store described by what it is for (in memory, or at a URL)
/// rather than by adapter, so SwiftData code that configures its container compiles unchanged.
///
/// ```swift
/// let container = try ModelContainer(
///     for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
/// ```
///
/// A configuration opens, in this order:
/// - ``isStoredInMemoryOnly``: an `InMemoryStore` named ``name``, shared by the containers of the
///   process that open the same name when you gave one (as SwiftData's named in-memory stores are);
/// - a ``url`` ending in `.json`: a `JSONFileStore`; ending in `.log`: an `AppendLogStore` in that
///   folder; any other: an `SQLiteStore`, as SwiftData's default store is SQLite;
/// - no URL: the default store, ``defaultStoreURL``, or `MODELSTORE_URL` when it is set.
///
/// SwiftData's `groupContainer:` and `cloudKitDatabase:` arguments compile too. A group container
/// (``GroupContainer/identifier(_:)``) moves the default store into a folder that every program
/// naming the same identifier shares (``groupStoreURL(identifier:)``). ModelStore does not sync with
/// CloudKit: ``CloudKitDatabase/none`` is accepted, and a configuration that asks for CloudKit fails
/// to open with ``DataStoreError/Code/unsupportedFeature`` rather than run without the sync it asked for.
///
/// ``encryption`` encrypts the store's files with a key the app holds, from the environment, from a
/// file or from a passphrase (see "Protecting data at rest"): the JSON file, the append log and
/// SQLite each encrypt their own way, and an in-memory store, which keeps nothing on disk, refuses it.
///
/// For any other option, pass the adapter's own configuration (`.sqlite(at:)`, `.jsonFile(at:)`, …).
public struct ModelConfiguration: Hashable, Sendable {
    /// Where the default store of a configuration lives: SwiftData's app-group choice.
    public enum GroupContainer: Hashable, Sendable {
        /// No group: the program's own default store (as SwiftData without an app-group entitlement).
        case automatic
        /// A folder shared by every program that names this identifier (``groupStoreURL(identifier:)``).
        case identifier(String)
        /// No group.
        case none
    }

    /// The CloudKit database SwiftData would mirror the store to. ModelStore mirrors to none.
    public enum CloudKitDatabase: Hashable, Sendable {
        /// SwiftData's default: CloudKit when the app has the entitlement. A configuration with it
        /// fails to open here; pass ``none``.
        case automatic
        /// A named private CloudKit database. A configuration with it fails to open here; pass ``none``.
        case `private`(String)
        /// No CloudKit: the store stays local, the only kind ModelStore opens.
        case none
    }

    /// The configuration's name, unique within a container (`"default"` unless given).
    public let name: String
    /// The entities this store holds; the container's whole schema when `nil`.
    public var schema: Schema?
    /// Where the store lives, or `nil` for the default store or an in-memory one.
    public let url: URL?
    /// Whether the store keeps nothing on disk.
    public let isStoredInMemoryOnly: Bool
    /// Whether saves are allowed. With `false` the store opens read-only: the open writes nothing
    /// (a missing store is refused, not created, and one that would need migrating is refused), and
    /// every save, batch operation or erase throws ``DataStoreError/Code/readOnly``.
    public let allowsSave: Bool
    /// Where the default store lives (``GroupContainer/automatic`` unless given).
    public let groupContainer: GroupContainer
    /// The CloudKit database asked for (``CloudKitDatabase/none`` unless given; see the type's overview).
    public let cloudKitDatabase: CloudKitDatabase
    /// Where the key of an encrypted store comes from, or `nil` for a plaintext store.
    ///
    /// A store created with a key is encrypted from its first byte; one opened with a key must have
    /// been created with it (or converted with `modelstore encrypt`), or the open fails with
    /// ``DataStoreError/Code/wrongKey`` or ``DataStoreError/Code/keyRequired`` and the files are left as
    /// they were.
    public let encryption: EncryptionKeySource?
    /// Whether the name was given rather than defaulted (a named in-memory store is shared).
    private let isNamed: Bool

    /// A configuration for the default store, or an in-memory one.
    ///
    /// - Parameters:
    ///   - name: The configuration's name; `"default"` when `nil`.
    ///   - schema: The entities this store holds; the container's whole schema when `nil`.
    ///   - isStoredInMemoryOnly: Whether the store keeps nothing on disk.
    ///   - allowsSave: Whether saves are allowed; `false` opens the store read-only.
    ///   - groupContainer: Where the default store lives; ``GroupContainer/identifier(_:)`` shares it.
    ///   - cloudKitDatabase: ``CloudKitDatabase/none``; any other fails when the container opens.
    ///   - encryption: Where the key of an encrypted store comes from; `nil` for a plaintext store.
    ///     An in-memory store refuses one when the container opens.
    public init(
        _ name: String? = nil, schema: Schema? = nil, isStoredInMemoryOnly: Bool = false, allowsSave: Bool = true,
        groupContainer: GroupContainer = .automatic, cloudKitDatabase: CloudKitDatabase = .none,
        encryption: EncryptionKeySource? = nil
    ) {
        self.encryption = encryption
        self.name = name ?? "default"
        self.isNamed = name != nil
        self.schema = schema
        self.url = nil
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.allowsSave = allowsSave
        self.groupContainer = groupContainer
        self.cloudKitDatabase = cloudKitDatabase
    }

    /// A configuration for the store at a file URL.
    ///
    /// - Parameters:
    ///   - name: The configuration's name; `"default"` when `nil`.
    ///   - schema: The entities this store holds; the container's whole schema when `nil`.
    ///   - url: The store's file (`.json` for a JSON file, `.log` for an append-log folder, any
    ///     other name for an SQLite database).
    ///   - allowsSave: Whether saves are allowed; `false` opens the store read-only.
    ///   - cloudKitDatabase: ``CloudKitDatabase/none``; any other fails when the container opens.
    ///   - encryption: Where the key of an encrypted store comes from; `nil` for a plaintext store.
    public init(
        _ name: String? = nil, schema: Schema? = nil, url: URL, allowsSave: Bool = true,
        cloudKitDatabase: CloudKitDatabase = .none, encryption: EncryptionKeySource? = nil
    ) {
        self.encryption = encryption
        self.name = name ?? "default"
        self.isNamed = name != nil
        self.schema = schema
        self.url = url
        self.isStoredInMemoryOnly = false
        self.allowsSave = allowsSave
        self.groupContainer = .automatic
        self.cloudKitDatabase = cloudKitDatabase
    }

    /// Configurations are equal when they name the same store the same way; the schema is left out.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.url == rhs.url && lhs.isStoredInMemoryOnly == rhs.isStoredInMemoryOnly
            && lhs.allowsSave == rhs.allowsSave && lhs.groupContainer == rhs.groupContainer
            && lhs.cloudKitDatabase == rhs.cloudKitDatabase && lhs.encryption == rhs.encryption
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(url)
        hasher.combine(isStoredInMemoryOnly)
        hasher.combine(allowsSave)
        hasher.combine(groupContainer)
        hasher.combine(cloudKitDatabase)
        hasher.combine(encryption)
    }

    /// The default store's URL: an SQLite database `default.store` in the application-support
    /// folder (`$XDG_DATA_HOME/<executable>`, else `~/.local/share/<executable>`, on Linux).
    public static var defaultStoreURL: URL {
        userDataFolder.appending(path: ProcessInfo.processInfo.processName, directoryHint: .isDirectory)
            .appending(path: "default.store")
    }

    /// The default store of the group container `identifier`: `default.store` in the folder
    /// `ModelStore Groups/<identifier>` of the user's data folder (`$XDG_DATA_HOME`, else
    /// `~/.local/share`, on Linux; Application Support on Apple platforms), which every program of the
    /// user that names the same identifier opens.
    public static func groupStoreURL(identifier: String) -> URL {
        userDataFolder.appending(path: "ModelStore Groups", directoryHint: .isDirectory)
            .appending(path: identifier, directoryHint: .isDirectory).appending(path: "default.store")
    }

    /// The user's data folder: Application Support on Apple platforms, `$XDG_DATA_HOME` or
    /// `~/.local/share` elsewhere.
    private static var userDataFolder: URL {
        #if canImport(Darwin)
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
        #else
            ProcessInfo.processInfo.environment["XDG_DATA_HOME"].flatMap {
                $0.isEmpty ? nil : URL(filePath: $0, directoryHint: .isDirectory)
            }
                ?? FileManager.default.homeDirectoryForCurrentUser.appending(
                    path: ".local/share", directoryHint: .isDirectory)
        #endif
    }

    /// The adapter configuration this configuration opens (see the type's overview).
    ///
    /// Throws what ``StoreRegistry/defaultConfiguration()`` throws for the default store, and
    /// ``DataStoreError/Code/unsupportedFeature`` for a CloudKit database other than
    /// ``CloudKitDatabase/none``, for a group container with an identifier that is not a folder name,
    /// for `allowsSave: false` when `MODELSTORE_URL` names a store whose adapter cannot open
    /// read-only; and ``DataStoreError/Code/invalidConfiguration`` for an ``encryption`` key that the
    /// store cannot take (an in-memory store, or a `MODELSTORE_URL` that names another key).
    public func storeConfiguration() throws -> any DataStoreConfiguration {
        if cloudKitDatabase != .none {
            let asked =
                if case .private(let identifier) = cloudKitDatabase { ".private('\(identifier)')" } else {
                    ".automatic"
                }
            throw DataStoreError(
                .unsupportedFeature,
                "the configuration '\(name)' asks for CloudKit sync (cloudKitDatabase: \(asked)), which ModelStore "
                    + "does not do: its stores stay where they are opened",
                remedy:
                    "Pass cloudKitDatabase: .none to keep the store local, and sync it with ModelStoreSync's "
                    + "SyncEngine: with another store the process opens, or through a sync server "
                    + "(see 'Syncing stores')")
        }
        var configuration: any DataStoreConfiguration
        if isStoredInMemoryOnly {
            configuration = InMemoryStoreConfiguration(name: name, isShared: isNamed)
        } else if let url {
            switch url.pathExtension.lowercased() {
            case "json": configuration = JSONFileStoreConfiguration(url: url, name: name)
            case "log": configuration = AppendLogStoreConfiguration(directory: url, name: name)
            default: configuration = SQLiteStoreConfiguration(name: name, url: url)
            }
        } else if case .identifier(let identifier) = groupContainer {
            guard !identifier.isEmpty, !identifier.contains("/"), identifier != ".", identifier != ".." else {
                throw DataStoreError(
                    .unsupportedFeature,
                    "the configuration '\(name)' names the group container '\(identifier)', which is not a folder name",
                    remedy: "Name the group with letters, digits and dots, such as 'group.com.example.trips'")
            }
            let url = Self.groupStoreURL(identifier: identifier)
            // A read-only configuration writes nothing: a missing group folder is a missing store.
            if allowsSave {
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            }
            configuration = SQLiteStoreConfiguration(name: name, url: url)
        } else {
            StoreRegistry.shared.registerBuiltInSchemes()
            configuration = try StoreRegistry.shared.defaultConfiguration()
        }
        if let schema { configuration.schema = schema }
        if let encryption { configuration = try Self.encrypted(configuration, with: encryption, name: name) }
        return allowsSave ? configuration : try Self.readOnly(configuration, name: name)
    }

    /// The same built-in configuration with its files encrypted under `source`.
    private static func encrypted(
        _ configuration: any DataStoreConfiguration, with source: EncryptionKeySource, name: String
    ) throws -> any DataStoreConfiguration {
        func conflict(_ given: EncryptionKeySource?) throws {
            guard let given, given != source else { return }
            throw DataStoreError(
                .invalidConfiguration,
                "the configuration '\(name)' gives \(source), and the store URL in MODELSTORE_URL gives \(given)",
                remedy: "Give the store's key one way only: in the configuration or in the URL")
        }
        switch configuration {
        case var json as JSONFileStoreConfiguration:
            try conflict(json.encryption)
            json.encryption = source
            return json
        case var log as AppendLogStoreConfiguration:
            try conflict(log.encryption)
            log.encryption = source
            return log
        case var sqlite as SQLiteStoreConfiguration where sqlite.url != nil:
            try conflict(sqlite.encryption)
            sqlite.encryption = source
            return sqlite
        default:
            let store =
                configuration is InMemoryStoreConfiguration ? "an in-memory store" : "\(type(of: configuration))"
            throw DataStoreError(
                .invalidConfiguration,
                "the configuration '\(name)' asks to encrypt \(store), which keeps no files to encrypt",
                remedy: "Drop 'encryption:' for this store, or give the configuration a file URL")
        }
    }

    /// The same built-in configuration with `allowsSave` off.
    private static func readOnly(
        _ configuration: any DataStoreConfiguration, name: String
    ) throws -> any DataStoreConfiguration {
        switch configuration {
        case var memory as InMemoryStoreConfiguration:
            memory.allowsSave = false
            return memory
        case var json as JSONFileStoreConfiguration:
            json.allowsSave = false
            return json
        case var log as AppendLogStoreConfiguration:
            log.allowsSave = false
            return log
        case var sqlite as SQLiteStoreConfiguration:
            sqlite.allowsSave = false
            return sqlite
        default:
            throw DataStoreError(
                .unsupportedFeature,
                "the configuration '\(name)' asks for a read-only store (allowsSave: false), and its store's "
                    + "adapter (\(type(of: configuration))) cannot open read-only",
                remedy: "Use a built-in store, or set the adapter configuration's own read-only option")
        }
    }
}

extension ModelContainer {
    /// A container for these model types over SwiftData-style configurations
    /// (``ModelConfiguration``), as SwiftData's `ModelContainer(for:configurations:)`.
    ///
    /// - Throws: What ``ModelConfiguration/storeConfiguration()`` throws, then what opening the
    ///   stores throws.
    public convenience init(
        for types: any PersistentModel.Type..., migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: ModelConfiguration
    ) throws {
        try self.init(for: Schema(types), migrationPlan: migrationPlan, configurations: [configurations])
    }

    /// A container for a schema over SwiftData-style configurations, one store each.
    public convenience init(
        for schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: [ModelConfiguration]
    ) throws {
        try self.init(
            for: schema, migrationPlan: migrationPlan,
            configurations: try configurations.map { try $0.storeConfiguration() })
    }
}

/// Called by the module's load hook (the `CModelStoreAdaptersLoad` target) when the program starts:
/// registers the built-in schemes and, unless the app set one, the default store's URL, so
/// `ModelContainer(for: Trip.self)` opens the default store as in SwiftData.
@_cdecl("modelstore_adapters_register")
func registerAdaptersAtLoad() {
    let registry = StoreRegistry.shared
    registry.registerBuiltInSchemes()
    if registry.defaultStoreURL == nil {
        registry.defaultStoreURL = "sqlite:" + ModelConfiguration.defaultStoreURL.path
    }
}
