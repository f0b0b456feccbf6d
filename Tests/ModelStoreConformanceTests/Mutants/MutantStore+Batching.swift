import Foundation
import ModelStore
import ModelStoreAdapterKit

/// Batch delete, update and insert, with the batching mutants.
extension MutantStore {
    // MARK: Batching

    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        guard !has(.batchDeleteIgnored) else { return }
        try locked(writing: true) { state in
            var next = state.table
            let ids =
                has(.batchDeleteTooBroad)
                ? next.snapshots(of: Schema.entityName(for: T.self)).map(\.persistentIdentifier) : request.identifiers
            for id in ids { state.graveyard[id] = next.snapshot(for: id) }
            next.delete(ids)
            try commit(next, .batchDelete, from: state.table, author: request.editingState.author, &state)
        }
    }

    func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        guard !has(.batchUpdateIgnored) else { return }
        try locked(writing: true) { state in
            let before = state.table
            var next = state.table
            let ids =
                has(.batchUpdateAllOfEntity)
                ? next.snapshots(of: Schema.entityName(for: T.self)).map(\.persistentIdentifier) : request.identifiers
            if has(.batchUpdateNotAtomic) {
                for id in ids {
                    let updated = try next.prepareUpdate([id], values: request.values)
                    next.applyUpdate(updated)
                    state.table = next
                }
            } else if has(.batchUpdateUnchecked) {
                next.applyUpdate(
                    ids.compactMap { id in
                        guard var snapshot = next.snapshot(for: id) else { return nil }
                        for (slot, value) in request.values { snapshot.values[slot] = value }
                        return snapshot
                    })
            } else {
                next.applyUpdate(try next.prepareUpdate(ids, values: request.values))
            }
            try commit(next, .batchUpdate, from: before, author: request.editingState.author, &state)
        }
    }

    func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        if has(.batchInsertKeepsEarlierChunks) {
            // Each chunk is committed as it is read, so a failing later chunk leaves the earlier ones.
            var ids: [PersistentIdentifier] = []
            try request.forEachChunk { chunk in
                try locked(writing: true) { state in
                    var next = state.table
                    let saved = try next.save(
                        DataStoreSaveChangesRequest(
                            editingState: request.editingState, inserted: chunk, updated: [], deleted: []),
                        storeIdentifier: identifier)
                    ids += chunk.map { saved.remappedIdentifiers[$0.persistentIdentifier] ?? $0.persistentIdentifier }
                    try commit(next, .batchInsert, from: state.table, author: request.editingState.author, &state)
                }
            }
            return PersistentIdentifiers(ids)
        }
        let snapshots = try request.allSnapshots()
        return try locked(writing: true) { state in
            let before = state.table
            var next = state.table
            var ids: [PersistentIdentifier] = []
            let chunks = has(.batchInsertNotAtomic) ? snapshots.map { [$0] } : [snapshots]
            for chunk in chunks {
                let saved = try next.save(
                    DataStoreSaveChangesRequest(
                        editingState: request.editingState, inserted: chunk, updated: [], deleted: []),
                    storeIdentifier: identifier)
                ids += chunk.map { saved.remappedIdentifiers[$0.persistentIdentifier] ?? $0.persistentIdentifier }
                if has(.batchInsertNotAtomic) { state.table = next }
            }
            if !has(.batchInsertStoresNothing) {
                try commit(next, .batchInsert, from: before, author: request.editingState.author, &state)
            }
            switch mutation {
            case .batchInsertIdentifiersReversed: return PersistentIdentifiers(ids.reversed())
            case .batchInsertTemporaryIdentifiers: return PersistentIdentifiers(snapshots.map(\.persistentIdentifier))
            default: return PersistentIdentifiers(ids)
            }
        }
    }

}
