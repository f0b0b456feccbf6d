import Foundation
import ModelStore

/// Batch delete, update and insert, through the context and, for batching stores, directly.
enum BatchCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .batch, "batchDeleteMatchesPredicate",
            "delete(model:where:) deletes exactly the matching models, with and without relationships."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let context = env.freshContext(container)
            try env.step("batch-deleting log entries with 'bucket == 1'") {
                try context.delete(model: LogEntry.self, where: #Predicate { $0.bucket == 1 })
            }
            let remaining = try env.all(LogEntry.self, in: container, by: \.label).map(\.sequence).sorted()
            try env.checkEqual(
                remaining, seed.entries.filter { $0.bucket != 1 }.map(\.sequence).sorted(),
                "a batch delete of 'bucket == 1' left the wrong log entries: delete ignored or too broad")
            try env.step("batch-deleting notes with 'order == 2'") {
                try context.delete(model: Note.self, where: #Predicate { $0.order == 2 })
            }
            let notes = try env.all(Note.self, in: container, by: \.text).map(\.text)
            try env.checkEqual(
                notes, seed.notes.filter { $0.order != 2 }.map(\.text).sorted(),
                "a batch delete of notes with 'order == 2' left the wrong notes")
        },
        CaseDefinition(
            .batch, "batchDeleteEveryModel",
            "delete(model:) without a predicate deletes every saved model of the type and nothing else, detaches "
                + "the registered ones, leaves unsaved inserts pending, and names each deleted model in didSave."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let context = env.freshContext(container)
            let registered = try env.step("fetching every log entry") { try context.fetch(FetchDescriptor<LogEntry>()) }
            let pending = LogEntry()
            pending.sequence = 90_001
            pending.label = "pending"
            context.insert(pending)
            let reported = IdentifierBox()
            let observer = NotificationCenter.default.addObserver(
                forName: ModelContext.didSave, object: context, queue: nil
            ) { note in
                reported.value +=
                    note.userInfo?[ModelContext.NotificationKey.deletedIdentifiers.rawValue] as? [PersistentIdentifier]
                    ?? []
            }
            defer { NotificationCenter.default.removeObserver(observer) }
            try env.step("batch-deleting every log entry") { try context.delete(model: LogEntry.self) }
            try env.checkEqual(
                try env.count(LogEntry.self, in: container), 0,
                "log entries remain after a batch delete of every entry: delete incomplete")
            try env.check(
                reported.value.count == seed.entries.count
                    && Set(reported.value) == Set(registered.map(\.persistentModelID)),
                "didSave after a batch delete of every entry did not name exactly the \(seed.entries.count) deleted entries",
                found: "\(reported.value.count) identifiers")
            try env.check(
                registered.allSatisfy { $0.modelContext == nil },
                "entries registered in the deleting context are still attached after a batch delete of every entry")
            try env.checkEqual(
                try env.count(Note.self, in: container), seed.notes.count,
                "a batch delete of every log entry deleted notes, another type")
            try env.step("saving the entry inserted before the batch delete") { try context.save() }
            try env.checkEqual(
                try env.all(LogEntry.self, in: container, by: \.label).map(\.label), ["pending"],
                "an entry inserted but not yet saved before a batch delete of every entry was lost or deleted")
        },
        CaseDefinition(
            .batch, "batchUpdateMatchesPredicate",
            "update(_:where:set:) changes exactly the matching models and refreshes registered ones."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let context = env.freshContext(container)
            let registered = try env.step("fetching log entries") { try context.fetch(FetchDescriptor<LogEntry>()) }
            let changed = try env.step("batch-updating 'label' of entries with 'bucket == 2'") {
                try context.update(
                    LogEntry.self, where: #Predicate { $0.bucket == 2 }, set: [.set(\.label, to: "batch")])
            }
            let matching = seed.entries.filter { $0.bucket == 2 }.map(\.sequence).sorted()
            try env.checkEqual(changed, matching.count, "the batch update reported the wrong number of changed models")
            let fresh = try env.all(LogEntry.self, in: container, by: \.label)
            try env.checkEqual(
                fresh.filter { $0.label == "batch" }.map(\.sequence).sorted(), matching,
                "a batch update of 'bucket == 2' changed the wrong log entries: update dropped or too broad")
            let stale = registered.filter { $0.bucket == 2 && $0.label != "batch" }.map(\.sequence)
            try env.check(
                stale.isEmpty, "models registered in the updating context were not refreshed by the batch update",
                found: "stale entries \(stale)")
        },
        CaseDefinition(
            .batch, "batchUpdateIntoDuplicateChangesNothing",
            "A batch update that would duplicate a unique value fails and changes nothing."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let context = env.freshContext(container)
            try env.expectError(
                [.uniqueConstraintViolation], "batch-updating 'sequence' of several entries to 999",
                ifItSucceeds:
                    "a batch update giving several log entries 'sequence' 999 succeeded: unique constraint not enforced"
            ) {
                try context.update(
                    LogEntry.self, where: #Predicate { $0.bucket == 0 }, set: [.set(\.sequence, to: 999)])
            }
            let sequences = try env.all(LogEntry.self, in: container, by: \.label).map(\.sequence).sorted()
            try env.checkEqual(
                sequences, seed.entries.map(\.sequence).sorted(),
                "a refused batch update changed stored models: the batch update was not atomic")
        },
        CaseDefinition(
            .batch, "batchInsert", "insert(_:rows:) stores every row and returns permanent identifiers in order."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            let rows: [[BatchAssignment<LogEntry>]] = (1...50).map {
                [.set(\.sequence, to: $0), .set(\.label, to: "row-\($0)")]
            }
            let ids = try env.step("batch-inserting 50 log entries") { try context.insert(LogEntry.self, rows: rows) }
            try env.checkEqual(ids.count, 50, "a batch insert of 50 rows returned the wrong number of identifiers")
            try env.check(
                !ids.contains { $0.isTemporary } && Set(ids).count == 50,
                "a batch insert returned temporary or repeated identifiers")
            let fresh = env.freshContext(container)
            for index in [0, 17, 49] {
                let entry = try env.step("loading a batch-inserted entry by identifier") {
                    try fresh.model(for: ids[index], as: LogEntry.self)
                }
                try env.checkEqual(
                    entry?.label ?? "nil", "row-\(index + 1)",
                    entry == nil
                        ? "the identifier a batch insert returned for row \(index + 1) leads to no model: rows lost"
                        : "the identifier a batch insert returned for row \(index + 1) leads to the wrong model")
            }
            let stored = try env.byIdentifier(LogEntry.self, in: container)
            let wrong = ids.enumerated().filter { stored[$1]?.label != "row-\($0 + 1)" }.map { $0.offset + 1 }
            try env.check(
                wrong.isEmpty,
                "\(wrong.count) of the 50 identifiers a batch insert returned do not lead to their own row (rows "
                    + "\(wrong.prefix(5))): identifiers returned out of order, or rows lost",
                found: "\(stored.count) entries stored")
            try env.checkEqual(
                try env.count(LogEntry.self, in: container), 50, "a batch insert of 50 rows stored the wrong number")
        },
        CaseDefinition(
            .batch, "batchInsertWithDuplicateStoresNothing",
            "A batch insert with a duplicate unique value fails and stores none of its rows."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            let rows: [[BatchAssignment<LogEntry>]] = [
                [.set(\.sequence, to: 1)], [.set(\.sequence, to: 2)], [.set(\.sequence, to: 1)],
            ]
            try env.expectError(
                [.uniqueConstraintViolation], "batch-inserting rows with a duplicate 'sequence'",
                ifItSucceeds: "a batch insert with two rows of 'sequence' 1 succeeded: unique constraint not enforced"
            ) { _ = try context.insert(LogEntry.self, rows: rows) }
            try env.checkEqual(
                try env.count(LogEntry.self, in: container), 0,
                "a refused batch insert stored some of its rows: the batch insert was not atomic")
        },
        CaseDefinition(
            .batch, "storeBatchRequests",
            "The store's own batch delete, update and insert touch exactly the "
                + "identified models.", requires: .batching
        ) { env in
            try StoreChecks.checkBatching(try env.openStore(), env)
        },
    ]
}

/// The identifiers `didSave` observers saw (the observer runs synchronously on the saving thread).
private final class IdentifierBox: @unchecked Sendable {
    // Safety: written by the didSave observer, which NotificationCenter calls synchronously inside
    // the batch delete, and read after it returns, on the same thread.
    var value: [PersistentIdentifier] = []
}
