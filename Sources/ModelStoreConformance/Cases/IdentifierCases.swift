import Foundation
import ModelStore

/// Temporary identifiers become permanent on save, and every reference follows.
enum IdentifierCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .identifiers, "temporaryBecomesPermanent",
            "A saved model's identifier stops being temporary and finds the model in any context."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            let specimen = Seed.makeSpecimen(0)
            context.insert(specimen)
            try env.check(
                specimen.persistentModelID.isTemporary, "a model inserted but not saved has a permanent identifier")
            try env.step("saving one specimen") { try context.save() }
            let id = specimen.persistentModelID
            try env.check(
                !id.isTemporary, "after saving, the specimen's identifier is still temporary: identifier not remapped",
                found: "\(id)")
            try env.check(
                context.registeredModel(for: id, as: Specimen.self) === specimen,
                "after saving, the context does not find the specimen under its permanent identifier \(id)")
            let other = env.freshContext(container)
            let found = try env.step("loading the specimen by its permanent identifier in a fresh context") {
                try other.model(for: id, as: Specimen.self)
            }
            try env.check(
                found?.code == specimen.code,
                "a fresh context could not load the specimen by its permanent identifier \(id)",
                expected: render(specimen.code), found: found.map { render($0.code) } ?? "nil")
        },
        CaseDefinition(
            .identifiers, "identifiersAreUniqueAndStable",
            "Permanent identifiers are distinct, and every fetch returns the same identifier for a model."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let first = try env.all(Specimen.self, in: container, by: \.code)
            let second = try env.all(Specimen.self, in: container, by: \.code)
            let ids = first.map(\.persistentModelID)
            try env.checkEqual(Set(ids).count, ids.count, "two saved specimens share a permanent identifier")
            try env.check(!ids.contains { $0.isTemporary }, "a fetched specimen has a temporary identifier")
            try env.checkEqual(
                second.map(\.persistentModelID), ids,
                "two fetches in fresh contexts returned different identifiers for the same specimens")
            let entities = try env.all(Folder.self, in: container, by: \.name).map(\.persistentModelID)
            try env.check(
                entities.allSatisfy { $0.entityName == "Folder" } && ids.allSatisfy { $0.entityName == "Specimen" },
                "a permanent identifier names the wrong entity")
        },
        CaseDefinition(
            .identifiers, "referencesToModelsSavedTogether",
            "References between models inserted in the same save point to their permanent identifiers."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            let folder = Folder()
            folder.name = "Together"
            let specimen = Seed.makeSpecimen(3)
            specimen.folder = folder
            let note = Note()
            note.text = "about S04"
            note.folder = folder
            note.subject = specimen
            context.insert(note)
            try env.step("saving a folder, a specimen and a note that refer to each other") { try context.save() }
            let fresh = env.freshContext(container)
            let specimens = try env.step("fetching specimens in a fresh context") {
                try fresh.fetch(FetchDescriptor<Specimen>())
            }
            let notes = try env.step("fetching notes in a fresh context") { try fresh.fetch(FetchDescriptor<Note>()) }
            try env.check(specimens.count == 1 && notes.count == 1, "the models saved together were not all stored")
            try env.check(
                specimens[0].folder?.name == "Together",
                "a 'Specimen' saved together with its 'Folder' came back with no folder: references to models "
                    + "inserted in the same save were not remapped",
                expected: "\"Together\"", found: specimens[0].folder.map { render($0.name) } ?? "nil")
            try env.check(
                notes[0].subject?.code == "S04" && notes[0].folder?.name == "Together",
                "a 'Note' saved together with its subject and folder lost them: references to models inserted in "
                    + "the same save were not remapped")
            let members = notes[0].folder?.specimens.map(\.code) ?? []
            try env.checkEqual(
                members, ["S04"],
                "the folder's to-many 'specimens' came back wrong: references to models "
                    + "inserted in the same save were not remapped")
        },
        CaseDefinition(
            .identifiers, "updatedModelsReferToNewOnes",
            "A saved model changed to refer to a model inserted in the same save is stored with the "
                + "permanent identifier."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let folders = try env.step("fetching folders") { try context.fetch(FetchDescriptor<Folder>()) }
            let alpha = try env.require(folders.first { $0.name == "Alpha" }, "the seeded folder 'Alpha' is missing")
            let existing = try env.fetchSeeded(\Specimen.code, "S02", in: context)
            let newcomer = Seed.makeSpecimen(50)
            context.insert(newcomer)
            newcomer.folder = alpha
            existing.peer = newcomer
            try env.step("saving a new specimen referred to by two saved models") { try context.save() }
            let freshFolder = try env.all(Folder.self, in: container, by: \.name).first { $0.name == "Alpha" }
            try env.check(
                freshFolder?.specimens.contains { $0.code == newcomer.code } == true,
                "a saved 'Folder' that was given a new specimen came back without it: references in updated "
                    + "models to models inserted in the same save were not remapped",
                found: "\(freshFolder?.specimens.map(\.code) ?? [])")
            let freshExisting = try env.all(Specimen.self, in: container, by: \.code).first { $0.code == "S02" }
            try env.check(
                freshExisting?.peer?.code == newcomer.code,
                "a saved 'Specimen' whose 'peer' was set to a new specimen came back without it: references in "
                    + "updated models to models inserted in the same save were not remapped",
                expected: render(newcomer.code), found: freshExisting?.peer.map { render($0.code) } ?? "nil")
        },
        CaseDefinition(
            .identifiers, "referenceCycles",
            "Models inserted together that refer to each other in a cycle, or to themselves, keep those references."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            let a = Seed.makeSpecimen(0)
            let b = Seed.makeSpecimen(1)
            let c = Seed.makeSpecimen(2)
            a.peer = b
            b.peer = a
            c.peer = c
            for specimen in [a, b, c] { context.insert(specimen) }
            try env.step("saving two specimens that refer to each other and one that refers to itself") {
                try context.save()
            }
            let fresh = try env.all(Specimen.self, in: container, by: \.code)
            try env.checkEqual(
                fresh.map { $0.peer?.code ?? "nil" }, ["S02", "S01", "S03"],
                "specimens saved in a reference cycle came back with the wrong peers: references to models "
                    + "inserted in the same save were not remapped")
            try env.check(
                fresh[0].peer?.peer === fresh[0] && fresh[2].peer === fresh[2],
                "following a cycle of references does not lead back to the same model")
        },
    ]
}
