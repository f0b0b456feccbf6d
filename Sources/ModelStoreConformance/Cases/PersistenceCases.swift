import Foundation
import ModelStore

/// Data surviving close and reopen; failed opens and failed saves writing nothing.
///
/// Every durable case compares what the store keeps (``StoredState``, read directly from the store,
/// model by model) before closing and after reopening, and most end with a change that does not
/// rewrite everything (a batch delete, a single update), so a kind of change that never reaches the
/// disk is not hidden by a later full rewrite.
enum PersistenceCases {
    /// Opens the store, runs `body`, reads the stored state, and closes; returns the state.
    static func sessionState(
        _ env: CaseEnvironment, _ body: (ModelContainer) throws -> Void
    ) throws -> StoredState {
        try env.session { container in
            try body(container)
            return try StoredState.read(container, env)
        }
    }

    /// Reopens the store and fails unless it keeps `expected`.
    static func checkAfterReopen(_ expected: StoredState, _ env: CaseEnvironment, after what: String) throws {
        try env.session { container in
            try StoredState.read(container, env).check(equals: expected, env, after: what)
        }
    }

    /// A durable case whose last change before closing is `change`, run on a store reopened after seeding.
    static func lastChangeSurvives(
        _ name: String, _ summary: String, what: String,
        _ change: @escaping @Sendable (ModelContext, CaseEnvironment) throws -> Void
    ) -> CaseDefinition {
        CaseDefinition(.persistence, name, summary, requires: .durability) { env in
            try env.session { container in try env.seed(container) }
            let before = try sessionState(env) { container in
                let context = env.freshContext(container)
                try change(context, env)
            }
            try checkAfterReopen(before, env, after: what)
        }
    }

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .persistence, "reopenKeepsEverything",
            "Everything saved is there, with the same identifiers and values, after closing and reopening.",
            requires: .durability
        ) { env in
            var saved: [(id: PersistentIdentifier, values: Specimen)] = []
            let before = try sessionState(env) { container in
                let seed = try env.seed(container)
                saved = seed.specimens.enumerated().map { ($1.persistentModelID, Seed.makeSpecimen($0)) }
            }
            try env.session { container in
                try StoredState.read(container, env).check(equals: before, env, after: "saving the seed")
                try SpecimenField.checkByIdentifier(
                    try env.all(Specimen.self, in: container, by: \.code), saved: saved, "the seed after reopening",
                    in: env)
            }
        },
        CaseDefinition(
            .persistence, "reopenKeepsUpdatesAndDeletes",
            "Updates (each model its own values) and deletes saved after a reopen are there after the next reopen.",
            requires: .durability
        ) { env in
            try env.session { container in try env.seed(container) }
            let before = try sessionState(env) { container in
                let context = env.freshContext(container)
                let specimens = try env.step("fetching specimens") { try context.fetch(FetchDescriptor<Specimen>()) }
                for specimen in specimens where specimen.count == 1 {
                    specimen.title = "updated-\(specimen.code)"
                    specimen.rank = specimen.serial + 50
                }
                // 'peer' and 'Note.subject' have no inverse: clear what refers to the deleted specimens first, as
                // an app would, so no store has to hold a dangling reference (relationships.danglingReferences does).
                for specimen in specimens where specimen.peer?.count == 4 { specimen.peer = nil }
                let notes = try env.step("fetching notes") { try context.fetch(FetchDescriptor<Note>()) }
                for note in notes where note.subject?.count == 4 { note.subject = nil }
                for specimen in specimens where specimen.count == 4 { context.delete(specimen) }
                try env.step("saving updates and deletes") { try context.save() }
            }
            try checkAfterReopen(before, env, after: "saving updates and deletes")
        },
        CaseDefinition(
            .persistence, "identifiersAfterReopenAreNew",
            "Models inserted after reopening get identifiers no earlier model had.", requires: .durability
        ) { env in
            let before = try env.session { container in
                try env.seed(container)
                return Set(try env.all(Specimen.self, in: container, by: \.code).map(\.persistentModelID))
            }
            let after = try env.session { container in
                let context = env.freshContext(container)
                let added = (40..<45).map { Seed.makeSpecimen($0) }
                for specimen in added { context.insert(specimen) }
                try env.step("inserting 5 specimens after reopening") { try context.save() }
                return Set(added.map(\.persistentModelID))
            }
            try env.check(
                before.isDisjoint(with: after),
                "specimens inserted after reopening were given identifiers of earlier specimens: key "
                    + "counter lost on reopen",
                found: "\(before.intersection(after).sorted().prefix(3))")
            try env.session { container in
                try env.checkEqual(
                    try env.count(Specimen.self, in: container), before.count + after.count,
                    "after a second reopen, the number of specimens is wrong")
            }
        },
        CaseDefinition(
            .persistence, "deletedIdentifiersAreNotReused",
            "After the newest models are deleted and the store reopened, new models get identifiers no deleted model "
                + "had, from the same store.",
            requires: .durability
        ) { env in
            let (deleted, storeIdentifier) = try env.session { container in
                try env.seed(container)
                let context = env.freshContext(container)
                let added = (70..<73).map { sequence in
                    let entry = LogEntry()
                    entry.sequence = sequence
                    context.insert(entry)
                    return entry
                }
                try env.step("inserting 3 log entries") { try context.save() }
                let ids = added.map(\.persistentModelID)
                for entry in added { context.delete(entry) }
                try env.step("deleting the 3 newest log entries") { try context.save() }
                return (Set(ids), try env.store(of: container).identifier)
            }
            try env.session { container in
                try env.checkEqual(
                    try env.store(of: container).identifier, storeIdentifier,
                    "the store has another identifier after reopening: identifiers an app kept from before (in "
                        + "its settings, in another store) no longer name this store; store identifier lost on reopen")
                let context = env.freshContext(container)
                let fresh = (80..<83).map { sequence in
                    let entry = LogEntry()
                    entry.sequence = sequence
                    context.insert(entry)
                    return entry
                }
                try env.step("inserting 3 log entries after reopening") { try context.save() }
                let reused = fresh.map(\.persistentModelID).filter { deleted.contains($0) }
                try env.check(
                    reused.isEmpty,
                    "models inserted after reopening were given identifiers of models deleted before closing: key "
                        + "counter lost on reopen (a stale reference to a deleted model would now lead to a new one)",
                    found: "\(reused)")
            }
        },
        CaseDefinition(
            .persistence, "equivalentValueChangesSurviveReopen",
            "An update to a value Swift's == calls equal (a canonically equivalent spelling, -0.0 for 0.0), the last "
                + "change before closing, is there exactly after reopening.", requires: .durability
        ) { env in
            try EquivalentValueChecks.survivesReopen(env)
        },
        CaseDefinition(
            .persistence, "workWithModelsInsertedAfterReopen",
            "Models inserted after a reopen can be changed, related, deleted and saved again, and all of it is "
                + "there after the next reopen.", requires: .durability
        ) { env in
            try env.session { container in try env.seed(container) }
            var newID: PersistentIdentifier?
            let before = try sessionState(env) { container in
                let context = env.freshContext(container)
                let specimen = Seed.makeSpecimen(60)
                let entry = LogEntry()
                entry.sequence = 600
                entry.label = "after reopen"
                context.insert(specimen)
                context.insert(entry)
                try env.step("inserting a specimen and a log entry after reopening") { try context.save() }
                newID = specimen.persistentModelID
                specimen.title = "changed after reopen"
                specimen.folder = try env.fetchSeeded(\Folder.name, "delta", in: context)
                let note = Note()
                note.text = "about S61"
                note.subject = specimen
                context.insert(note)
                try env.step("changing the new specimen and relating a new note to it") { try context.save() }
                context.delete(entry)
                try env.step("deleting the new log entry") { try context.save() }
            }
            try checkAfterReopen(before, env, after: "inserting, changing and deleting models after a reopen")
            try env.session { container in
                let id = try env.require(newID, "the new specimen has no identifier")
                let specimen = try env.require(
                    try env.step("loading the specimen inserted after a reopen by its identifier") {
                        try env.freshContext(container).model(for: id, as: Specimen.self)
                    }, "the specimen inserted after a reopen cannot be loaded by its identifier after the next reopen")
                try env.checkEqual(
                    [specimen.title, specimen.folder?.name ?? "nil"], ["changed after reopen", "delta"],
                    "the specimen inserted after a reopen lost its later changes on the next reopen: change lost on "
                        + "reopen")
            }
        },
        CaseDefinition(
            .persistence, "uniquenessAfterReopen",
            "Unique values saved before closing are still enforced after reopening.", requires: .durability
        ) { env in
            try env.session { container in try env.seed(container) }
            try env.session { container in
                let context = env.freshContext(container)
                context.insert(Seed.makeSpecimen(40, code: "S01"))
                try env.expectError(
                    [.uniqueConstraintViolation], "inserting a duplicate of 'S01' after reopening",
                    ifItSucceeds: "after reopening, saving a second 'S01' succeeded: unique constraint not "
                        + "enforced"
                ) { try context.save() }
            }
        },
        CaseDefinition(
            .persistence, "failedSaveNeverReachesDisk",
            "A refused save leaves nothing behind, even after reopening.", requires: .durability
        ) { env in
            let before = try env.session { container in
                try env.seed(container)
                return try StoredState.read(container, env)
            }
            let after = try sessionState(env) { container in
                let context = env.freshContext(container)
                context.insert(Seed.makeSpecimen(50))
                context.insert(Seed.makeSpecimen(51, code: "S01"))
                _ = try? context.save()
            }
            try after.check(equals: before, env, after: "a refused save (a duplicate 'code')")
            try checkAfterReopen(before, env, after: "a refused save (a duplicate 'code')")
        },
        lastChangeSurvives(
            "batchDeleteIsDurable", "A batch delete, the last change before closing, is there after reopening.",
            what: "a batch delete of entries with 'bucket == 0'"
        ) { context, env in
            _ = try env.step("batch-deleting entries with 'bucket == 0'") {
                try context.delete(model: LogEntry.self, where: #Predicate { $0.bucket == 0 })
            }
        },
        lastChangeSurvives(
            "batchUpdateIsDurable", "A batch update, the last change before closing, is there after reopening.",
            what: "a batch update of entries with 'bucket == 1'"
        ) { context, env in
            _ = try env.step("batch-updating entries with 'bucket == 1'") {
                try context.update(
                    LogEntry.self, where: #Predicate { $0.bucket == 1 }, set: [.set(\.label, to: "batch")])
            }
        },
        lastChangeSurvives(
            "batchInsertIsDurable", "A batch insert, the last change before closing, is there after reopening.",
            what: "a batch insert of 5 entries"
        ) { context, env in
            _ = try env.step("batch-inserting 5 entries") {
                try context.insert(
                    LogEntry.self, rows: (100..<105).map { [.set(\.sequence, to: $0), .set(\.label, to: "row-\($0)")] })
            }
        },
        lastChangeSurvives(
            "singleUpdateIsDurable", "One attribute of one model changed and saved last is there after reopening.",
            what: "an update of one log entry's 'label'"
        ) { context, env in
            let entry = try env.fetchSeeded(\LogEntry.sequence, 5, in: context)
            entry.label = "only change"
            try env.step("saving one changed label") { try context.save() }
        },
        lastChangeSurvives(
            "deepDeleteIsDurable",
            "Deleting a cabinet (cascade to folders and notes, nullify to specimens and remarks) is there after "
                + "reopening, cleared references included.",
            what: "deleting the cabinet 'North'"
        ) { context, env in
            context.delete(try env.fetchSeeded(\Cabinet.label, "North", in: context))
            try env.step("deleting the cabinet 'North'") { try context.save() }
        },
        CaseDefinition(
            .persistence, "corruptFilesFailOpenUntouched",
            "Opening files overwritten with garbage fails with DataStoreError.corrupted and writes nothing.",
            requires: .durability
        ) { env in
            try env.session { container in try env.seed(container) }
            let files = try StoreFiles.overwriteWithGarbage(try env.storeDirectory())
            try env.check(!files.isEmpty, "the store wrote no files in its directory, so it cannot be durable")
            let error = try env.expectError(
                [.corrupted], "opening and reading a store whose files were overwritten with garbage",
                ifItSucceeds: "a store whose files were overwritten with garbage opened and fetched without an error: "
                    + "corruption not detected"
            ) {
                try env.session { container in
                    _ = try ModelContext(container).fetch(FetchDescriptor<Specimen>())
                    _ = try ModelContext(container).fetch(FetchDescriptor<LogEntry>())
                }
            }
            let changed = try StoreFiles.changed(files)
            try env.check(
                changed.isEmpty, "a failed open changed the store's files: a failed open MUST NOT write",
                found: "changed: \(changed)")
            try env.check(!error.message.isEmpty, "the corruption error has no message")
        },
    ]
}

/// The files of a store directory, for corruption checks.
enum StoreFiles {
    /// Overwrites every non-empty regular file (except lock files) with garbage of the same size;
    /// returns the garbage written, by path.
    static func overwriteWithGarbage(_ directory: URL) throws -> [URL: Data] {
        var written: [URL: Data] = [:]
        let manager = FileManager.default
        guard let walker = manager.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else {
            return [:]
        }
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true,
                !url.lastPathComponent.lowercased().contains("lock")
            else { continue }
            let size = (try Data(contentsOf: url)).count
            guard size > 0 else { continue }
            let pattern = Array("\u{1}garbage\u{0}\u{FF}".utf8)
            let garbage = Data((0..<size).map { pattern[$0 % pattern.count] })
            try garbage.write(to: url)
            written[url] = garbage
        }
        return written
    }

    /// The paths whose contents differ from what was written.
    static func changed(_ files: [URL: Data]) throws -> [String] {
        files.compactMap { url, data in
            (try? Data(contentsOf: url)) == data ? nil : url.lastPathComponent
        }.sorted()
    }
}
