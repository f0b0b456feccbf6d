import BenchHarness
import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreCrypto
import ModelStoreInMemory
import ModelStoreJSONFile
import ModelStoreSQLite

/// The system behind each name of ``Catalog``.
enum Registry {
    /// The system with this name (a `-batch` name is its base ModelStore system inserting through the batch API).
    static func system(named name: String) -> (any BenchSystem)? {
        let batch = name.hasSuffix(Catalog.batchInsertSuffix)
        let base = batch ? String(name.dropLast(Catalog.batchInsertSuffix.count)) : name
        switch base {
        case "inmemory":
            return ModelStoreSystem(configuration: { _ in .inMemory() }, isDurable: false, batchInsert: batch)
        case "jsonfile":
            return ModelStoreSystem(
                configuration: { .jsonFile(at: $0.appendingPathExtension("json")) }, isDurable: true, batchInsert: batch
            )
        case "appendlog":
            return ModelStoreSystem(
                configuration: { .appendLog(at: $0, durability: .batched) }, isDurable: true, batchInsert: batch)
        case "appendlog-none":
            return ModelStoreSystem(
                configuration: { .appendLog(at: $0, durability: .none) }, isDurable: true, batchInsert: batch)
        case "jsonfile-encrypted":
            return ModelStoreSystem(
                configuration: {
                    var configuration = JSONFileStoreConfiguration(url: $0.appendingPathExtension("json"))
                    configuration.encryption = .key(benchmarkKey)
                    return configuration
                }, isDurable: true, batchInsert: batch)
        case "appendlog-encrypted", "appendlog-none-encrypted":
            let durability: AppendLogStoreConfiguration.Durability = base == "appendlog-encrypted" ? .batched : .none
            return ModelStoreSystem(
                configuration: {
                    var configuration = AppendLogStoreConfiguration(directory: $0, durability: durability)
                    configuration.encryption = .key(benchmarkKey)
                    return configuration
                }, isDurable: true, batchInsert: batch)
        case "sqlite":
            return ModelStoreSystem(
                configuration: { .sqlite(at: $0.appendingPathExtension("sqlite"), durability: .batched) },
                isDurable: true, batchInsert: batch)
        case "sqlite-encrypted":
            return ModelStoreSystem(
                configuration: {
                    var configuration = SQLiteStoreConfiguration(
                        url: $0.appendingPathExtension("sqlite"), durability: .batched)
                    configuration.encryption = .key(benchmarkKey)
                    return configuration
                }, isDurable: true, batchInsert: batch)
        case "sqlite-sync":
            return ModelStoreSystem(
                configuration: {
                    .sqlite(at: $0.appendingPathExtension("sqlite"), durability: .everySave)
                },
                isDurable: true, batchInsert: batch)
        case "sqlite-raw" where !batch: return SQLiteRawSystem(history: false)
        case "sqlite-raw-history" where !batch: return SQLiteRawSystem(history: true)
        case "grdb-memory" where !batch: return GRDBSystem(kind: .memory)
        case "grdb-file" where !batch: return GRDBSystem(kind: .file)
        case "grdb-file-sync" where !batch: return GRDBSystem(kind: .fileSynced)
        case "foundation-json" where !batch: return FoundationJSONSystem()
        case "foundation-predicate" where !batch: return FoundationPredicateSystem()
        case "array-baseline" where !batch: return ArrayBaselineSystem()
        default: return nil
        }
    }
}

/// The key of the encrypted systems: fixed bytes, since a key's value does not change AES-GCM's cost.
private let benchmarkKey = try! EncryptionKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 7) })
