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
            try env.seed(container)
            let found = try env.all(Specimen.self, in: container, by: \.code)
            try SpecimenField.checkAll(
                found, equal: Seed.make().specimens, "the seed read back in a fresh context", in: env)
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
            let cleared = try env.all(Specimen.self, in: container, by: \.code)[0]
            try env.check(
                cleared.nickname == nil && cleared.rank == nil && cleared.grade == nil && cleared.reviewedAt == nil,
                "optionals set to nil and saved came back with values: update to nil dropped",
                expected: "nil, nil, nil, nil",
                found: "\(String(describing: cleared.nickname)), \(String(describing: cleared.rank)), "
                    + "\(String(describing: cleared.grade)), \(String(describing: cleared.reviewedAt))")
            specimen.nickname = "back"
            specimen.rank = 0
            try env.step("saving the specimen with optionals set again") { try context.save() }
            let restored = try env.all(Specimen.self, in: container, by: \.code)[0]
            try env.check(
                restored.nickname == "back" && restored.rank == 0,
                "optionals set from nil to a value and saved came back as nil: update dropped",
                expected: "\"back\", 0",
                found: "\(String(describing: restored.nickname)), \(String(describing: restored.rank))")
        },
        CaseDefinition(.crud, "updatesAreStored", "Changing saved models and saving again is seen by a fresh context.")
        { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let specimens = try env.step("fetching the seed") { try context.fetch(FetchDescriptor<Specimen>()) }
            let target = try env.require(specimens.first { $0.code == "S05" }, "the seeded specimen 'S05' is missing")
            target.title = "renamed"
            target.count = 42
            target.tags = ["changed"]
            let entry = try env.require(
                try env.step("fetching log entries") { try context.fetch(FetchDescriptor<LogEntry>()) }.first,
                "no log entries were fetched")
            entry.label = "changed label"
            try env.step("saving two updates") { try context.save() }
            let fresh = try env.all(Specimen.self, in: container, by: \.code).first { $0.code == "S05" }
            try env.check(
                fresh?.title == "renamed" && fresh?.count == 42 && fresh?.tags == ["changed"],
                "changed 'title', 'count' and 'tags' of a saved 'Specimen' and saved, but a fresh context read the "
                    + "old values: update dropped",
                expected: "\"renamed\", 42, [\"changed\"]",
                found: "\(render(fresh?.title ?? "")), \(fresh?.count ?? -1), \(fresh?.tags ?? [])")
            let entries = try env.all(LogEntry.self, in: container, by: \.label)
            try env.check(
                entries.contains { $0.label == "changed label" },
                "changed the 'label' of a saved 'LogEntry' and saved, but a fresh context read the old "
                    + "value: update dropped"
            )
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
            .crud, "mixedSave", "One save with inserts, updates and deletes of several entities stores all of them."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let entries = try env.step("fetching log entries") {
                try context.fetch(FetchDescriptor<LogEntry>(sortBy: [SortDescriptor(\.sequence)]))
            }
            context.delete(entries[0])
            entries[1].label = "updated"
            let added = LogEntry()
            added.sequence = 1000
            added.label = "added"
            context.insert(added)
            let folder = Folder()
            folder.name = "Epsilon"
            context.insert(folder)
            try env.step("saving an insert, an update and a delete together") { try context.save() }
            let labels = Set(try env.all(LogEntry.self, in: container, by: \.label).map(\.label))
            try env.check(!labels.contains("entry-1"), "the deleted entry 'entry-1' is still stored: delete ignored")
            try env.check(
                labels.contains("updated"), "the update of 'entry-2' to 'updated' was not stored: update dropped")
            try env.check(labels.contains("added"), "the inserted entry 'added' was not stored: insert lost")
            let folders = try env.all(Folder.self, in: container, by: \.name).map(\.name)
            try env.check(
                folders.contains("Epsilon"), "the inserted folder 'Epsilon' was not stored: insert lost",
                expected: "Epsilon among \(Seed.folderNames)", found: "\(folders)")
        },
    ]
}
