import Foundation
import ModelStore

/// Insert, read back, update and delete through a container on the adapter.
enum CRUDCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .crud, "insertAndFetch", "A saved model is fetched back by a fresh context with every value intact."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            context.insert(Seed.makeSpecimen(7))
            try env.step("saving one specimen") { try context.save() }
            let found = try env.all(Specimen.self, in: container, by: \.code)
            try env.check(
                found.count == 1, "saved one specimen, but a fresh context fetched \(found.count)",
                expected: "1", found: "\(found.count)")
            try SpecimenField.check(
                found[0], equals: Seed.makeSpecimen(7), "a specimen read back in a fresh context", in: env)
        },
        CaseDefinition(
            .crud, "everyValueTypeRoundTrips",
            "Every supported value type (integers of every width, Float, Decimal, Date, Data, UUID, URL, optionals, "
                + "arrays, dictionaries, enums, Codable structs) round-trips exactly."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let found = try env.all(Specimen.self, in: container, by: \.code)
            try SpecimenField.checkByIdentifier(
                found, saved: seed.specimens.enumerated().map { ($1.persistentModelID, Seed.makeSpecimen($0)) },
                "the seed read back in a fresh context", in: env)
        },
        CaseDefinition(
            .crud, "optionalsCanBeClearedAndSet", "Setting an optional to nil, and back to a value, is stored."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            let specimen = Seed.makeSpecimen(1)
            context.insert(specimen)
            try env.step("saving a specimen with its optionals set") { try context.save() }
            specimen.nickname = nil
            specimen.rank = nil
            specimen.grade = nil
            specimen.reviewedAt = nil
            try env.step("saving the specimen with its optionals cleared") { try context.save() }
            let cleared = try env.require(
                try env.all(Specimen.self, in: container, by: \.code).first, "the saved specimen is not fetched")
            try env.check(
                cleared.nickname == nil && cleared.rank == nil && cleared.grade == nil && cleared.reviewedAt == nil,
                "optionals set to nil and saved came back with values: update to nil dropped",
                expected: "nil, nil, nil, nil",
                found: "\(String(describing: cleared.nickname)), \(String(describing: cleared.rank)), "
                    + "\(String(describing: cleared.grade)), \(String(describing: cleared.reviewedAt))")
            specimen.nickname = "back"
            specimen.rank = 0
            try env.step("saving the specimen with optionals set again") { try context.save() }
            let restored = try env.require(
                try env.all(Specimen.self, in: container, by: \.code).first, "the saved specimen is not fetched")
            try env.check(
                restored.nickname == "back" && restored.rank == 0,
                "optionals set from nil to a value and saved came back as nil: update dropped",
                expected: "\"back\", 0",
                found: "\(String(describing: restored.nickname)), \(String(describing: restored.rank))")
        },
        CaseDefinition(
            .crud, "updatesAreStored",
            "Changing several saved models, each to its own values, and saving is seen model by model by a fresh "
                + "context; models not changed keep their values."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let context = env.freshContext(container)
            let specimens = try env.index(
                try env.step("fetching the seed") { try context.fetch(FetchDescriptor<Specimen>()) }, by: \.code,
                "fetching the seeded specimens by code")
            var expected = seed.specimens.enumerated().map { ($1.persistentModelID, Seed.makeSpecimen($0)) }
            // Six specimens, each given values no other model has: a store that applies one model's update to
            // another (rows swapped or shifted) cannot pass by storing the same values everywhere.
            for index in [1, 4, 5, 11, 20, 35] {
                let code = Seed.specimenCode(index)
                let target = try env.require(specimens[code], "the seeded specimen '\(code)' is missing")
                for model in [target, expected[index].1] {
                    model.title = "renamed-\(code)"
                    model.count = 100 + index
                    model.tags = ["changed-\(index)"]
                    model.nickname = index % 2 == 0 ? nil : "nick-\(index)"
                    model.weight = -Double(index) - 0.5
                }
            }
            let entries = try env.step("fetching log entries") { try context.fetch(FetchDescriptor<LogEntry>()) }
            for entry in entries where entry.sequence % 7 == 3 { entry.label = "changed-\(entry.sequence)" }
            try env.step("saving updates of 6 specimens and 4 log entries, each with its own values") {
                try context.save()
            }
            try SpecimenField.checkByIdentifier(
                try env.all(Specimen.self, in: container, by: \.code), saved: expected,
                "after saving updates of 6 specimens", in: env)
            let labels = try env.byIdentifier(LogEntry.self, in: container)
            for entry in seed.entries {
                let wanted = entry.sequence % 7 == 3 ? "changed-\(entry.sequence)" : "entry-\(entry.sequence)"
                try env.checkEqual(
                    labels[entry.persistentModelID]?.label ?? "missing", wanted,
                    wanted.hasPrefix("changed")
                        ? "the 'label' of log entry \(entry.sequence) was changed and saved, but a fresh context read "
                            + "another value: update dropped, or applied to another model"
                        : "log entry \(entry.sequence) was not changed, but a fresh context read another 'label': "
                            + "an update was applied to the wrong model")
            }
        },
        CaseDefinition(
            .crud, "deletesAreStored", "Deleting saved models and saving removes them for every later fetch."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let entries = try env.step("fetching log entries") { try context.fetch(FetchDescriptor<LogEntry>()) }
            let doomed = entries.filter { $0.sequence % 10 == 0 }.map(\.sequence)
            for entry in entries where entry.sequence % 10 == 0 { context.delete(entry) }
            let note = try env.fetchSeeded(\Note.text, "note-loose", in: context)
            context.delete(note)
            try env.step("saving deletes of 3 log entries and a note") { try context.save() }
            let remaining = try env.all(LogEntry.self, in: container, by: \.label).map(\.sequence)
            let resurrected = remaining.filter { doomed.contains($0) }
            try env.check(
                resurrected.isEmpty,
                "deleted log entries \(doomed) and saved, but a fresh context still fetched "
                    + "\(resurrected): delete ignored",
                expected: "\(Seed.make().entries.count - doomed.count) entries", found: "\(remaining.count) entries")
            let notes = try env.all(Note.self, in: container, by: \.text).map(\.text)
            try env.check(
                !notes.contains("note-loose"),
                "deleted the note 'note-loose' and saved, but a fresh context still fetched it: delete ignored")
        },
        CaseDefinition(
            .crud, "mixedSave",
            "One save with inserts, updates and deletes of several entities stores all of them, each on the right "
                + "model."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let context = env.freshContext(container)
            let entries = try env.index(
                try env.step("fetching log entries") { try context.fetch(FetchDescriptor<LogEntry>()) },
                by: \.sequence, "fetching the seeded log entries by sequence")
            let doomed = try env.require(entries[1], "the seeded log entry 1 is missing")
            context.delete(doomed)
            for sequence in [2, 3] { entries[sequence]?.label = "updated-\(sequence)" }
            let added = (1000..<1003).map { sequence in
                let entry = LogEntry()
                entry.sequence = sequence
                entry.label = "added-\(sequence)"
                entry.bucket = sequence % 4
                context.insert(entry)
                return entry
            }
            let folder = Folder()
            folder.name = "Epsilon"
            folder.position = 9
            context.insert(folder)
            try env.step("saving 4 inserts, 2 updates and a delete together") { try context.save() }
            let stored = try env.byIdentifier(LogEntry.self, in: container)
            try env.check(
                stored[doomed.persistentModelID] == nil, "the deleted entry 'entry-1' is still stored: delete ignored")
            for entry in seed.entries where entry.sequence != 1 {
                let wanted = [2, 3].contains(entry.sequence) ? "updated-\(entry.sequence)" : "entry-\(entry.sequence)"
                try env.checkEqual(
                    stored[entry.persistentModelID]?.label ?? "missing", wanted,
                    "after a save mixing inserts, updates and deletes, log entry \(entry.sequence) reads the wrong "
                        + "'label': update dropped, or applied to another model")
            }
            for entry in added {
                try env.checkEqual(
                    stored[entry.persistentModelID].map { "\($0.sequence) \($0.label)" } ?? "missing",
                    "\(entry.sequence) added-\(entry.sequence)",
                    "the entry inserted as \(entry.sequence) is not stored under its identifier: insert lost")
            }
            try env.checkEqual(
                stored.count, seed.entries.count + 2, "a mixed save left the wrong number of log entries")
            let folders = try env.all(Folder.self, in: container, by: \.name).map(\.name)
            try env.check(
                folders.contains("Epsilon"), "the inserted folder 'Epsilon' was not stored: insert lost",
                expected: "Epsilon among \(Seed.folderNames)", found: "\(folders)")
        },
    ]
}
