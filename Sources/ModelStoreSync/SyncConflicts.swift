import Foundation
import ModelStore

/// The conflict records of a synced store: read them, and resolve them by taking a side.
///
/// A resolution is saved as an ordinary local change (under ``author``, `modelstore-conflicts` by
/// default), so
/// the next round pushes it like any edit.
public struct SyncConflicts: Sendable {
    /// Which value a resolution keeps.
    public enum Side: String, Sendable {
        /// This replica's value.
        case local
        /// The remote's value.
        case remote
    }

    private let container: ModelContainer
    /// The author resolutions are saved under, as history records it.
    public let author: String

    /// The conflicts of the first store of `container`, whose schema includes the sync entities.
    public init(container: ModelContainer, author: String = "modelstore-conflicts") throws {
        guard container.schema.hasSyncMetadata else {
            throw SyncError(
                .missingMetadata, "the container's schema has no sync entities",
                remedy: "Create it with Schema(...).includingSyncMetadata()")
        }
        self.container = container
        self.author = author
    }

    /// The conflicts of a container already checked for the sync entities.
    init(checked container: ModelContainer) {
        self.container = container
        self.author = "modelstore-conflicts"
    }

    private var store: SyncStore {
        SyncStore(store: container.stores[0], schema: container.schema, author: author)
    }

    /// The conflicts, oldest first; resolved ones too when `includingResolved`.
    public func list(includingResolved: Bool = false) throws -> [SyncConflict] {
        let filter: StoreFilter? = includingResolved ? nil : .compare("resolved", .equal, .bool(false))
        return try store.fetch(SyncMetadata.conflictEntityName, filter: filter).compactMap(SyncConflict.init)
            .sorted { $0.created < $1.created }
    }

    /// Resolves a conflict by keeping one side's value: the model's property takes it (when it
    /// differs from what the model holds now) and the conflict is marked resolved, in one save.
    ///
    /// Throws ``ModelStore/DataStoreError/Code/notFound`` for an unknown conflict identifier.
    public func resolve(_ id: String, take side: Side) throws {
        let store = store
        guard
            let row = try store.fetch(SyncMetadata.conflictEntityName, filter: .equal("conflictID", .string(id))).first,
            let conflict = SyncConflict(snapshot: row)
        else {
            throw DataStoreError(
                .notFound, "there is no conflict '\(id)' in '\(store.store.identifier)'",
                remedy: "List them with 'modelstore conflicts URL'")
        }
        var updated: [DefaultSnapshot] = []
        let value = side == .local ? conflict.local : conflict.remote
        if !conflict.property.isEmpty, let value {
            let index = try RecordIndex.load(globalIDs: [conflict.globalID], store: store)
            if let model = index.model(of: conflict.globalID),
                var snapshot = try store.snapshots([model], entityName: conflict.entity)[model]
            {
                var related = RecordIndex()
                let references = SyncValues.referencedGlobalIDs(value).compactMap { reference -> String? in
                    if case .string(let global) = reference.primaryKey { return global }
                    return nil
                }
                try related.add(globalIDs: references, store: store)
                let before = snapshot.values
                SyncValues.write([conflict.property: value], into: &snapshot, localID: related.localID)
                if snapshot.values != before { updated.append(snapshot) }
            }
        }
        var resolved = row
        if let slot = resolved.entity.slot(of: "resolved") { resolved.values[slot] = .bool(true) }
        if let slot = resolved.entity.slot(of: "chosen"), let value {
            resolved.values[slot] = .data(SyncCoding.encode(value))
        }
        let result = try store.save(inserted: [], updated: updated + [resolved], deleted: [])
        if !updated.isEmpty {
            container.changeHub.publish(
                ModelContainerChange(
                    updated: updated.map(\.persistentIdentifier), author: author,
                    historyTokens: result.historyToken.map { [$0] } ?? [], origin: .external))
        }
    }
}

extension SyncEngine {
    /// The local store's conflict records.
    public nonisolated var conflicts: SyncConflicts { SyncConflicts(checked: container) }
}
