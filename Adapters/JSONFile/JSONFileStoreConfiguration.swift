import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreFileIO

/// The settings of a ``JSONFileStore``: where its file is, and how it guards the file.
///
/// ```swift
/// let container = try ModelContainer(for: Trip.self, configurations: .jsonFile(at: url))
/// ```
public struct JSONFileStoreConfiguration: DataStoreConfiguration {
    /// The store type.
    public typealias Store = JSONFileStore

    /// The configuration's name, unique within a container (by default the file's name).
    public var name: String
    /// The schema; the container injects it.
    public var schema: Schema?
    /// The JSON document. Beside it the store keeps `<name>.backup` (the previous good file),
    /// `<name>.lock` (the writers' lock) and, for `.externalStorage` attributes, `<name>.external/`.
    public var url: URL
    /// Whether each save keeps the file it replaces as `<name>.backup` (on by default).
    public var keepsBackup: Bool
    /// How long a save or an open waits for another writer to release the file before it throws
    /// ``DataStoreError/locked`` (10 seconds by default).
    public var lockTimeout: Duration
    /// The limits a file must respect to open.
    public var limits: Limits
    /// Whether a file whose bytes do not match the checksum in its header opens anyway (off by
    /// default). Turn it on to accept a deliberate hand edit: the file is still checked in full
    /// (syntax, schema, relationships), and the next save writes a new checksum.
    /// `modelstore seal json:PATH` (``JSONFileStore/seal(at:lockTimeout:limits:)``) does the same
    /// without opening the store.
    public var acceptsHandEdits: Bool = false
    /// How many changes of history the file keeps at most (``defaultHistoryLimit`` by default): the oldest
    /// transactions go first, and tokens into them expire. `nil` keeps every transaction, so the
    /// file grows with every save; 0 keeps none.
    public var historyLimit: Int? = Self.defaultHistoryLimit
    /// Whether the store accepts changes (on by default). Off, the store opens read-only: it reads
    /// the file without taking the writers' lock or creating anything (not the file, its folder or
    /// `<name>.lock`), refuses a file that is missing or that the migration plan would migrate, and
    /// every save throws ``DataStoreError/Code/readOnly``. Other processes may still save the file;
    /// ``JSONFileStore/reloadIfChanged()`` reads their saves.
    public var allowsSave = true
    /// The permission bits of the files and folders the store creates: the document, its backup,
    /// lock and temporary files, and the `.externalStorage` folder (``FilePermissions/private``,
    /// owner only, by default; `?mode=0640` in a `json:` URL).
    public var filePermissions: FilePermissions = .private
    /// Where the key of an encrypted store comes from, or `nil` (the default) for a plaintext file.
    ///
    /// With a key the whole document is sealed with AES-256-GCM (and each `.externalStorage` file
    /// too) behind a clear header that records the cipher, the key derivation and a key check:
    /// opening with a wrong key throws `DataStoreError.Code.wrongKey`, an encrypted file opened
    /// without one `DataStoreError.Code.keyRequired`, and a plaintext file opened with one
    /// ``DataStoreError/Code/invalidConfiguration``, each before anything is read or written.
    /// `modelstore encrypt`, `decrypt` and `rekey` convert a file. In a `json:` URL:
    /// `key-env=NAME`, `key-file=PATH` or `passphrase-env=NAME`.
    public var encryption: EncryptionKeySource? {
        didSet { keys = encryption.map(DocumentKeys.init) }
    }
    /// The key source and the ciphers unlocked with it, shared by the copies of this configuration.
    private(set) var keys: DocumentKeys?
    /// The default ``historyLimit``: 1,000 changes.
    public static let defaultHistoryLimit = 1_000

    /// The limits a file must respect to open, so that a damaged or hostile file cannot exhaust
    /// the stack or memory. Opening a file that exceeds one throws ``DataStoreError/corrupted``
    /// naming the limit.
    public struct Limits: Hashable, Sendable {
        /// How deeply arrays and objects may nest (256 by default).
        public var maximumDepth: Int
        /// The longest string, in bytes (256 MiB by default).
        public var maximumStringLength: Int
        /// The longest number, in characters (256 by default).
        public var maximumNumberLength: Int
        /// The largest document, in bytes (4 GiB by default).
        public var maximumFileSize: Int

        /// Limits; the defaults fit any file ModelStore writes.
        public init(
            maximumDepth: Int = 256, maximumStringLength: Int = 256 << 20, maximumNumberLength: Int = 256,
            maximumFileSize: Int = 4 << 30
        ) {
            self.maximumDepth = maximumDepth
            self.maximumStringLength = maximumStringLength
            self.maximumNumberLength = maximumNumberLength
            self.maximumFileSize = maximumFileSize
        }
    }

    /// A configuration for the JSON document at `url`.
    ///
    /// - Parameters:
    ///   - url: A file URL. The file is created on first open if it doesn't exist.
    ///   - name: The configuration's name; the file's name when `nil`.
    ///   - schema: The entities this store owns; the container's whole schema when `nil`.
    ///   - keepsBackup: Whether each save keeps the previous file as `<name>.backup`.
    ///   - lockTimeout: How long to wait for another writer.
    ///   - limits: The limits a file must respect to open.
    public init(
        url: URL, name: String? = nil, schema: Schema? = nil, keepsBackup: Bool = true,
        lockTimeout: Duration = .seconds(10), limits: Limits = Limits()
    ) {
        self.url = url
        self.name = name ?? url.lastPathComponent
        self.schema = schema
        self.keepsBackup = keepsBackup
        self.lockTimeout = lockTimeout
        self.limits = limits
    }

    /// Throws ``DataStoreError/invalidConfiguration`` unless ``url`` is a file URL that names a file.
    public func validate() throws {
        guard url.isFileURL else {
            throw DataStoreError(
                .invalidConfiguration,
                "the JSON store '\(name)' has the URL '\(url.absoluteString)', which is not a file URL",
                remedy: "Use URL(fileURLWithPath:) or URL.documentsDirectory.appending(path:)")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw DataStoreError(
                .invalidConfiguration, "the JSON store's path '\(url.path)' is a folder",
                remedy: "Give the path of a file inside it, such as '\(url.appendingPathComponent("store.json").path)'")
        }
    }

    /// Configurations are equal when their names and files are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name && lhs.url == rhs.url }
    /// Hashes the name and the file.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(url)
    }
}

extension DataStoreConfiguration where Self == JSONFileStoreConfiguration {
    /// A store that keeps everything in one human-readable JSON file, saved atomically.
    ///
    /// - Parameters:
    ///   - url: The file; created on first open if it doesn't exist.
    ///   - name: The configuration's name; the file's name when `nil`.
    public static func jsonFile(at url: URL, name: String? = nil) -> JSONFileStoreConfiguration {
        JSONFileStoreConfiguration(url: url, name: name)
    }
}
