import Foundation

extension ModelContext {
    /// Posted before a context saves; `object` is the context. No `userInfo`.
    public static let willSave = Notification.Name("ModelStore.ModelContext.willSave")
    /// Posted after a context saved; `object` is the context; `userInfo` holds the changed
    /// identifiers under ``NotificationKey`` raw values.
    public static let didSave = Notification.Name("ModelStore.ModelContext.didSave")

    /// The `userInfo` keys of ``didSave``.
    public enum NotificationKey: String, Sendable {
        /// `[PersistentIdentifier]` of inserted models (permanent identifiers).
        case insertedIdentifiers
        /// `[PersistentIdentifier]` of updated models.
        case updatedIdentifiers
        /// `[PersistentIdentifier]` of deleted models.
        case deletedIdentifiers
        /// Present (`true`) when every identifier of the container may have changed, as after `erase()`.
        case invalidatedAllIdentifiers
        /// `[DefaultHistoryToken]`: the tokens of the transactions the save recorded, one per store
        /// that keeps history (``HistoryProviding``). Absent when no store recorded one.
        case historyTokens
    }

    /// Stores every pending insert, change and delete.
    ///
    /// Applies delete rules (`.cascade`, `.nullify`, `.deny`), checks relationship counts and
    /// uniqueness, then saves: each store atomically, and a save across several stores all or
    /// nothing (see ``DataStoreTwoPhaseSaving``). If anything fails, nothing of the save is stored
    /// and the context keeps its pending changes, so the caller can fix them or ``rollback()``.
    ///
    /// After a save no stored model refers to a model the save deleted: every reference to it is
    /// removed, in the store and in memory.
    public func save() throws {
        if automaticallyMergesChanges { mergePendingChanges() }
        processPendingChanges()
        guard hasChanges else { return }
        if duplicateInsertPolicy == .upsert && storesEnforceUniqueness {
            // Upserts are the rare case: save as is, and only when a unique value is taken fold the
            // inserted duplicates into the models that have them and save again. A failed save
            // stores nothing, in every store, so the second save starts from the same state.
            do {
                return try commitPendingChanges()
            } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
                guard try resolveDuplicateInserts() else { throw error }
            }
        } else {
            try resolveDuplicateInserts()
        }
        try commitPendingChanges()
    }

    /// Whether every store checks uniqueness itself, atomically with its write, and throws
    /// ``DataStoreError/Code/uniqueConstraintViolation``: then a save can try its inserts before
    /// looking for stored duplicates.
    private var storesEnforceUniqueness: Bool {
        container.channels.allSatisfy(\.enforcesUniqueness)
    }

    /// Commits every pending insert, change and delete, and clears the lists.
    private func commitPendingChanges() throws {
        let changed = changedModels.models.filter { $0.persistentBackingData.state == .registered }
        try commit(inserted: insertedModels.models, changed: changed, deleted: deletedModels.models)
        insertedModels.removeAll()
        changedModels.removeAll()
        deletedModels.removeAll()
    }

    /// Saves these inserts, changes and deletes. Models outside the three lists keep their pending
    /// changes.
    ///
    /// A save is a pipeline of named steps, each in its own file of this folder. Before it,
    /// ``save()`` folds duplicate inserts into the stored models that hold their unique values
    /// (`Save+Upsert.swift`). Then:
    /// 1. delete rules: what the save deletes, cascades to and unlinks (`Save+DeleteRules.swift`);
    /// 2. snapshots of the inserted, changed and deleted models (`Save+Snapshots.swift`);
    /// 3. conflicts: the merge policy meets changes saved elsewhere since they were read
    ///    (`Save+Conflicts.swift`);
    /// 4. checks: relationship counts and uniqueness (`Save+Checks.swift`);
    /// 5. the store write, through each store's ``StoreChannel`` (`Save+StoreWrite.swift`);
    /// 6. reconcile: the models take permanent identifiers and saved values (`Save+Reconcile.swift`).
    ///
    /// `inserted` is consumed, so that a save in chunks can let go of the list once the models have
    /// their identifiers (see ``bringModelsInStep(with:written:deletion:)``).
    func commit(
        inserted: consuming [any PersistentModel], changed: [any PersistentModel],
        deleted requested: [any PersistentModel]
    ) throws {
        guard DebugLog.level > 0 else {
            var prepared = try prepareCommit(
                inserted: consume inserted, changed: changed, deleted: requested, chunks: true)
            var written = try write(prepared.changes)
            return finishCommit(&prepared, written: &written)
        }
        let start = ContinuousClock.now
        do {
            var prepared = try prepareCommit(
                inserted: consume inserted, changed: changed, deleted: requested, chunks: true)
            let summary = prepared.changes.summary
            var written = try write(prepared.changes)
            finishCommit(&prepared, written: &written)
            DebugLog.write(1, "save: \(summary) in \(DebugLog.milliseconds(since: start))")
        } catch {
            DebugLog.write(1, "save failed after \(DebugLog.milliseconds(since: start)), nothing stored: \(error)")
            throw error
        }
    }

    /// A save's steps before the stores: delete rules, snapshots and checks (what ``commit`` and the
    /// asynchronous save share).
    struct PreparedCommit {
        let deletion: Deletion
        /// What the save writes; step 6 releases the inserted snapshots as soon as it has read them.
        var changes: Changes
    }

    /// Steps 1 and 2 and the checks; posts ``willSave``. With `chunks` on, a large insert's
    /// snapshots may be left for the store to read a chunk at a time (``Changes/insertsInChunks``):
    /// only when the store reads the request on this thread, so not for an asynchronous save.
    func prepareCommit(
        inserted: consuming [any PersistentModel], changed: [any PersistentModel],
        deleted requested: [any PersistentModel], chunks: Bool = false
    ) throws -> PreparedCommit {
        let deletion = try collectDeletions(requested)
        if let failure = faultFailures.values.min(by: { $0.message < $1.message }) { throw failure }
        var changes = try snapshots(inserted: consume inserted, changed: changed, deletion: deletion, chunks: chunks)
        try resolveConflicts(in: &changes)
        try checkRelationshipCounts(changes.inserted, changes.updated)
        try checkUniqueness(inserted: changes.inserted, updated: changes.updated, deleted: changes.deleted)
        NotificationCenter.default.post(name: Self.willSave, object: self)
        return PreparedCommit(deletion: deletion, changes: changes)
    }

    /// Step 6 after the stores wrote; posts ``didSave``. Releases the inserted snapshots (see
    /// ``bringModelsInStep(with:written:deletion:)``).
    func finishCommit(_ prepared: inout PreparedCommit, written: inout Written) {
        let insertedIDs = bringModelsInStep(with: &prepared.changes, written: &written, deletion: prepared.deletion)
        didSave(
            inserted: insertedIDs, updated: prepared.changes.updated.map(\.persistentIdentifier),
            deleted: prepared.changes.deleted.map(\.persistentIdentifier), historyTokens: written.historyTokens)
    }

    /// Posts ``didSave`` and publishes the change to the container's ``ModelContainer/changes``.
    func didSave(
        inserted: [PersistentIdentifier], updated: [PersistentIdentifier], deleted: [PersistentIdentifier],
        historyTokens: [DefaultHistoryToken]
    ) {
        Self.postDidSave(
            object: self, inserted: inserted, updated: updated, deleted: deleted, historyTokens: historyTokens)
        container.changeHub.publish(
            ModelContainerChange(
                inserted: inserted, updated: updated, deleted: deleted, author: author, historyTokens: historyTokens,
                origin: .context(editingState.id)))
    }

    /// Posts ``didSave`` with its `userInfo` keys, for `object`: a context, or a container after an
    /// erase (with ``NotificationKey/invalidatedAllIdentifiers``).
    static func postDidSave(
        object: AnyObject, inserted: [PersistentIdentifier] = [], updated: [PersistentIdentifier] = [],
        deleted: [PersistentIdentifier] = [], historyTokens: [DefaultHistoryToken] = [],
        invalidatesAllIdentifiers: Bool = false
    ) {
        var userInfo: [String: Any] = [
            NotificationKey.insertedIdentifiers.rawValue: inserted,
            NotificationKey.updatedIdentifiers.rawValue: updated,
            NotificationKey.deletedIdentifiers.rawValue: deleted,
        ]
        if !historyTokens.isEmpty { userInfo[NotificationKey.historyTokens.rawValue] = historyTokens }
        if invalidatesAllIdentifiers { userInfo[NotificationKey.invalidatedAllIdentifiers.rawValue] = true }
        NotificationCenter.default.post(name: didSave, object: object, userInfo: userInfo)
    }
}
