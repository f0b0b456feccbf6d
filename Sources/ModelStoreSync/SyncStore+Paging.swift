import Foundation
import ModelStore

/// Where a read of every model of one entity, in identifier order, has got to.
struct EntityReadPosition: Hashable {
    /// The primary key the read has reached (every model at or before it was read), or `nil` at the start.
    var after: PrimaryKey?
    /// How many models were read.
    var offset = 0
    /// The highest primary key the entity had when the read began, once it has more than one page.
    var through: PrimaryKey?
}

extension SyncStore {
    /// The next models of an entity in identifier order after `position`, which moves past them:
    /// the rows, and whether the entity has no more.
    ///
    /// Integer keys (every built-in store mints them) are read by key, not by position: each query
    /// asks for the models in a window of keys after the last one read, so a page costs the same at
    /// the end of a large entity as at its start, and models deleted meanwhile neither shift nor
    /// hide the others. The read ends at the highest key the entity had when it began: models added
    /// later have higher keys, and whoever reads the whole store follows its history from before
    /// the read began for them.
    func readPage(
        _ position: inout EntityReadPosition, entity: String, limit: Int, filter: StoreFilter?
    ) throws -> (rows: [DefaultSnapshot], exhausted: Bool) {
        guard let after = position.after else {
            let rows = try fetch(entity, filter: filter, offset: 0, limit: limit)
            position.after = rows.last?.persistentIdentifier.primaryKey
            position.offset = rows.count
            position.through = nil
            guard rows.count == limit else { return (rows, true) }
            position.through = try lastKey(of: entity)
            return (rows, false)
        }
        if position.through == nil { position.through = try lastKey(of: entity) }
        guard case .int(var reached) = after, case .int(let last)? = position.through else {
            return try readPageByPosition(&position, entity: entity, limit: limit, filter: filter)
        }
        var rows: [DefaultSnapshot] = []
        let widest = Int64(limit) * 16
        var window = Int64(limit)
        while rows.count < limit, reached < last {
            let upper = reached + min(window, last - reached)
            let keys = Set(
                (reached + 1...upper).map {
                    PersistentIdentifier.identifier(for: store.identifier, entityName: entity, primaryKey: $0)
                })
            let found = try fetch(entity, filter: filter.map { .and([.identifiers(keys), $0]) } ?? .identifiers(keys))
            let wanted = limit - rows.count
            if found.count > wanted {
                rows += found.prefix(wanted)
                reached = rows.last?.persistentIdentifier.primaryKey.intValue ?? upper
            } else {
                rows += found
                reached = upper
            }
            // Few models in the window (deleted ones, or ones the filter leaves out): widen the next.
            if found.count < Int(window / 2) { window = min(window * 2, widest) }
        }
        position.after = .int(reached)
        position.offset += rows.count
        return (rows, reached >= last)
    }

    /// The highest primary key an entity has now, or `nil` when it has none.
    ///
    /// Found by position, once per entity of a whole read. Models deleted between the count and the
    /// read leave the read empty, and it runs again; models added meanwhile have higher keys than
    /// every model the read must cover.
    private func lastKey(of entity: String) throws -> PrimaryKey? {
        while true {
            let count = try count(entity)
            guard count > 0 else { return nil }
            if let row = try fetch(entity, offset: count - 1, limit: 1).first {
                return row.persistentIdentifier.primaryKey
            }
        }
    }

    /// ``readPage(_:entity:limit:filter:)`` for a store with text keys, which can only be asked for
    /// models by position: from one model before the page, which should be the last one read. If
    /// models before it were deleted, it moved back: the read scans back until it is found (or the
    /// start is reached), skips what was read already, and reads on until the page is full, so
    /// deletions never make a page short (which would end the entity early) or skip models.
    private func readPageByPosition(
        _ position: inout EntityReadPosition, entity: String, limit: Int, filter: StoreFilter?
    ) throws -> (rows: [DefaultSnapshot], exhausted: Bool) {
        guard let after = position.after else { return ([], true) }
        var start = max(0, position.offset - 1)
        while true {
            let page = try fetch(entity, filter: filter, offset: start, limit: limit + 1)
            guard start == 0 || (page.first.map { $0.persistentIdentifier.primaryKey <= after } ?? false) else {
                start = max(0, start - limit)
                continue
            }
            let skipped = page.prefix { $0.persistentIdentifier.primaryKey <= after }.count
            var rows = Array(page.dropFirst(skipped))
            var next = start + page.count
            var exhausted = page.count < limit + 1
            while rows.count < limit && !exhausted {
                let wanted = limit - rows.count
                let more = try fetch(entity, filter: filter, offset: next, limit: wanted)
                rows += more
                next += more.count
                exhausted = more.count < wanted
            }
            if rows.count > limit {
                rows.removeLast(rows.count - limit)
                exhausted = false
            }
            if let last = rows.last { position.after = last.persistentIdentifier.primaryKey }
            position.offset = start + skipped + rows.count
            return (rows, exhausted)
        }
    }
}
