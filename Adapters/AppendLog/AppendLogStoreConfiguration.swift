import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreFileIO

/// The settings of an ``AppendLogStore``: where its directory is, how durable a save is, and
/// when the log is compacted.
///
/// ```swift
/// let container = try ModelContainer(
///     for: Trip.self,
///     configurations: .appendLog(at: URL(filePath: "Trips.log"), durability: .everySave))
/// ```
public struct AppendLogStoreConfiguration: DataStoreConfiguration {
    /// The store type.
    public typealias Store = AppendLogStore

    /// What a save has guaranteed when it returns.
    ///
    /// Whatever the mode, a crash never leaves part of a transaction: reopening yields a prefix of
    /// the saved transactions, whole. The modes differ in how long that prefix is guaranteed to be.
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        /// No sync: a save returns once its record is handed to the operating system. It survives
        /// the process crashing, but a power loss or kernel crash may lose the most recent saves.
        case none
        /// Group commit (the default): a save returns once its record is on stable storage, and
        /// saves that arrive while a sync is running share the next sync. It survives power loss.
        case batched
        /// One sync per save: each save returns once its own sync has finished. It survives power
        /// loss, and costs one sync per save even when saves arrive together.
        case everySave
    }

    /// When the log is compacted into a new checkpoint.
    public enum Compaction: Sendable, Hashable {
        /// Only when ``AppendLogStore/compact()`` is called.
        case manual
        /// In the background after a save, once the log holds at least `minimumLogSize` bytes and
        /// the fraction of them that no longer describe live data (``AppendLogInfo/deadFraction``)
        /// is at least `deadFraction`; also available on demand.
        case automatic(deadFraction: Double, minimumLogSize: Int)

        /// Compacts once half the log is dead and the log holds at least 8 MiB: reopening then
        /// reads at most about twice the live data, and compaction's cost is spread over at least
        /// as many bytes of saves as it rewrites.
        public static let `default` = Compaction.automatic(deadFraction: 0.5, minimumLogSize: 8 << 20)
    }

    /// The configuration's name, unique within a container.
    public var name: String
    /// The schema; the container injects it.
    public var schema: Schema?
    /// The store's directory. It is created on first open; an existing directory must be an append log or empty.
    public var directory: URL
    /// What a save guarantees when it returns. The default is ``Durability/batched``.
    public var durability: Durability
    /// When the log is compacted. The default is ``Compaction/default``.
    public var compaction: Compaction
    /// The size in bytes past which the log moves on to a new segment file (64 MiB by default).
    /// A single transaction larger than this gets a segment of its own.
    public var segmentSize: Int
    /// Whether the store accepts changes (on by default). Off, the log opens read-only: it loads
    /// the checkpoint and segments without taking the writer's lock or writing anything (a torn
    /// tail is skipped, not cut off; an interrupted compaction is left for the next writable
    /// open), refuses a directory with no log or a log the migration plan would migrate, and every
    /// save throws ``DataStoreError/Code/readOnly``. It reads the log as it was when it opened.
    public var allowsSave = true
    /// The permission bits of the files and folders the log creates: its directory, manifest,
    /// segments, checkpoints, lock and `synced` files, `history/` and `damaged/`
    /// (``FilePermissions/private``, owner only, by default; `?mode=0640` in a `log:` URL).
    public var filePermissions: FilePermissions = .private
    /// Where the key of an encrypted log comes from, or `nil` (the default) for a plaintext log.
    ///
    /// With a key every transaction, and every chunk of a checkpoint, is sealed on its own with
    /// AES-256-GCM, so a save costs what it costs in a plaintext log plus one seal of its record;
    /// the log's `encryption` file records the cipher, the key derivation and a key check. Opening
    /// with a wrong key throws `DataStoreError.Code.wrongKey`, an encrypted log opened without one
    /// `DataStoreError.Code.keyRequired`, and a plaintext log opened with one
    /// ``DataStoreError/Code/invalidConfiguration``, each before anything is read or written.
    /// Several processes open an encrypted log together as they do a plaintext one. In a `log:`
    /// URL: `key-env=NAME`, `key-file=PATH` or `passphrase-env=NAME`.
    public var encryption: EncryptionKeySource?

    /// A configuration for the append log in `directory`.
    public init(
        directory: URL, durability: Durability = .batched, compaction: Compaction = .default,
        segmentSize: Int = 64 << 20, name: String = "log", schema: Schema? = nil
    ) {
        self.name = name
        self.schema = schema
        self.directory = directory
        self.durability = durability
        self.compaction = compaction
        self.segmentSize = segmentSize
    }

    /// Checks that the directory is a file URL and that the numbers make sense.
    public func validate() throws {
        guard directory.isFileURL else {
            throw DataStoreError(
                .invalidConfiguration, "the append log location '\(directory.absoluteString)' is not a file URL",
                remedy: "Pass a file URL, for example URL(filePath: \"Trips.log\")")
        }
        guard segmentSize >= 4096 else {
            throw DataStoreError(
                .invalidConfiguration, "the append log segment size \(segmentSize) is smaller than 4096 bytes",
                remedy: "Use a segment size of at least 4096 bytes (the default is 64 MiB)")
        }
        if case .automatic(let fraction, let minimum) = compaction, !(fraction > 0 && fraction < 1) || minimum < 0 {
            throw DataStoreError(
                .invalidConfiguration,
                "the append log compaction threshold \(fraction) is not between 0 and 1, or its minimum size "
                    + "\(minimum) is negative",
                remedy: "Use a dead fraction such as 0.5 and a non-negative minimum log size, or .manual")
        }
    }

    /// Configurations are equal when they name the same store with the same settings.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.directory.standardizedFileURL == rhs.directory.standardizedFileURL
            && lhs.durability == rhs.durability && lhs.compaction == rhs.compaction
            && lhs.segmentSize == rhs.segmentSize
    }

    /// Hashes the name and the directory.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(directory.standardizedFileURL)
    }
}

extension DataStoreConfiguration where Self == AppendLogStoreConfiguration {
    /// A durable store in `directory` whose saves append only what changed to a log.
    ///
    /// - Parameters:
    ///   - directory: The store's directory, created if needed.
    ///   - durability: What a save guarantees when it returns; group commit by default.
    ///   - compaction: When the log is rewritten as a checkpoint; automatic by default.
    ///   - name: The configuration's name, unique within a container.
    public static func appendLog(
        at directory: URL, durability: AppendLogStoreConfiguration.Durability = .batched,
        compaction: AppendLogStoreConfiguration.Compaction = .default, name: String = "log"
    ) -> AppendLogStoreConfiguration {
        AppendLogStoreConfiguration(directory: directory, durability: durability, compaction: compaction, name: name)
    }
}
