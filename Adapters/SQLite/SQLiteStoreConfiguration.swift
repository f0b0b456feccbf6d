import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreFileIO

/// The settings of an ``SQLiteStore``: where its database lives, what a save guarantees, and how
/// long it waits for another writer.
public struct SQLiteStoreConfiguration: DataStoreConfiguration {
    /// The store type.
    public typealias Store = SQLiteStore

    /// What a save has guaranteed when it returns, named as the append log names its modes.
    ///
    /// Whatever the mode, SQLite's write-ahead log never leaves part of a transaction: a crash
    /// rolls back to the last whole save.
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        /// `synchronous=OFF`: no sync. A save survives the process crashing, but a power loss may
        /// lose recent saves (and, rarely, damage the file).
        case none
        /// `synchronous=NORMAL` (the default): the write-ahead log is synced at checkpoints, not at
        /// every commit. Saves survive a crash of the process; a power loss may roll back the
        /// most recent saves, never part of one.
        case batched
        /// `synchronous=FULL`: every save syncs the write-ahead log before it returns, so it survives
        /// power loss.
        case everySave

        var pragma: String {
            switch self {
            case .none: "OFF"
            case .batched: "NORMAL"
            case .everySave: "FULL"
            }
        }
    }

    /// The configuration's name, unique within a container.
    public var name: String
    /// The schema; the container injects it.
    public var schema: Schema?
    /// The database file, or `nil` for a private in-memory database that goes away with the store.
    public var url: URL?
    /// What a save guarantees when it returns.
    public var durability: Durability
    /// How long a save (or an open) waits for another connection's write lock before it throws
    /// ``DataStoreError/locked``.
    public var busyTimeout: Duration
    /// How many changes of history the database keeps at most (10,000 by default), counted over
    /// all transactions: past it, the oldest transactions go (down to nine tenths of the limit, so
    /// that trimming is rare) and tokens into them expire. `nil` keeps every transaction.
    public var historyLimit: Int? = 10_000
    /// Whether the store accepts changes (on by default). Off, the database file opens read-only
    /// (`SQLITE_OPEN_READONLY`): nothing is created, upgraded or migrated, a missing file, an older
    /// file format or a stored schema that differs from this one is refused with a typed error, and
    /// every save throws ``DataStoreError/Code/readOnly``. Other processes may keep writing the
    /// database, and fetches see their saves. As for any reader of a database in WAL mode, SQLite
    /// creates the empty `-wal` and `-shm` files beside it if no process has it open; the database
    /// file itself is never written.
    public var allowsSave = true
    /// The permission bits of the files and folders the store creates: the database (whose bits
    /// SQLite gives its `-wal`, `-shm` and journal files), its folder if missing, and the
    /// `.externalStorage` folder (``FilePermissions/private``, owner only, by default; `?mode=0640`
    /// in an `sqlite:` URL). An existing database keeps its bits.
    public var filePermissions: FilePermissions = .private
    /// Where the key of an encrypted database comes from, or `nil` (the default) for a plaintext one.
    ///
    /// With a key, every page of the database, of its write-ahead log and of its rollback journal is
    /// sealed with AES-256-GCM (the page's reserved bytes hold its nonce and tag; the file starts with
    /// its salt instead of SQLite's magic string; see `FORMAT.md`): opening with a wrong key throws
    /// `DataStoreError.Code.wrongKey`, an encrypted file opened without one
    /// `DataStoreError.Code.keyRequired`, and a plaintext file opened with one
    /// ``DataStoreError/Code/invalidConfiguration``, each before anything is read or written; a page
    /// changed on disk fails authentication and reads as ``DataStoreError/Code/corrupted``. A passphrase's
    /// key is derived by scrypt (n = 2¹⁵, r = 8, p = 1) with the file's salt. `.externalStorage` files
    /// are not encrypted. `modelstore encrypt`, `decrypt` and `rekey` convert a file. In an `sqlite:` URL:
    /// `key-env=NAME`, `key-file=PATH` or `passphrase-env=NAME`. An in-memory database ignores it.
    public var encryption: EncryptionKeySource?

    /// The most memory, in bytes, the store's connection keeps for database pages it has read or
    /// written, or `nil` (the default) for ``defaultPageCacheSize(encrypted:)``: SQLite's own 2,000 KiB
    /// for a plaintext database, and 64 MiB for an encrypted one.
    ///
    /// A page the cache no longer holds is read from the file again. For a plaintext database the
    /// operating system's file cache usually serves that read; an encrypted page is also
    /// authenticated and decrypted again (about 7,800 instructions for a 4 KiB page), so an
    /// encrypted store keeps more of them. The memory is taken only as pages are read, up to
    /// the limit, and is freed when the store closes. In an `sqlite:` URL: `page-cache-mib=N`.
    public var pageCacheSize: Int?

    /// The page cache a store keeps when its configuration sets no ``pageCacheSize``: SQLite's
    /// default of 2,000 KiB for a plaintext database, 64 MiB for an encrypted one.
    public static func defaultPageCacheSize(encrypted: Bool) -> Int {
        encrypted ? 64 << 20 : 2_000 << 10
    }

    /// A configuration for the database at `url` (created with its folder if missing), or an
    /// in-memory database when `url` is `nil`.
    public init(
        name: String = "sqlite", url: URL?, durability: Durability = .batched, busyTimeout: Duration = .seconds(5),
        schema: Schema? = nil
    ) {
        self.name = name
        self.url = url
        self.durability = durability
        self.busyTimeout = busyTimeout
        self.schema = schema
    }

    /// Checks the timeout, the page cache's size and, for a file, that its path names a file.
    public func validate() throws {
        guard busyTimeout >= .zero else {
            throw DataStoreError(
                .invalidConfiguration, "the SQLite store '\(name)' has a negative busy timeout",
                remedy: "Use a timeout of zero or more")
        }
        if let pageCacheSize, pageCacheSize < 0 {
            throw DataStoreError(
                .invalidConfiguration, "the SQLite store '\(name)' has a negative page cache size (\(pageCacheSize))",
                remedy: "Give the page cache's size in bytes, zero or more, or nil for the default")
        }
        if let url, !url.isFileURL {
            throw DataStoreError(
                .invalidConfiguration, "the SQLite store URL '\(url.absoluteString)' is not a file URL",
                remedy: "Pass a file URL, such as URL(filePath: \"data.sqlite\")")
        }
    }

    /// The path SQLite opens, and that errors name: the URL's path standardized (see
    /// ``standardizedPath(of:)``), or `:memory:`.
    var path: String { url.map(Self.standardizedPath(of:)) ?? ":memory:" }

    /// `url.standardizedFileURL.path`, without standardizing a path that is already standard.
    ///
    /// Standardizing a URL costs some 28,000 instructions, as much as a tenth of opening a small
    /// store. An absolute path with no empty, `.` or `..` component, no trailing slash and no `~`
    /// is its own standard form, except under `/private` and `/var/automount`, which
    /// standardization may shorten.
    static func standardizedPath(of url: URL) -> String {
        let plain = url.path
        guard plain.utf8.first == UInt8(ascii: "/"), plain.utf8.count > 1, !plain.hasPrefix("/private"),
            !plain.hasPrefix("/var/automount")
        else {
            return url.standardizedFileURL.path
        }
        var previous = UInt8(ascii: "/")
        var dots = 0
        for byte in plain.utf8.dropFirst() {
            switch byte {
            case UInt8(ascii: "/"):
                // An empty, `.` or `..` component ends here.
                if previous == UInt8(ascii: "/") || (dots > 0 && dots < 3) { return url.standardizedFileURL.path }
                dots = 0
            case UInt8(ascii: "."):
                if previous == UInt8(ascii: "/") || dots > 0 { dots += 1 }
            case UInt8(ascii: "~"):
                return url.standardizedFileURL.path
            default:
                dots = 0
            }
            previous = byte
        }
        // A trailing slash, `.` or `..`.
        if previous == UInt8(ascii: "/") || (dots > 0 && dots < 3) { return url.standardizedFileURL.path }
        return plain
    }

    /// Configurations are equal when their names and files are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name && lhs.url == rhs.url }
    /// Hashes the name and file.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(url)
    }
}

extension DataStoreConfiguration where Self == SQLiteStoreConfiguration {
    /// A store in the SQLite database at `url`: one table per entity, queries run in SQL.
    public static func sqlite(
        at url: URL, durability: SQLiteStoreConfiguration.Durability = .batched, busyTimeout: Duration = .seconds(5)
    ) -> SQLiteStoreConfiguration {
        SQLiteStoreConfiguration(url: url, durability: durability, busyTimeout: busyTimeout)
    }

    /// A store in a private in-memory SQLite database, gone when the store is.
    public static func sqliteInMemory(name: String = "sqlite") -> SQLiteStoreConfiguration {
        SQLiteStoreConfiguration(name: name, url: nil)
    }
}
