import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreTooling

/// What the JSON file store offers tools such as `modelstore`: its stored schema, damage named by
/// line and column, and sealing a file edited by hand. The `json:` scheme registers it.
///
/// A JSON file is rewritten whole on every save, so it needs no compaction, and it is not
/// repaired: its `.backup` is restored instead.
public struct JSONFileMaintenance: DataStoreMaintenance {
    /// The JSON file store's maintenance.
    public init() {}

    /// The schema in the file's header (``JSONFileStore/storedSchema(at:)``).
    public func storedSchema(_ request: StoreMaintenanceRequest) throws -> Schema.Description {
        let configuration = request.configuration as? JSONFileStoreConfiguration
        return try JSONFileStore.storedSchema(at: request.location, encryption: configuration?.encryption)
    }

    /// The damaged place a ``JSONFileDamage`` names, by line, column and byte.
    public func problem(describing error: DataStoreError, _ request: StoreMaintenanceRequest) -> StoreProblem? {
        guard let damage = error.underlyingError as? JSONFileDamage else { return nil }
        return StoreProblem(
            file: damage.file, offset: damage.offset, line: damage.line, column: damage.column, reason: damage.reason)
    }

    /// Throws ``DataStoreError/Code/unsupportedFeature``: restore the backup instead.
    public func repair(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport {
        throw DataStoreError(
            .unsupportedFeature, "'\(request.name)' is not an append log, and only append logs are repaired",
            remedy: "For a JSON file, restore '\(request.location.path).backup', or fix the file at the line "
                + "'modelstore verify' names")
    }

    /// Throws ``DataStoreError/Code/unsupportedFeature``: the file is rewritten whole on every save.
    public func compact(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport {
        throw DataStoreError(
            .unsupportedFeature, "'\(request.name)' is not an append log, and only append logs are compacted",
            remedy: "Name one as 'log:DIR'; other stores need no compaction")
    }

    /// Records the checksum of the file as it is now (``JSONFileStore/seal(at:lockTimeout:limits:)``).
    public func seal(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport {
        let limits = (request.configuration as? JSONFileStoreConfiguration)?.limits ?? .init()
        let changed = try JSONFileStore.seal(at: request.location, limits: limits)
        return StoreMaintenanceReport(
            text: changed
                ? "\(request.name): sealed (the header now holds the checksum of the file as it is)"
                : "\(request.name): already sealed (the checksum matched)",
            details: SealDetails(changed: changed))
    }
}

extension JSONFileMaintenance {
    /// Rewrites the file under the key `target` names (``JSONFileStore/changeEncryption(at:from:to:lockTimeout:limits:progress:)``).
    public func changeEncryption(
        _ request: StoreMaintenanceRequest, to target: StoreMaintenanceRequest,
        progress: (_ done: Int, _ total: Int) -> Void
    ) throws -> StoreMaintenanceReport {
        let from = (request.configuration as? JSONFileStoreConfiguration)?.encryption
        let to = (target.configuration as? JSONFileStoreConfiguration)?.encryption
        try JSONFileStore.changeEncryption(at: request.location, from: from, to: to, progress: progress)
        let text =
            from == nil
            ? "encrypted (AES-256-GCM); it now opens only with its key"
            : to == nil ? "decrypted; it now opens without a key" : "re-encrypted under the new key"
        return StoreMaintenanceReport(
            text: "\(request.name): \(text)", details: EncryptionDetails(isEncrypted: to != nil))
    }
}

/// What `encrypt`, `decrypt` and `rekey` report as data.
private struct EncryptionDetails: Encodable {
    /// Whether the store is encrypted now.
    let isEncrypted: Bool
}

/// What `seal` reports as data.
private struct SealDetails: Encodable {
    /// Whether the file's checksum changed.
    let changed: Bool
}
