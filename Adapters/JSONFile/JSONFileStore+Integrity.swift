import Foundation
import ModelStore
import ModelStoreAdapterKit

extension JSONFileStore {
    /// Refuses a save that touches a model another process changed or deleted since this store read the file.
    ///
    /// - Parameters:
    ///   - loaded: the table this store had before it reloaded the file (what the save was based on).
    ///   - current: the reloaded table.
    static func checkConflicts(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, loaded: SnapshotTable, current: SnapshotTable,
        paths: Paths
    ) throws {
        let deleted = Set(request.deleted.map(\.persistentIdentifier))
        for id in request.updated.map(\.persistentIdentifier) + request.deleted.map(\.persistentIdentifier) {
            let before = loaded.snapshot(for: id)
            let now = current.snapshot(for: id)
            if now == nil && deleted.contains(id) { continue }  // deleted on both sides
            if let before, let now, before.values.isIdentical(to: now.values) { continue }
            throw DataStoreError(
                .conflict,
                "cannot save \(id): another process \(now == nil ? "deleted" : "changed") it after this store read "
                    + "'\(paths.document)'",
                remedy: "Fetch it again (the store has read the other process's changes) and retry the save",
                entityName: id.entityName)
        }
    }
}

extension [StoreValue] {
    /// Whether two value lists hold the same stored values (``StoreValue/isIdentical(to:)``), so a
    /// stored NaN equals itself and `-0.0` differs from `0.0`.
    func isIdentical(to other: [StoreValue]) -> Bool {
        count == other.count && zip(self, other).allSatisfy { $0.isIdentical(to: $1) }
    }
}
