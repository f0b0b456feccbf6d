import Foundation
import ModelStore

/// Data surviving close and reopen; failed opens and failed saves writing nothing.
enum PersistenceCases {
    /// What a fresh context reads: codes and identifiers of specimens, and counts per entity.
    struct Picture: Equatable {
        var specimenIDs: [String: PersistentIdentifier]
        var counts: [String: Int]
        var folderMembers: [String: [String]]
        var peers: [String: String]
    }

    static func picture(_ container: ModelContainer, _ env: CaseEnvironment) throws -> Picture {
        let specimens = try env.all(Specimen.self, in: container, by: \.code)
        let folders = try env.all(Folder.self, in: container, by: \.name)
        return Picture(
            specimenIDs: Dictionary(uniqueKeysWithValues: specimens.map { ($0.code, $0.persistentModelID) }),
            counts: [
                "Specimen": specimens.count, "Folder": folders.count, "Note": try env.count(Note.self, in: container),
                "Hold": try env.count(Hold.self, in: container),
                "LogEntry": try env.count(LogEntry.self, in: container),
            ],
            folderMembers: Dictionary(
                uniqueKeysWithValues: folders.map { ($0.name, $0.specimens.map(\.code).sorted()) }),
            peers: Dictionary(uniqueKeysWithValues: specimens.map { ($0.code, $0.peer?.code ?? "nil") }))
    }

    static func checkReopened(_ found: Picture, _ expected: Picture, _ env: CaseEnvironment, after what: String) throws
    {
        if found.counts.values.reduce(0, +) < expected.counts.values.reduce(0, +) {
            throw env.failure(
                "after \(what) and reopening, the store had \(found.counts.values.reduce(0, +)) of the "
                    + "\(expected.counts.values.reduce(0, +)) saved models: data lost on reopen",
                expected: "\(expected.counts.sorted { $0.key < $1.key })",
                found: "\(found.counts.sorted { $0.key < $1.key })")
        }
        try env.checkEqual(
            found.counts, expected.counts, "after \(what) and reopening, the number of models per entity changed")
        try env.checkEqual(
            found.specimenIDs, expected.specimenIDs,
            "after \(what) and reopening, specimens have other identifiers: identifiers MUST survive reopen")
        try env.checkEqual(
            found.folderMembers, expected.folderMembers, "after \(what) and reopening, folders list other specimens")
        try env.checkEqual(found.peers, expected.peers, "after \(what) and reopening, specimens have other peers")
    }

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .persistence, "reopenKeepsEverything",
            "Everything saved is there, with the same identifiers and values, after closing and reopening.",
            requires: .durability
        ) { env in
            let before = try env.session { container in
                try env.seed(container)
                return try picture(container, env)
            }
            try env.session { container in
                try checkReopened(try picture(container, env), before, env, after: "saving the seed")
                let specimens = try env.all(Specimen.self, in: container, by: \.code)
                try SpecimenField.checkAll(specimens, equal: Seed.make().specimens, "the seed after reopening", in: env)
            }
        },
        CaseDefinition(
            .persistence, "reopenKeepsUpdatesAndDeletes",
            "Updates and deletes saved before closing are there after reopening.", requires: .durability
        ) { env in
            try env.session { container in
                try env.seed(container)
                let context = env.freshContext(container)
                let specimens = try env.step("fetching specimens") { try context.fetch(FetchDescriptor<Specimen>()) }
                for specimen in specimens where specimen.count == 1 { specimen.title = "updated" }
                // 'peer' and 'Note.subject' have no inverse: clear what refers to the deleted specimens first, as
                // an app would, so no store has to hold a dangling reference (relationships.danglingReferences does).
                for specimen in specimens where specimen.peer?.count == 4 { specimen.peer = nil }
                let notes = try env.step("fetching notes") { try context.fetch(FetchDescriptor<Note>()) }
                for note in notes where note.subject?.count == 4 { note.subject = nil }
                for specimen in specimens where specimen.count == 4 { context.delete(specimen) }
                try env.step("saving updates and deletes") { try context.save() }
            }
            try env.session { container in
                let specimens = try env.all(Specimen.self, in: container, by: \.code)
                let seed = Seed.make().specimens
                try env.check(
                    !specimens.contains { $0.count == 4 },
                    "specimens deleted before closing are back after reopening: delete lost on reopen")
                try env.checkEqual(
                    specimens.count, seed.filter { $0.count != 4 }.count,
                    "after reopening, the number of specimens is wrong: data lost on reopen")
                try env.check(
                    specimens.filter { $0.count == 1 }.allSatisfy { $0.title == "updated" },
                    "updates saved before closing are missing after reopening: update lost on reopen")
            }
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
                let context = env.freshContext(container)
                context.insert(Seed.makeSpecimen(50))
                context.insert(Seed.makeSpecimen(51, code: "S01"))
                _ = try? context.save()
                return try picture(container, env)
            }
            try env.check(before.specimenIDs["S52"] == nil, "a refused save was visible before reopening")
            try env.session { container in
                try checkReopened(try picture(container, env), before, env, after: "a refused save")
            }
        },
        CaseDefinition(
            .persistence, "batchChangesPersist",
            "Batch deletes, updates and inserts are there after reopening.", requires: .durability
        ) { env in
            try env.session { container in
                try env.seed(container)
                let context = env.freshContext(container)
                try env.step("batch-deleting entries with 'bucket == 0'") {
                    try context.delete(model: LogEntry.self, where: #Predicate { $0.bucket == 0 })
                }
                try env.step("batch-updating entries with 'bucket == 1'") {
                    try context.update(
                        LogEntry.self, where: #Predicate { $0.bucket == 1 }, set: [.set(\.label, to: "batch")])
                }
                try env.step("batch-inserting 5 entries") {
                    try context.insert(LogEntry.self, rows: (100..<105).map { [.set(\.sequence, to: $0)] })
                }
            }
            try env.session { container in
                let entries = try env.all(LogEntry.self, in: container, by: \.label)
                try env.check(
                    !entries.contains { $0.bucket == 0 && $0.sequence < 100 },
                    "batch-deleted entries are back after reopening: delete lost")
                try env.check(
                    entries.filter { $0.bucket == 1 }.allSatisfy { $0.label == "batch" },
                    "batch updates are missing after reopening: update lost on reopen")
                try env.checkEqual(
                    entries.filter { $0.sequence >= 100 }.count, 5,
                    "batch-inserted entries are missing after reopening: data lost on reopen")
            }
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
