import Foundation
import ModelStore

extension SnapshotTable {
    /// The history changes of a prepared save, read against the table before the save is applied:
    /// inserts, updates that change a stored value, and deletes with their tombstones.
    public func historyChanges(of save: PreparedSave) -> [StoreHistoryRecord.Change] {
        var changes = save.inserted.map { StoreHistoryRecord.Change(.insert, $0.persistentIdentifier) }
        changes += historyChanges(updating: save.updated)
        changes += historyChanges(deleting: save.deleted)
        return changes
    }

    /// The history changes of storing these snapshots over the table's.
    public func historyChanges(updating snapshots: [DefaultSnapshot]) -> [StoreHistoryRecord.Change] {
        snapshots.compactMap { StoreHistoryRecord.Change.update(from: snapshot(for: $0.persistentIdentifier), to: $0) }
    }

    /// The history changes of deleting every model of an entity, in identifier order.
    public func historyChanges(deletingEveryModelOf entityName: String) -> [StoreHistoryRecord
        .Change]
    {
        guard let table = tables[entityName] else { return [] }
        var changes: [StoreHistoryRecord.Change] = []
        changes.reserveCapacity(table.count)
        let kept = StoreHistoryRecord.Change.tombstoneAttributes(of: table.entity)
        for row in 0..<table.rowCount where table.isLive(row) {
            changes.append(.deletion(of: table.ids[row], keeping: kept) { table.value($0, at: row) })
        }
        return changes
    }

    /// The history changes of deleting these models (those the table has).
    public func historyChanges(deleting identifiers: [PersistentIdentifier]) -> [StoreHistoryRecord
        .Change]
    {
        var table: EntityTable?
        var kept: [(slot: Int, name: String)] = []
        return identifiers.compactMap { id in
            // One table look-up per run of an entity; tombstones read from the columns, no snapshot.
            if table?.entity.name != id.entityName {
                table = tables[id.entityName]
                kept = table.map { StoreHistoryRecord.Change.tombstoneAttributes(of: $0.entity) } ?? []
            }
            guard let table, let row = table.row(of: id) else { return nil }
            return StoreHistoryRecord.Change.deletion(of: id, keeping: kept) { table.value($0, at: row) }
        }
    }
}
