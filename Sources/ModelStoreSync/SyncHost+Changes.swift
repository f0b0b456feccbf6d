import Foundation
import ModelStore

/// What a stretch of a shared store's history changed, enough for a ``SyncHost`` to tell whose
/// scope it touches (``SyncHost/touches(_:access:)``): a server wakes only those of its listening
/// clients, not every one of them for every change.
public struct SyncChangeDigest: Sendable {
    /// The newest transaction the digest covers; the next digest starts after it.
    public let newest: Int64
    /// The changed models as they are now, with the properties an update changed (`nil` for an
    /// insert, which changes them all).
    let rows: [(snapshot: DefaultSnapshot, updated: Set<String>?)]
    /// Entities with deleted models (or changed models gone by the time the digest read them).
    let deletedEntities: Set<String>
    /// Whether the history could not be read in full (it was trimmed past the digest's start):
    /// every requester counts as touched.
    let touchesEveryone: Bool

    /// Whether the stretch changed no model of the app (only the engine's bookkeeping, or nothing).
    public var isEmpty: Bool { rows.isEmpty && deletedEntities.isEmpty && !touchesEveryone }
}

extension SyncHost {
    /// What the store's history after transaction `after` changed, up to its newest transaction,
    /// as of a read that began after this call.
    public func changes(after: Int64) throws -> SyncChangeDigest {
        var transactions: [DefaultHistoryTransaction] = []
        var newest = after
        while true {
            guard let page = try tail.transactions(after: newest, limit: 1_000) else {
                // The window begins after `after`: what lies between is unknown.
                return SyncChangeDigest(newest: try tail.newest(), rows: [], deletedEntities: [], touchesEveryone: true)
            }
            transactions += page
            guard let last = page.last else { break }
            newest = last.transactionIdentifier
            if page.count < 1_000 { break }
        }
        var updated: [PersistentIdentifier: Set<String>?] = [:]
        var deleted = Set<String>()
        for transaction in transactions {
            for change in transaction.changes {
                let id = change.changedPersistentIdentifier
                guard !SyncMetadata.isMetadata(id.entityName) else { continue }
                switch change {
                case .insert: updated[id] = .some(nil)
                case .update(let update):
                    if case .some(.some(let names)) = updated[id] {
                        updated[id] = names.union(Self.updatedNames(update))
                    } else if updated[id] == nil {
                        updated[id] = Self.updatedNames(update)
                    }
                case .delete:
                    updated[id] = nil
                    deleted.insert(id.entityName)
                }
            }
        }
        var rows: [(snapshot: DefaultSnapshot, updated: Set<String>?)] = []
        for (entity, ids) in Dictionary(grouping: updated.keys, by: \.entityName) {
            let found = try store.snapshots(ids, entityName: entity)
            for id in ids {
                if let row = found[id] {
                    rows.append((row, updated[id] ?? nil))
                } else {
                    deleted.insert(entity)
                }
            }
        }
        return SyncChangeDigest(newest: newest, rows: rows, deletedEntities: deleted, touchesEveryone: false)
    }

    /// Whether `digest` may have changed what `access` holds: a changed model its scope holds, one
    /// an update may have moved out of it, or a deletion in an entity it may hold (a deleted
    /// model's values are gone, so its owner is unknown). Errs towards `true`: a requester woken
    /// for nothing pulls an empty page, one not woken would miss a change.
    public func touches(_ digest: SyncChangeDigest, access: SyncAccess) -> Bool {
        if digest.touchesEveryone { return true }
        guard let check = try? ScopeCheck(scope, access: access, schema: store.schema) else { return true }
        for entity in digest.deletedEntities where check.filter(for: entity) != .constant(false) { return true }
        for (row, updated) in digest.rows {
            guard let filter = check.filter(for: row.entity.name) else { return true }
            if check.allows(row) { return true }
            // Outside the scope now; an update of a property the filter reads may have moved it out.
            guard let updated else { continue }
            guard let read = filter.ownProperties else { return true }
            if !read.isDisjoint(with: updated) { return true }
        }
        return false
    }

    private static func updatedNames<Update: HistoryUpdate>(_ update: Update) -> Set<String> {
        Set(update.updatedAttributes.names)
    }
}

extension StoreFilter {
    /// The names of the entity's own properties the filter reads, or `nil` when it also reads
    /// related models (a path through a relationship), whose changes can move a model in or out.
    fileprivate var ownProperties: Set<String>? {
        switch self {
        case .constant, .identifiers: return []
        case .compare(let path, _, _), .isIn(let path, _), .range(let path, _), .text(let path, _),
            .arrayContains(let path, _):
            return path.components.count == 1 ? [path.components[0]] : nil
        case .any, .all: return nil
        case .and(let operands), .or(let operands):
            var names = Set<String>()
            for operand in operands {
                guard let more = operand.ownProperties else { return nil }
                names.formUnion(more)
            }
            return names
        case .not(let operand): return operand.ownProperties
        }
    }
}
