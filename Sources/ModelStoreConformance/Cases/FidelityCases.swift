import Foundation
import ModelStore

/// Identity, history fidelity, every kind of change seen by a second store, and schema versions: what a
/// store keeps of its own bookkeeping, beyond the values of its models.
enum FidelityCases {
    typealias Transaction = DefaultHistoryTransaction

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .identifiers, "neverReusedAfterDeletingTheNewest",
            "After the newest model is deleted, and after every model is, new models get identifiers no earlier "
                + "model had (a table that mints the largest stored key plus one reuses them)."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            var seen = Set(try insertEntries(1...3, context, env))
            let newest = try env.require(
                try context.fetch(FetchDescriptor<LogEntry>()).max { $0.persistentModelID < $1.persistentModelID },
                "the saved entries are missing")
            context.delete(newest)
            try env.step("deleting the newest entry") { try context.save() }
            let next = try insertEntries(4...4, context, env)
            try env.check(
                seen.isDisjoint(with: next),
                "a model inserted after the newest was deleted got the deleted model's identifier: identifier reused",
                found: "\(next)")
            seen.formUnion(next)
            try env.step("deleting every entry") { try context.delete(model: LogEntry.self) }
            let after = try insertEntries(5...6, context, env)
            try env.check(
                seen.isDisjoint(with: after),
                "models inserted after every model was deleted got identifiers of deleted ones: identifier reused",
                found: "\(after)")
        },
        CaseDefinition(
            .identifiers, "neverReusedAfterErase",
            "After erase(), new models get identifiers no erased model had.", requires: .erase
        ) { env in
            let container = try env.openContainer()
            let before = Set(try insertEntries(1...3, env.freshContext(container), env))
            env.releaseContexts()
            try env.step("erasing the container") { try container.erase() }
            let after = try insertEntries(1...3, env.freshContext(container), env)
            try env.check(
                before.isDisjoint(with: after),
                "models inserted after erase() got identifiers of erased ones: identifier reused (an identifier kept "
                    + "from before, in an app's settings or another store, would name a different model)",
                found: "\(after)")
        },
        CaseDefinition(
            .identifiers, "notConfusedAcrossEntities",
            "An identifier of one entity never selects a model of another, even where their keys are equal."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            let folder = Folder()
            folder.name = "F"
            context.insert(folder)
            let entry = LogEntry()
            entry.sequence = 1
            context.insert(entry)
            try env.step("saving a folder and a log entry") { try context.save() }
            let entryIDs = [entry.persistentModelID]
            let folders = try env.step("fetching folders by the log entry's identifier") {
                try env.freshContext(container).fetch(
                    FetchDescriptor<Folder>(predicate: #Predicate { entryIDs.contains($0.persistentModelID) }))
            }
            try env.check(
                folders.isEmpty,
                "a fetch of folders by a log entry's identifier returned a folder: identifiers of different entities "
                    + "were confused (compared by key alone)", found: "\(folders.map(\.name))")
        },
        CaseDefinition(
            .history, "everyDetailSurvivesReopenAndASecondStore",
            "Each change's kind, identifier, changed attributes and tombstone come back the same after reopening and "
                + "from a second store on the same files.",
            requires: [.history, .durability]
        ) { env in
            let before = try env.session { container in
                let context = env.freshContext(container)
                context.author = "fidelity"
                let entries = try insertEntriesReturningModels(1...3, context, env)
                entries[0].label = "renamed"
                entries[1].bucket = 7
                try env.step("saving two updates") { try context.save() }
                context.delete(entries[2])
                try env.step("saving a delete") { try context.save() }
                return try historySummary(context, env, "reading the history before closing")
            }
            let container = try env.openContainer()
            try env.checkEqual(
                try historySummary(env.freshContext(container), env, "reading the history after reopening"), before,
                "a change's kind, identifier, changed attributes or tombstone came back different after reopening")
            if env.capabilities.contains(.multiProcessAccess) {
                let second = try env.openContainer()
                try env.checkEqual(
                    try historySummary(env.freshContext(second), env, "reading the history from a second store"),
                    before,
                    "a second store on the same files read the history differently")
            }
        },
        CaseDefinition(
            .history, "equivalentValueChangesAreRecorded",
            "An update to a value Swift's == calls equal but that is stored differently (a canonically equivalent "
                + "spelling, -0.0 for 0.0) is recorded as an update of exactly those attributes.",
            requires: .history
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            let specimen = Specimen()
            specimen.code = "equivalent"
            specimen.title = "\u{E9}"
            specimen.weight = 0
            context.insert(specimen)
            try env.step("saving a specimen") { try context.save() }
            specimen.title = "e\u{301}"
            specimen.weight = -0.0
            try env.step("saving an equivalent spelling and -0.0") { try context.save() }
            let last = try env.require(
                try env.step("reading the history") { try context.fetchHistory(HistoryDescriptor<Transaction>()) }
                    .last, "the history is empty")
            let updates = last.changes.compactMap { change -> DefaultHistoryUpdate<Specimen>? in
                if case .update(let update as DefaultHistoryUpdate<Specimen>) = change { return update }
                return nil
            }
            try env.checkEqual(
                updates.map(\.updatedAttributes.names), [["weight", "title"]],
                "a change to a canonically equivalent spelling and to -0.0 was not recorded as Swift sees it "
                    + "(stored values differ though equal by ==): not exactly the attributes that changed")
        },
        CaseDefinition(
            .history, "tokensFromBeforeEraseExpire",
            "After erase(), a history token from before it fails with historyTokenExpired, never a silent gap.",
            requires: [.history, .erase]
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            _ = try insertEntries(1...1, context, env)
            _ = try insertEntries(2...2, context, env)
            let first = try env.require(
                try env.step("reading the history") { try context.fetchHistory(HistoryDescriptor<Transaction>()) }
                    .first?.token, "the history is empty after two saves")
            env.releaseContexts()
            try env.step("erasing the container") { try container.erase() }
            try env.expectError(
                [.historyTokenExpired], "reading the history after a token from before erase()",
                ifItSucceeds: "a token from before erase() still reads history: silent gap"
            ) {
                _ = try env.freshContext(container).fetchHistory(
                    HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token > first }))
            }
        },
        CaseDefinition(
            .multiProcess, "everyKindOfChangeIsSeen",
            "A second store on the same files sees each kind of change the first makes: insert, update, delete, "
                + "batch insert, update and delete, and erase.",
            requires: [.multiProcessAccess, .durability, .batching]
        ) { env in
            let first = try env.openContainer()
            let second = try env.openContainer()
            let context = env.freshContext(first)
            func seen(after what: String) throws {
                let expected = try entryRows(in: first, env)
                try env.checkEqual(
                    try entryRows(in: second, env), expected,
                    "after \(what) by the first store, the second store did not see the first store's save")
            }
            let entries = try insertEntriesReturningModels(1...4, context, env)
            try seen(after: "an insert")
            entries[0].label = "updated"
            try env.step("saving an update") { try context.save() }
            try seen(after: "an update")
            context.delete(entries[1])
            try env.step("saving a delete") { try context.save() }
            try seen(after: "a delete")
            try env.step("batch-inserting two entries") {
                _ = try context.insert(
                    LogEntry.self, rows: (10...11).map { [.set(\.sequence, to: $0), .set(\.label, to: "batch-\($0)")] })
            }
            try seen(after: "a batch insert")
            try env.step("batch-updating entries from 10 up") {
                try context.update(
                    LogEntry.self, where: #Predicate { $0.sequence >= 10 }, set: [.set(\.label, to: "batch-updated")])
            }
            try seen(after: "a batch update")
            try env.step("batch-deleting entry 11") {
                try context.delete(model: LogEntry.self, where: #Predicate { $0.sequence == 11 })
            }
            try seen(after: "a batch delete")
            if env.capabilities.contains(.erase) {
                try env.step("erasing the first container") { try first.erase() }
                try seen(after: "erase()")
            }
        },
        CaseDefinition(
            .migrations, "newerStoredVersionIsRefused",
            "A store written at a newer schema version than the app's is refused with a DataStoreError, with or without "
                + "a plan, and nothing of it changes.",
            requires: [.durability, .migrations]
        ) { env in
            let configuration = try env.configuration()
            try env.step("saving notes at schema version 2.0.0") {
                let container = try ModelContainer(
                    for: Schema(versionedSchema: MigrationFixtures.V2.self), configurations: [configuration])
                let context = ModelContext(container)
                let note = MigrationFixtures.V2.Note()
                note.heading = "newer"
                note.words = 3
                context.insert(note)
                try context.save()
            }
            let directory = try env.storeDirectory()
            let files = try MigrationFixtures.files(in: directory)
            for plan in [nil, MigrationFixtures.Plan.self] as [(any SchemaMigrationPlan.Type)?] {
                try env.expectError(
                    [.invalidSchema, .unsupportedFeature, .corrupted],
                    "opening a store at version 2.0.0 with the schema at 1.0.0 "
                        + (plan == nil ? "and no plan" : "and a plan that ends at 2.0.0"),
                    ifItSucceeds: "a store written at a newer schema version was opened as if it were older"
                ) {
                    _ = try ModelContainer(
                        for: Schema(versionedSchema: MigrationFixtures.V1.self), migrationPlan: plan,
                        configurations: [configuration])
                }
                try env.check(
                    try MigrationFixtures.files(in: directory) == files,
                    "refusing a store at a newer schema version changed its files: a failed open MUST NOT write")
            }
        },
        CaseDefinition(
            .uniqueness, "compoundComparedValueByValue",
            "A compound constraint compares each property's value: models whose values would join into the same "
                + "text ('a1' and 1, 'a' and 11) are both stored, and models equal in every value are refused."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            let pairs: [(String, Int)] = [("a1", 1), ("a", 11), ("a|1", 1), ("a|", 11), ("", 111), ("1", 11)]
            for (index, pair) in pairs.enumerated() {
                let specimen = Specimen()
                specimen.code = "pair-\(index)"
                (specimen.series, specimen.serial) = pair
                context.insert(specimen)
            }
            try env.step(
                "saving specimens whose ('series', 'serial') differ but join into the same text "
                    + "('a1' 1 and 'a' 11 give 'a11')"
            ) { try context.save() }
            let stored = try env.storedSnapshots(Specimen.self, in: container).count
            try env.checkEqual(stored, pairs.count, "specimens with distinct ('series', 'serial') were lost")
            let clash = Specimen()
            clash.code = "clash"
            (clash.series, clash.serial) = ("a", 11)
            context.insert(clash)
            try env.expectError(
                [.uniqueConstraintViolation], "saving a duplicate ('series', 'serial')",
                ifItSucceeds: "a specimen equal in 'series' and 'serial' to a stored one was saved: compound unique "
                    + "constraint not enforced"
            ) { try context.save() }
        },
    ]

    // MARK: Helpers

    /// Inserts log entries with these sequences in one save; returns their permanent identifiers.
    static func insertEntries(
        _ sequences: ClosedRange<Int>, _ context: ModelContext, _ env: CaseEnvironment
    ) throws -> [PersistentIdentifier] {
        try insertEntriesReturningModels(sequences, context, env).map(\.persistentModelID)
    }

    /// Inserts log entries with these sequences in one save; returns the models.
    static func insertEntriesReturningModels(
        _ sequences: ClosedRange<Int>, _ context: ModelContext, _ env: CaseEnvironment
    ) throws -> [LogEntry] {
        let entries = sequences.map { sequence in
            let entry = LogEntry()
            entry.sequence = sequence
            entry.label = "entry-\(sequence)"
            entry.bucket = sequence % 3
            context.insert(entry)
            return entry
        }
        try env.step("saving log entries \(sequences)") { try context.save() }
        return entries
    }

    /// Every log entry of a container, as `sequence: label (bucket)` under its identifier, read in a fresh context.
    static func entryRows(in container: ModelContainer, _ env: CaseEnvironment) throws -> [String] {
        let entries = try env.step("fetching every log entry") {
            try env.freshContext(container).fetch(FetchDescriptor<LogEntry>())
        }
        return entries.map { "\($0.persistentModelID) \($0.sequence): \($0.label) (\($0.bucket))" }.sorted()
    }

    /// Each transaction's token and author, and each change's kind, identifier, changed attributes and tombstone.
    static func historySummary(_ context: ModelContext, _ env: CaseEnvironment, _ what: String) throws -> [String] {
        let history = try env.step(what) { try context.fetchHistory(HistoryDescriptor<Transaction>()) }
        return history.map { transaction in
            let changes = transaction.changes.map { change -> String in
                switch change {
                case .insert(let insert): "insert \(insert.changedPersistentIdentifier)"
                case .update(let update as DefaultHistoryUpdate<LogEntry>):
                    "update \(update.changedPersistentIdentifier) of \(update.updatedAttributes.names)"
                case .update(let update): "update \(update.changedPersistentIdentifier)"
                case .delete(let delete as DefaultHistoryDelete<LogEntry>):
                    "delete \(delete.changedPersistentIdentifier) keeping \(delete.tombstone.values.sorted { $0.key < $1.key })"
                case .delete(let delete): "delete \(delete.changedPersistentIdentifier)"
                }
            }
            return "\(transaction.token) by \(transaction.author ?? "nil"): " + changes.sorted().joined(separator: "; ")
        }
    }
}
