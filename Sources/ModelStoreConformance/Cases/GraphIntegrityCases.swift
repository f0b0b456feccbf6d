import Foundation
import ModelStore

/// No silent data loss: what a context's graph semantics promise, the same in every store.
enum GraphIntegrityCases {
    /// Writes with `write`, then reads the stored state with `read`: after closing and reopening a
    /// durable store, or in a fresh context on the same container otherwise.
    static func stored<Result>(
        _ env: CaseEnvironment, write: (ModelContainer) throws -> Void, read: (ModelContainer) throws -> Result
    ) throws -> Result {
        if env.capabilities.contains(.durability) {
            try env.session { try write($0) }
            return try env.session { try read($0) }
        }
        let container = try env.openContainer()
        try write(container)
        return try read(container)
    }

    static func folder(_ name: String) -> Folder {
        let folder = Folder()
        folder.name = name
        return folder
    }

    static func specimen(_ code: String, folder: Folder? = nil) -> Specimen {
        let specimen = Specimen()
        specimen.code = code
        specimen.folder = folder
        return specimen
    }

    /// Folder names with the codes of their specimens, as stored.
    static func folderContents(_ env: CaseEnvironment, _ container: ModelContainer) throws -> [String] {
        try env.all(Folder.self, in: container, by: \.name).map { folder in
            "\(folder.name): \(folder.specimens.map(\.code).sorted().joined(separator: ","))"
        }
    }

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .graphIntegrity, "modelDeletedBeforeItsFirstSaveIsNeverStored",
            "A model inserted and deleted before a save is not stored, and no stored model lists it."
        ) { env in
            let result = try stored(env) { container in
                let context = env.freshContext(container)
                let alpha = folder("Alpha")
                context.insert(alpha)
                try env.step("saving a folder") { try context.save() }
                let ghost = specimen("GHOST", folder: alpha)
                context.insert(ghost)
                context.delete(ghost)
                try env.step("saving after inserting a specimen into 'Alpha' and deleting it") { try context.save() }
            } read: { container in
                (try folderContents(env, container), try env.count(Specimen.self, in: container))
            }
            try env.checkEqual(
                result.1, 0,
                "a specimen deleted before its first save was stored anyway: the save wrote a deleted model")
            try env.checkEqual(
                result.0, ["Alpha: "],
                "the folder still lists a specimen that was deleted before its first save")
        },
        CaseDefinition(
            .graphIntegrity, "deletingASavedModelAndANewOneThatListsIt",
            "Deleting a saved model and a new model that lists it, in one save, stores neither."
        ) { env in
            let counts = try stored(env) { container in
                let context = env.freshContext(container)
                let saved = specimen("S-SAVED")
                context.insert(saved)
                try env.step("saving a specimen") { try context.save() }
                let fresh = folder("Fresh")
                fresh.specimens = [saved]
                context.insert(fresh)
                context.delete(fresh)
                context.delete(saved)
                try env.step("deleting a saved specimen and a new folder that lists it, in one save") {
                    try context.save()
                }
            } read: { container in
                (try env.count(Specimen.self, in: container), try env.count(Folder.self, in: container))
            }
            try env.checkEqual(counts.0, 0, "a deleted specimen is still stored")
            try env.checkEqual(counts.1, 0, "a folder deleted before its first save was stored")
        },
        CaseDefinition(
            .graphIntegrity, "rollbackRestoresBothSidesOfARelationship",
            "Deleting a folder and moving its specimen elsewhere, then rolling back, restores both sides."
        ) { env in
            let contents = try stored(env) { container in
                let context = env.freshContext(container)
                let alpha = folder("Alpha")
                let beta = folder("beta")
                let moved = specimen("S01", folder: alpha)
                context.insert(moved)
                context.insert(beta)
                try env.step("saving two folders and a specimen") { try context.save() }
                context.delete(alpha)
                moved.folder = beta
                context.rollback()
                try env.check(
                    alpha.specimens.map(\.code) == ["S01"] && beta.specimens.isEmpty && moved.folder === alpha,
                    "after rollback the relationship is one-sided: the deleted folder's side was not restored",
                    expected: "Alpha lists S01, beta lists nothing, S01.folder is Alpha",
                    found: "Alpha lists \(alpha.specimens.map(\.code)), beta lists \(beta.specimens.map(\.code))")
                beta.position = 7
                try env.step("saving a change made after the rollback") { try context.save() }
            } read: { container in
                try folderContents(env, container)
            }
            try env.checkEqual(
                contents, ["Alpha: S01", "beta: "],
                "a save after a rollback stored a one-sided relationship")
        },
        CaseDefinition(
            .graphIntegrity, "cascadeThroughNewModels",
            "A cascade that deletes a new model listed by another new model stores the survivors, consistently."
        ) { env in
            let result = try stored(env) { container in
                let context = env.freshContext(container)
                let alpha = folder("Alpha")
                context.insert(alpha)
                try env.step("saving a folder") { try context.save() }
                let subject = specimen("S-NEW")
                let note = Note()
                note.text = "new note"
                note.folder = alpha
                note.subject = subject
                context.insert(note)
                context.delete(alpha)
                try env.step("deleting a folder whose new note (cascade) refers to a new specimen") {
                    try context.save()
                }
            } read: { container in
                (
                    try env.count(Folder.self, in: container), try env.count(Note.self, in: container),
                    try env.all(Specimen.self, in: container, by: \.code).map(\.code)
                )
            }
            try env.checkEqual(result.0, 0, "the deleted folder is still stored")
            try env.checkEqual(result.1, 0, "a new note deleted by the folder's cascade was stored")
            try env.checkEqual(result.2, ["S-NEW"], "the new specimen that survives the cascade was not stored")
        },
        CaseDefinition(
            .graphIntegrity, "changesBetweenEqualButDistinctValues",
            "Changing 0.0 to -0.0, or a string to a canonically equivalent spelling, is stored."
        ) { env in
            let decomposed = "e\u{301}mile"
            let precomposed = "\u{e9}mile"
            let result = try stored(env) { container in
                let context = env.freshContext(container)
                let changing = specimen("S-EQUAL")
                changing.weight = 0.0
                changing.title = decomposed
                context.insert(changing)
                try env.step("saving a specimen") { try context.save() }
                changing.weight = -0.0
                changing.title = precomposed
                try env.step("changing 0.0 to -0.0 and a title to an equivalent spelling") { try context.save() }
            } read: { container in
                let found = try env.all(Specimen.self, in: container, by: \.code).first
                return (found?.weight.sign, found.map { Array($0.title.unicodeScalars) })
            }
            try env.check(
                result.0 == .minus, "a change from 0.0 to -0.0 was not stored: the store compared values with ==",
                expected: "-0.0", found: result.0 == nil ? "no specimen" : "0.0")
            try env.check(
                result.1 == Array(precomposed.unicodeScalars),
                "a change to a canonically equivalent spelling was not stored: the store compared strings with ==",
                expected: "U+00E9 as one scalar", found: result.1.map { "\($0)" } ?? "no specimen")
        },
        CaseDefinition(
            .graphIntegrity, "toManyRelationshipsAreSets",
            "Appending a model already in a to-many relationship stores it once."
        ) { env in
            let contents = try stored(env) { container in
                let context = env.freshContext(container)
                let alpha = folder("Alpha")
                let listed = specimen("S01")
                context.insert(alpha)
                listed.folder = alpha
                alpha.specimens.append(listed)
                try env.check(
                    alpha.specimens.count == 1, "a to-many relationship holds the same model twice in memory",
                    found: "\(alpha.specimens.count) entries")
                try env.step("saving a folder whose specimen was added on both sides") { try context.save() }
            } read: { container in
                try env.all(Folder.self, in: container, by: \.name).map { $0.specimens.map(\.code) }
            }
            try env.checkEqual(contents, [["S01"]], "a to-many relationship was stored with the same model twice")
        },
        CaseDefinition(
            .graphIntegrity, "twoPhaseSaveContract",
            "prepareSave changes nothing visible; abort undoes, before or after commit; commit then finish stores.",
            requires: .twoPhaseSaves
        ) { env in
            try StoreContractCases.withDriver(env) { try $0.checkTwoPhaseSave() }
        },
    ]
}
