import Foundation
import ModelStore

/// History (``HistoryProviding``): every transaction recorded with its changes, author, token and
/// tombstones; tokens that survive reopening and expire when history is deleted.
enum HistoryCases {
    typealias Transaction = DefaultHistoryTransaction

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .history, "transactionsRecordEveryChange",
            "Each save is one transaction listing its inserts, updates (with the changed attributes) and deletes.",
            requires: .history, body: recordEveryChange),
        CaseDefinition(
            .history, "transactionsCarryAuthorAndOrder",
            "Transactions carry the saving context's author and come in commit order with increasing tokens.",
            requires: .history, body: authorAndOrder),
        CaseDefinition(
            .history, "tombstonesKeepPreservedValues",
            "A delete's tombstone keeps exactly the attributes marked .preserveValueOnDeletion.",
            requires: .history, body: tombstones),
        CaseDefinition(
            .history, "tokensResumeAfterReopen",
            "A token taken before closing fetches exactly the later transactions after reopening (durable stores).",
            requires: [.history, .durability], body: resumeAfterReopen),
        CaseDefinition(
            .history, "deletingHistoryExpiresTokens",
            "After deleting history, a token pointing into it fails with the history-token-expired error.",
            requires: .history, body: expiry),
        CaseDefinition(
            .history, "batchChangesAppearInHistory",
            "Batch deletes, updates and inserts are recorded as transactions like saves.",
            requires: [.history, .batching], body: batches),
        CaseDefinition(
            .history, "failedSavesRecordNothing",
            "A save the store refuses (a unique constraint violated) records no transaction: history holds a "
                + "transaction exactly when its changes are stored.",
            requires: .history, body: failedSaves),
        CaseDefinition(
            .history, "deletedHistoryStaysDeletedAfterReopen",
            "History deleted before closing stays deleted after reopening, its tokens stay expired, and tokens keep "
                + "increasing past every deleted transaction (durable stores).",
            requires: [.history, .durability], body: deletedHistoryAfterReopen),
        CaseDefinition(
            .history, "everyKindOfChangeKeepsItsHistoryAfterReopen",
            "The transactions of a save, a batch insert, a batch update and a batch delete, the last changes before "
                + "closing, come back unchanged after reopening (durable stores).",
            requires: [.history, .durability, .batching], body: everyKindAfterReopen),
    ]

    // MARK: Cases

    private static func recordEveryChange(_ env: CaseEnvironment) throws {
        let container = try env.openContainer()
        let context = env.freshContext(container)
        let entries = (0..<3).map { entry(100 + $0, label: "entry-\($0)") }
        for entry in entries { context.insert(entry) }
        let tokens = try savingTokens(context, "saving three log entries")
        let ids = entries.map(\.persistentModelID)
        var history = try fetch(env, context, "reading the history after the first save")
        let first = try onlyTransaction(history, env, "after saving three new models")
        try env.checkEqual(
            Set(first.changes.compactMap(insertedID)), Set(ids),
            "the first transaction does not list exactly the three inserted models (under their permanent identifiers)")
        try env.checkEqual(
            tokens, [first.token], "the didSave notification's history token is not the recorded transaction's token")

        entries[1].label = "entry-1-renamed"
        try env.step("saving a changed label") { try context.save() }
        context.delete(entries[2])
        try env.step("saving a delete") { try context.save() }
        history = try fetch(env, context, "reading the history after an update and a delete")
        try env.checkEqual(history.count, 3, "three saves did not record three transactions")
        try env.check(
            zip(history, history.dropFirst()).allSatisfy { $0.token < $1.token },
            "without a sort descriptor, the history does not come oldest first, or its tokens do not increase",
            found: "\(history.map(\.token))")
        let update = try env.require(
            history[1].changes.first.flatMap(updateOf), "the second transaction records no update of a LogEntry")
        try env.checkEqual(
            history[1].changes.count, 1, "a save that changed one model records other changes too")
        try env.checkEqual(update.changedPersistentIdentifier, ids[1], "the update names the wrong model")
        try env.checkEqual(
            update.updatedAttributes.names, ["label"], "the update does not name exactly the attribute that changed")
        try env.check(
            update.updatedAttributes.contains(\LogEntry.label) && !update.updatedAttributes.contains(\LogEntry.bucket),
            "the update's updatedAttributes does not contain \\LogEntry.label, or contains \\LogEntry.bucket")
        try env.checkEqual(
            history[2].changes.map(\.changedPersistentIdentifier), [ids[2]],
            "the third transaction does not record exactly the deleted model")
        try env.check(
            history[2].changes.allSatisfy { if case .delete = $0 { true } else { false } },
            "the third transaction records the delete as another kind of change")
        context.insert(entry(200, label: "unchanged"))
        try env.step("saving one more model") { try context.save() }
        try env.step("saving with no changes") { try context.save() }
        try env.checkEqual(
            try fetch(env, context, "reading the history after a save without changes").count, 4,
            "a save with no changes recorded a transaction, or the last save recorded none")
    }

    private static func authorAndOrder(_ env: CaseEnvironment) throws {
        let container = try env.openContainer()
        for (index, author) in ["alpha", "beta", "alpha"].enumerated() {
            let context = env.freshContext(container)
            context.author = author
            context.insert(entry(index, label: "by-\(author)-\(index)"))
            try env.step("saving as '\(author)'") { try context.save() }
        }
        let context = env.freshContext(container)
        let history = try fetch(env, context, "reading the history")
        try env.checkEqual(
            history.map(\.author), ["alpha", "beta", "alpha"],
            "transactions do not carry their contexts' authors in commit order")
        try env.check(
            zip(history, history.dropFirst()).allSatisfy { $0.token < $1.token },
            "tokens do not increase in commit order", found: "\(history.map(\.token))")
        let byAlpha = try fetch(
            env, context, "reading alpha's transactions",
            HistoryDescriptor(predicate: #Predicate<Transaction> { $0.author == "alpha" }))
        try env.checkEqual(
            byAlpha.map(\.token), [history[0].token, history[2].token],
            "a predicate on the author selects the wrong transactions")
        var newestFirst = HistoryDescriptor<Transaction>(sortBy: [SortDescriptor(\.token, order: .reverse)])
        newestFirst.fetchLimit = 2
        try env.checkEqual(
            try fetch(env, context, "reading the two newest transactions", newestFirst).map(\.token),
            [history[2].token, history[1].token],
            "a sort by token, newest first, with a limit of 2 returns the wrong transactions")
    }

    private static func tombstones(_ env: CaseEnvironment) throws {
        let container = try env.openContainer()
        let context = env.freshContext(container)
        let kept = entry(7, label: "kept-label")
        let other = entry(8, label: "other-label")
        context.insert(kept)
        context.insert(other)
        try env.step("saving two log entries") { try context.save() }
        let ids = [kept.persistentModelID, other.persistentModelID]
        kept.label = "changed-before-delete"
        try env.step("saving a changed label") { try context.save() }
        context.delete(kept)
        context.delete(other)
        try env.step("deleting both") { try context.save() }
        let last = try env.require(
            try fetch(env, context, "reading the history").last, "the history is empty after three saves")
        let deletes = last.changes.compactMap { change -> DefaultHistoryDelete<LogEntry>? in
            if case .delete(let delete as DefaultHistoryDelete<LogEntry>) = change { return delete }
            return nil
        }
        try env.checkEqual(
            Set(deletes.map(\.changedPersistentIdentifier)), Set(ids),
            "the delete transaction does not list both models")
        for delete in deletes {
            let expected = delete.changedPersistentIdentifier == ids[0] ? "changed-before-delete" : "other-label"
            try env.checkEqual(
                delete.tombstone[\.label], expected,
                "a tombstone does not keep the deleted model's last .preserveValueOnDeletion value")
            try env.checkEqual(
                Set(delete.tombstone.values.keys), ["label"],
                "a tombstone keeps attributes not marked .preserveValueOnDeletion (or misses the marked one)")
            try env.check(
                delete.tombstone[\.sequence] == nil,
                "a tombstone returns a value for an attribute that is not preserved")
        }
    }

    private static func resumeAfterReopen(_ env: CaseEnvironment) throws {
        let token = try env.session { container in
            let context = env.freshContext(container)
            context.insert(entry(1, label: "before-close"))
            try env.step("saving before closing") { try context.save() }
            return try env.require(
                try fetch(env, context, "reading the history before closing").last?.token,
                "the history is empty after a save")
        }
        try env.session { container in
            let context = env.freshContext(container)
            context.author = "after"
            context.insert(entry(2, label: "after-reopen"))
            try env.step("saving after reopening") { try context.save() }
            let later = try fetch(
                env, context, "reading the history after the token taken before closing",
                HistoryDescriptor(predicate: #Predicate<Transaction> { $0.token > token }))
            try env.checkEqual(
                later.map(\.author), ["after"],
                "a token taken before closing does not select exactly the later transaction")
            try env.check(later[0].token > token, "the token of a transaction saved after reopening is not larger")
            let all = try fetch(env, context, "reading the whole history after reopening")
            try env.checkEqual(all.count, 2, "the history did not survive reopening")
        }
    }

    private static func expiry(_ env: CaseEnvironment) throws {
        let container = try env.openContainer()
        let context = env.freshContext(container)
        let tokens = try threeTransactionsWithTwoDeleted(env, context)
        let (first, second) = (tokens[0], tokens[1])
        let kept = try fetch(env, context, "reading the whole history after deleting part of it").map(\.token)
        try env.check(
            kept.contains(tokens[2]), "deleteHistory deleted a transaction its descriptor did not select",
            expected: "\([tokens[2]])", found: "\(kept)")
        try env.checkEqual(
            kept, [tokens[2]],
            "deleteHistory left transactions its descriptor selected (deleted transactions are still returned)")
        do {
            let gap = try context.fetchHistory(
                HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token > first }))
            throw env.failure(
                "a token pointing into deleted history fetched \(gap.count) transaction(s) with a silent gap "
                    + "instead of throwing historyTokenExpired")
        } catch DataStoreError.historyTokenExpired {
            // What the contract asks for.
        }
        try env.checkEqual(
            try fetch(
                env, context, "reading after the newest deleted token",
                HistoryDescriptor(predicate: #Predicate<Transaction> { $0.token > second })
            ).map(\.token), [tokens[2]], "the history after the deleted part is wrong")
        context.insert(entry(3, label: "after-delete"))
        try env.step("saving after deleting history") { try context.save() }
        let newest = try fetch(env, context, "reading the history after one more save").map(\.token)
        try env.check(
            newest.count == 2 && newest[1] > tokens[2],
            "after deleting history, the next save's token is not larger than every earlier one (tokens were reused)",
            found: "\(newest)")
    }

    private static func failedSaves(_ env: CaseEnvironment) throws {
        let container = try env.openContainer()
        let context = env.freshContext(container)
        context.insert(entry(1, label: "first"))
        try env.step("saving a log entry") { try context.save() }
        let before = try fetch(env, context, "reading the history after one save")
        try env.checkEqual(before.count, 1, "one save did not record one transaction")
        context.insert(entry(2, label: "second"))
        context.insert(entry(1, label: "duplicate sequence"))
        try env.expectError(
            [.uniqueConstraintViolation], "saving a log entry whose unique sequence is taken",
            ifItSucceeds: "a save that violates a unique constraint succeeded"
        ) { try context.save() }
        context.rollback()
        if env.capabilities.contains(.batching) {
            try env.expectError(
                [.uniqueConstraintViolation], "batch-inserting a log entry whose unique sequence is taken",
                ifItSucceeds: "a batch insert that violates a unique constraint succeeded"
            ) {
                _ = try context.insert(LogEntry.self, rows: [[.set(\.sequence, to: 1), .set(\.label, to: "batch")]])
            }
        }
        try env.checkEqual(
            try fetch(env, context, "reading the history after the failed saves").map(\.token),
            before.map(\.token),
            "a failed save recorded a transaction: history must hold a transaction exactly when its changes are "
                + "stored")
        context.insert(entry(3, label: "third"))
        try env.step("saving after the failed save") { try context.save() }
        let after = try fetch(env, context, "reading the history after the next save")
        try env.checkEqual(after.count, 2, "a save after a failed one did not record exactly one more transaction")
        try env.check(after[1].token > after[0].token, "tokens do not increase", found: "\(after.map(\.token))")
    }

    private static func deletedHistoryAfterReopen(_ env: CaseEnvironment) throws {
        let tokens = try env.session { container in
            try threeTransactionsWithTwoDeleted(env, env.freshContext(container))
        }
        try env.session { container in
            let context = env.freshContext(container)
            try env.checkEqual(
                try fetch(env, context, "reading the whole history after reopening").map(\.token), [tokens[2]],
                "history deleted before closing came back after reopening (the delete was not persisted)")
            let first = tokens[0]
            try env.expectError(
                [.historyTokenExpired], "fetching after a token that was deleted before closing",
                ifItSucceeds:
                    "after reopening, a token pointing into deleted history fetched transactions with a silent gap "
                    + "instead of throwing historyTokenExpired (how far history was deleted was not persisted)"
            ) {
                _ = try context.fetchHistory(HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token > first }))
            }
            try env.step("deleting the rest of the history") {
                try context.deleteHistory(HistoryDescriptor<Transaction>())
            }
        }
        try env.session { container in
            let context = env.freshContext(container)
            context.insert(entry(9, label: "after-deleting-everything"))
            try env.step("saving after deleting every transaction and reopening") { try context.save() }
            let history = try fetch(env, context, "reading the history after reopening and saving")
            try env.checkEqual(history.count, 1, "after deleting every transaction, one save did not record one")
            try env.check(
                history[0].token > tokens[2],
                "after deleting every transaction and reopening, tokens started again instead of increasing "
                    + "(the newest transaction number was not persisted)",
                found: "\(history[0].token) after \(tokens[2])")
        }
    }

    private static func batches(_ env: CaseEnvironment) throws {
        let container = try env.openContainer()
        let context = env.freshContext(container)
        let inserted = try env.step("batch-inserting three log entries") {
            try context.insert(
                LogEntry.self,
                rows: (0..<3).map {
                    [.set(\.sequence, to: 10 + $0), .set(\.label, to: "batch-\($0)"), .set(\.bucket, to: $0)]
                })
        }
        let updated = try env.step("batch-updating the entries in bucket 1 or 2") {
            try context.update(LogEntry.self, where: #Predicate { $0.bucket >= 1 }, set: [.set(\.label, to: "updated")])
        }
        try env.checkEqual(updated, 2, "the batch update changed the wrong number of models")
        try env.step("batch-deleting bucket 2") {
            try context.delete(model: LogEntry.self, where: #Predicate { $0.bucket == 2 })
        }
        let history = try fetch(env, context, "reading the history after three batch operations")
        try env.checkEqual(history.count, 3, "three batch operations did not record three transactions")
        try env.checkEqual(
            Set(history[0].changes.compactMap(insertedID)), Set(inserted),
            "the batch insert's transaction does not list exactly the inserted models")
        try env.checkEqual(
            Set(history[1].changes.compactMap { updateOf($0)?.changedPersistentIdentifier }), Set(inserted[1...]),
            "the batch update's transaction does not list exactly the updated models")
        try env.check(
            history[1].changes.compactMap(updateOf).allSatisfy { $0.updatedAttributes.names == ["label"] },
            "the batch update's changes do not name exactly the attribute it set")
        try env.checkEqual(
            history[2].changes.map(\.changedPersistentIdentifier), [inserted[2]],
            "the batch delete's transaction does not list exactly the deleted model")
    }

    private static func everyKindAfterReopen(_ env: CaseEnvironment) throws {
        /// What reopening must keep of a transaction: its token, author and changed models, in order.
        func summary(_ history: [Transaction]) -> [String] {
            history.map { transaction in
                "\(transaction.token) by \(transaction.author ?? "nil"): "
                    + transaction.changes.map { "\($0.changedPersistentIdentifier)" }.joined(separator: ", ")
            }
        }
        let before = try env.session { container in
            let context = env.freshContext(container)
            context.author = "saver"
            context.insert(entry(1, label: "saved"))
            try env.step("saving a log entry") { try context.save() }
            try env.step("batch-inserting two log entries") {
                _ = try context.insert(
                    LogEntry.self, rows: (2...3).map { [.set(\.sequence, to: $0), .set(\.label, to: "batch-\($0)")] })
            }
            try env.step("batch-updating the entries from 2 up") {
                try context.update(
                    LogEntry.self, where: #Predicate { $0.sequence >= 2 }, set: [.set(\.label, to: "updated")])
            }
            try env.step("batch-deleting entry 3") {
                try context.delete(model: LogEntry.self, where: #Predicate { $0.sequence == 3 })
            }
            let history = try fetch(env, context, "reading the history before closing")
            try env.checkEqual(history.count, 4, "a save and three batch operations did not record four transactions")
            return summary(history)
        }
        try env.session { container in
            try env.checkEqual(
                summary(try fetch(env, env.freshContext(container), "reading the history after reopening")), before,
                "the history came back different after reopening: the history of a kind of change was not persisted "
                    + "with the change (the last changes before closing were batch operations)")
        }
    }

    // MARK: Helpers

    /// Saves three transactions, deletes the history up to the second, and returns the three tokens.
    private static func threeTransactionsWithTwoDeleted(
        _ env: CaseEnvironment, _ context: ModelContext
    ) throws -> [DefaultHistoryToken] {
        for index in 0..<3 {
            context.insert(entry(index, label: "entry-\(index)"))
            try env.step("saving transaction \(index + 1)") { try context.save() }
        }
        let tokens = try fetch(env, context, "reading the history").map(\.token)
        try env.checkEqual(tokens.count, 3, "three saves did not record three transactions")
        let second = tokens[1]
        try env.step("deleting the history up to the second transaction") {
            try context.deleteHistory(HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token <= second }))
        }
        return tokens
    }

    private static func entry(_ sequence: Int, label: String) -> LogEntry {
        let entry = LogEntry()
        entry.sequence = sequence
        entry.label = label
        entry.bucket = sequence % 3
        return entry
    }

    private static func fetch(
        _ env: CaseEnvironment, _ context: ModelContext, _ what: String,
        _ descriptor: HistoryDescriptor<Transaction> = HistoryDescriptor()
    ) throws -> [Transaction] {
        try env.step(what) { try context.fetchHistory(descriptor) }
    }

    private static func onlyTransaction(_ history: [Transaction], _ env: CaseEnvironment, _ when: String) throws
        -> Transaction
    {
        try env.checkEqual(history.count, 1, "\(when), the history does not hold exactly one transaction")
        return history[0]
    }

    /// Saves and returns the history tokens the `didSave` notification carried.
    private static func savingTokens(_ context: ModelContext, _ what: String) throws -> [DefaultHistoryToken] {
        let tokens = TokenBox()
        let observer = NotificationCenter.default.addObserver(
            forName: ModelContext.didSave, object: context, queue: nil
        ) { note in
            tokens.value =
                note.userInfo?[ModelContext.NotificationKey.historyTokens.rawValue] as? [DefaultHistoryToken] ?? []
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        return tokens.value
    }

    private static func insertedID(_ change: HistoryChange) -> PersistentIdentifier? {
        if case .insert(let insert) = change { return insert.changedPersistentIdentifier }
        return nil
    }

    private static func updateOf(_ change: HistoryChange) -> DefaultHistoryUpdate<LogEntry>? {
        if case .update(let update as DefaultHistoryUpdate<LogEntry>) = change { return update }
        return nil
    }
}

/// The tokens a notification observer saw (the observer runs synchronously on the saving thread).
private final class TokenBox: @unchecked Sendable {
    // Safety: written by the didSave observer, which NotificationCenter calls synchronously inside
    // save(), and read after save() returns, on the same thread.
    var value: [DefaultHistoryToken] = []
}
