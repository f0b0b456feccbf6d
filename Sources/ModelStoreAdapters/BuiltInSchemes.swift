import ModelStore
import ModelStoreAppendLog
import ModelStoreCrypto
import ModelStoreFileIO
import ModelStoreInMemory
import ModelStoreJSONFile
import ModelStoreSQLite
import ModelStoreTooling

extension StoreScheme {
    /// `memory:` or `memory:NAME`: an `InMemoryStore` that forgets everything when the container goes away.
    ///
    /// `memory:NAME` opens a shared store: containers in one process that open the same name see
    /// the same models while one of them is open (`InMemoryStoreConfiguration.isShared`).
    public static let memory = StoreScheme(
        "memory", summary: "in memory, nothing saved to disk", location: .optional("NAME"), example: "memory:"
    ) { url in
        url.location.isEmpty
            ? InMemoryStoreConfiguration(name: "memory")
            : InMemoryStoreConfiguration(name: url.location, isShared: true)
    }

    /// `json:PATH[?backup=true|false&mode=0600&key-env=NAME]`: a `JSONFileStore` in one human-readable JSON file.
    ///
    /// `backup` (default `true`) keeps the previous file beside it on every save. Its stored schema
    /// is read from the file's header, and
    /// `JSONFileMaintenance` serves tools.
    public static let json = StoreScheme(
        "json", summary: "one readable JSON file, saved atomically", location: .required("PATH"),
        options: [
            .init("backup", allowedValues: ["true", "false"], summary: "keep the previous file on save"),
            .fileMode,
        ] + StoreScheme.Option.encryptionKey,
        example: "json:trips.json"
    ) { url in
        var configuration = JSONFileStoreConfiguration(url: url.fileURL, keepsBackup: url.option("backup") != "false")
        configuration.filePermissions = try url.filePermissions()
        configuration.encryption = try url.encryptionKeySource()
        return configuration
    }
    .maintained(by: JSONFileMaintenance())

    /// `log:DIR[?durability=none|batched|everySave&compaction=automatic|manual&mode=0600]`: an `AppendLogStore`.
    ///
    /// `durability` defaults to `batched` (group commit) and `compaction` to `automatic`. Its stored
    /// schema is read from the newest segment's or checkpoint's header, and `AppendLogMaintenance`
    /// serves tools.
    public static let log = StoreScheme(
        "log", summary: "a durable append-only log in a directory", location: .required("DIR"),
        options: [
            .init(
                "durability", allowedValues: AppendLogStoreConfiguration.Durability.allCases.map(\.rawValue),
                summary: "what a save guarantees when it returns"),
            .init("compaction", allowedValues: ["automatic", "manual"], summary: "when the log is compacted"),
            .fileMode,
        ] + StoreScheme.Option.encryptionKey,
        example: "log:trips-log"
    ) { url in
        let durability = url.option("durability").flatMap(AppendLogStoreConfiguration.Durability.init(rawValue:))
        var configuration = AppendLogStoreConfiguration(
            directory: url.fileURL, durability: durability ?? .batched,
            compaction: url.option("compaction") == "manual" ? .manual : .default)
        configuration.filePermissions = try url.filePermissions()
        configuration.encryption = try url.encryptionKeySource()
        return configuration
    }
    .maintained(by: AppendLogMaintenance())

    /// `sqlite:PATH[?durability=none|batched|everySave&mode=0600&key-env=NAME&page-cache-mib=N]`: an `SQLiteStore`
    /// in one SQLite database.
    ///
    /// `durability` defaults to `batched` (`synchronous=NORMAL`); `everySave` syncs every save.
    /// `page-cache-mib` sets `SQLiteStoreConfiguration.pageCacheSize` in MiB.
    /// `sqlite::memory:` is a private in-memory database. Its stored schema is read from the
    /// database's `modelstore_meta` table, and `SQLiteMaintenance` serves tools.
    public static let sqlite = StoreScheme(
        "sqlite", summary: "an SQLite database, queries run in SQL", location: .required("PATH"),
        options: [
            .init(
                "durability", allowedValues: SQLiteStoreConfiguration.Durability.allCases.map(\.rawValue),
                summary: "what a save guarantees when it returns"),
            .fileMode,
            .init("page-cache-mib", summary: "MiB of pages kept in memory (default about 2, encrypted 64)"),
        ] + StoreScheme.Option.encryptionKey,
        example: "sqlite:trips.sqlite"
    ) { url in
        let durability = url.option("durability").flatMap(SQLiteStoreConfiguration.Durability.init(rawValue:))
        var configuration = SQLiteStoreConfiguration(
            url: url.location == ":memory:" ? nil : url.fileURL, durability: durability ?? .batched)
        configuration.filePermissions = try url.filePermissions()
        configuration.encryption = try url.encryptionKeySource()
        if let mebibytes = url.option("page-cache-mib") {
            guard let count = Int(mebibytes), count >= 0, count <= Int.max >> 20 else {
                throw DataStoreError(
                    .invalidConfiguration,
                    "the store URL's 'page-cache-mib' is '\(mebibytes)', not a whole number of MiB",
                    remedy: "Write the page cache's size in MiB, such as page-cache-mib=64")
            }
            configuration.pageCacheSize = count << 20
        }
        return configuration
    }
    .maintained(by: SQLiteMaintenance())

    /// The schemes of the adapters that ship with ModelStore: `memory:`, `json:`, `log:` and `sqlite:`.
    public static var builtIn: [StoreScheme] { [.memory, .json, .log, .sqlite] }
}

extension StoreRegistry {
    /// Registers the built-in schemes (`memory:`, `json:`, `log:`, `sqlite:`), keeping any scheme of the same
    /// name the app registered first. Calling it again does nothing.
    public func registerBuiltInSchemes() {
        for scheme in StoreScheme.builtIn { register(scheme, replacingExisting: false) }
    }
}

extension StoreScheme.Option {
    /// `mode=0640`: the permission bits of the files the store creates (owner only, `0600`, by default).
    static let fileMode: StoreScheme.Option = {
        var option = StoreScheme.Option("mode", summary: "octal bits of the files it creates (default 0600)")
        option.isOmittedFromUsage = true
        return option
    }()
}

extension StoreScheme.Option {
    /// `key-env=NAME`, `key-file=PATH` and `passphrase-env=NAME`: where an encrypted store's key comes from.
    static let encryptionKey: [StoreScheme.Option] = [
        ("key-env", "the environment variable holding the key (64 hex digits)"),
        ("key-file", "the file holding the key"),
        ("passphrase-env", "the environment variable holding a passphrase"),
    ].map { name, summary in
        var option = StoreScheme.Option(name, summary: summary)
        option.isOmittedFromUsage = true
        return option
    }
}

extension StoreURL {
    /// The key source the URL's `key-env`, `key-file` or `passphrase-env` option names, or `nil`
    /// for a plaintext store; more than one is an error.
    func encryptionKeySource() throws -> EncryptionKeySource? {
        let given = [
            option("key-env").map(EncryptionKeySource.environment), option("key-file").map(EncryptionKeySource.file),
            option("passphrase-env").map(EncryptionKeySource.passphraseEnvironment),
        ].compactMap { $0 }
        guard given.count <= 1 else {
            throw DataStoreError(
                .invalidConfiguration,
                "the store URL gives more than one of 'key-env', 'key-file' and 'passphrase-env'",
                remedy: "Give the store's key one way only")
        }
        return given.first
    }

    /// The `mode` option as permissions: owner only when the URL gives none.
    func filePermissions() throws -> FilePermissions {
        guard let mode = option("mode") else { return .private }
        return try FilePermissions(parsing: mode)
    }
}
