import Foundation
import ModelStore
import ModelStoreAdapterKit

/// History through the adapter kit's `StoreHistory`, kept in the store's file with the changes it
/// records, with the history mutants.
///
/// A transaction's changes are the difference between the table before and after the change (what
/// the store really did), so every kind of change, saves and batches alike, is recorded the same way.
extension MutantStore: HistoryProviding {
    func fetchHistory(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>
    ) throws -> [DefaultHistoryTransaction] {
        var descriptor = descriptor
        switch mutation {
        case .historyIgnoresFetchLimit: descriptor.fetchLimit = nil
        case .historyIgnoresSort: descriptor.sortBy = []
        case .historyIgnoresPredicate: descriptor.predicate = nil
        default: break
        }
        let history = try locked(writing: false) { $0.history }
        let transactions = try history.transactions(descriptor, schema: schema, storeIdentifier: identifier)
        return has(.historyNewestFirst) && descriptor.sortBy.isEmpty ? transactions.reversed() : transactions
    }

    func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try locked(writing: true) { state in
            var history = state.history
            switch mutation {
            case .historyDeleteRemovesEverything:
                history.delete(throughNumber: history.lastNumber)
            case .historyDeleteRemovesOnlyTheOldest, .historyDeleteDoesNotExpireTokens:
                let doomed = try StoreHistory.transactions(
                    history.records, descriptor, schema: schema, storeIdentifier: identifier, expiredThrough: 0
                ).map(\.token.transactionNumber)
                if has(.historyDeleteRemovesOnlyTheOldest) {
                    if let oldest = doomed.min() { history.delete(throughNumber: oldest) }
                } else {
                    history = StoreHistory(
                        records: history.records.filter { !doomed.contains($0.number) },
                        lastNumber: history.lastNumber, expiredThrough: history.expiredThrough)
                }
            default:
                try history.delete(descriptor, schema: schema, storeIdentifier: identifier)
            }
            try persist(state.table, history, .deleteHistory, &state)
            state.history = history
        }
    }

    /// The history a file's image holds (the counters forgotten by the mutant that does not keep them).
    static func history(in image: Image, mutation: Mutation?) -> StoreHistory {
        guard mutation != .historyCountersNotPersisted else { return StoreHistory(records: image.history ?? []) }
        return StoreHistory(
            records: image.history ?? [], lastNumber: image.lastTransaction,
            expiredThrough: image.expiredThrough ?? 0)
    }

    /// Records the transaction that turned `before` into `next`, writes both, and makes them the
    /// store's state; returns the transaction's token (`nil` when nothing changed).
    @discardableResult
    func commit(
        _ next: SnapshotTable, _ change: Change, from before: SnapshotTable, author: String?,
        remapped: [PersistentIdentifier: PersistentIdentifier] = [:], _ state: inout State
    ) throws -> DefaultHistoryToken? {
        var history = state.history
        var isBatch = true
        if case .save = change { isBatch = false }
        let token = record(
            historyChanges(from: before, to: next, remapped: remapped, isBatch: isBatch), author: author,
            isBatch: isBatch, in: &history)
        var next = next
        if has(.mintsAfterLargestStored) {
            // As a table whose next key is the largest stored key plus one.
            var rebuilt = SnapshotTable(schema: schema)
            try rebuilt.load(next.allSnapshots)
            next = rebuilt
        }
        try persist(next, history, change, &state)
        state.table = next
        state.history = history
        return token
    }

    /// The mutant that records a save that failed: a transaction of what the request asked for.
    func recordFailedSave(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ state: inout State) {
        var history = state.history
        let changes =
            request.inserted.map { StoreHistoryRecord.Change(.insert, $0.persistentIdentifier) }
            + request.updated.compactMap { StoreHistoryRecord.Change.update(from: nil, to: $0) }
        history.record(changes, author: request.editingState.author)
        let change = Change.save(inserts: true, updates: true, deletes: false, equalUpdatesOnly: false)
        guard (try? persist(state.table, history, change, &state)) != nil else { return }
        state.history = history
    }

    private func record(
        _ changes: [StoreHistoryRecord.Change], author: String?, isBatch: Bool, in history: inout StoreHistory
    ) -> DefaultHistoryToken? {
        if has(.historySavesNotRecorded) && !isBatch || has(.historyBatchesNotRecorded) && isBatch { return nil }
        let author = has(.historyAuthorDropped) ? nil : author
        var number: Int64?
        if has(.historyTokensRepeat) {
            if let record = history.nextRecord(changes, author: author) {
                history.append(
                    StoreHistoryRecord(number: 1, timestamp: record.timestamp, author: author, changes: changes))
                number = 1
            }
        } else {
            number = history.record(changes, author: author)
        }
        return number.map { DefaultHistoryToken(storeIdentifier: identifier, transactionNumber: $0) }
    }

    /// The changes that turn `before` into `after`: inserts, updates naming the properties whose stored
    /// values changed, and deletes with their tombstones, with the history mutants applied.
    private func historyChanges(
        from before: SnapshotTable, to after: SnapshotTable, remapped: [PersistentIdentifier: PersistentIdentifier],
        isBatch: Bool
    ) -> [StoreHistoryRecord.Change] {
        let temporary = Dictionary(remapped.map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var inserts: [StoreHistoryRecord.Change] = []
        var updates: [StoreHistoryRecord.Change] = []
        var deletes: [StoreHistoryRecord.Change] = []
        for snapshot in after.allSnapshots {
            let id = snapshot.persistentIdentifier
            guard let old = before.snapshot(for: id) else {
                let recorded = has(.historyInsertsUnderTemporaryIdentifiers) ? temporary[id] ?? id : id
                inserts.append(StoreHistoryRecord.Change(.insert, recorded))
                continue
            }
            guard var update = StoreHistoryRecord.Change.update(from: old, to: snapshot) else { continue }
            if has(.historySkipsEquivalentValues) {
                // As a store that asks Swift's == whether a value changed.
                update.updatedProperties.removeAll { name in
                    guard let slot = snapshot.entity.properties.first(where: { $0.name == name })?.slot else {
                        return false
                    }
                    switch (old.values[slot], snapshot.values[slot]) {
                    case (.string(let before), .string(let after)): return before == after
                    case (.double(let before), .double(let after)): return before == after
                    default: return false
                    }
                }
                if update.updatedProperties.isEmpty { continue }
            }
            let names = snapshot.entity.properties.map(\.name)
            switch mutation {
            case .historyUpdatesListEveryProperty: update.updatedProperties = names
            case .historyUpdatesNameTheNextProperty:
                update.updatedProperties = update.updatedProperties.map { name in
                    names[((names.firstIndex(of: name) ?? 0) + 1) % names.count]
                }
            default: break
            }
            updates.append(update)
        }
        for snapshot in before.allSnapshots where after.snapshot(for: snapshot.persistentIdentifier) == nil {
            var delete = StoreHistoryRecord.Change.deletion(of: snapshot)
            switch mutation {
            case .historyTombstonesEmpty: delete.tombstone = [:]
            case .historyTombstonesKeepEverything:
                for attribute in snapshot.entity.attributes {
                    delete.tombstone[attribute.name] = snapshot.values[attribute.slot]
                }
            default: break
            }
            deletes.append(delete)
        }
        let changes = inserts + updates + deletes
        return has(.historyBatchesRecordOneChange) && isBatch ? Array(changes.prefix(1)) : changes
    }
}
