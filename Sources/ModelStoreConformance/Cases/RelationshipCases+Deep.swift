import Foundation
import ModelStore

/// Delete rules three levels deep, with mixed rules on one path, checked through a context and in
/// what the store keeps.
extension RelationshipCases {
    static let deepCases: [CaseDefinition] = [
        CaseDefinition(
            .relationships, "deepCascadeMixedRules",
            "Deleting a cabinet deletes its folders and their notes (cascade, two levels), keeps the notes' remarks "
                + "and the folders' specimens with their references cleared (nullify), and touches nothing else."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let before = try StoredState.read(container, env)
            let context = env.freshContext(container)
            let north = try env.fetchSeeded(\Cabinet.label, "North", in: context)
            context.delete(north)
            try env.step("deleting the cabinet 'North' (folders 'Alpha' and 'beta')") { try context.save() }
            let after = try StoredState.read(container, env)
            let gone = ["Alpha", "beta"]
            try checkOnlyInvolvedChanged(
                before: before, after: after,
                involved: involved(in: seed, folders: Set(gone), extra: [north.persistentModelID]), env,
                what: "deleting the cabinet 'North'")
            let folders = try env.all(Folder.self, in: container, by: \.name).map(\.name)
            try env.checkEqual(
                folders, ["Gamma", "delta"],
                "deleting a 'Cabinet' did not delete exactly its folders (.cascade, first level): delete rule applied "
                    + "wrongly")
            let notes = try env.all(Note.self, in: container, by: \.text).map(\.text)
            try env.checkEqual(
                notes, seed.notes.filter { !gone.contains($0.folder?.name ?? "") }.map(\.text).sorted(),
                "deleting a 'Cabinet' did not delete exactly the notes of its folders (.cascade, second level): "
                    + "delete rule applied wrongly")
            let remarks = try env.all(Remark.self, in: container, by: \.text)
            try env.checkEqual(
                remarks.map(\.text), seed.remarks.map(\.text).sorted(),
                "deleting a 'Cabinet' deleted remarks, whose rule from 'Note' is .nullify (third level): delete rule "
                    + "applied wrongly")
            let orphaned = Set(seed.remarks.filter { gone.contains($0.note?.folder?.name ?? "") }.map(\.text))
            try env.checkEqual(
                remarks.filter { $0.note != nil }.map(\.text),
                seed.remarks.filter { $0.note != nil && !orphaned.contains($0.text) }.map(\.text).sorted(),
                "after deleting a 'Cabinet', remarks of its deleted notes still have a note, or others lost theirs "
                    + "(.nullify, third level)")
            let specimens = try env.all(Specimen.self, in: container, by: \.code)
            try env.checkEqual(
                specimens.map { $0.folder?.name ?? "nil" },
                seed.specimens.sorted { $0.code < $1.code }.map {
                    gone.contains($0.folder?.name ?? "") ? "nil" : $0.folder?.name ?? "nil"
                },
                "after deleting a 'Cabinet', specimens of its folders still have a folder, or others lost theirs "
                    + "(.nullify, second level)")
            let cabinets = try env.all(Cabinet.self, in: container, by: \.label)
            try env.checkEqual(
                cabinets.map { "\($0.label): \($0.folders.map(\.name).sorted())" }, ["north: [\"Gamma\"]"],
                "after deleting the cabinet 'North', the cabinets read wrong: 'north' differs from 'North' only in case"
            )
            try checkNoDanglingReferences(
                after, through: inverseRelationships, env, after: "deleting the cabinet 'North'")
        },
        CaseDefinition(
            .relationships, "deepDenyRefusesWholeSave",
            "Deleting a cabinet whose folder has a hold (.deny, two levels down) is refused, and nothing of that "
                + "save, cascades included, is stored."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let before = try StoredState.read(container, env)
            let context = env.freshContext(container)
            context.delete(try env.fetchSeeded(\Cabinet.label, "north", in: context))
            let entry = LogEntry()
            entry.sequence = 777
            context.insert(entry)
            try env.expectError(
                [.denyRuleViolation], "deleting the cabinet 'north', whose folder 'Gamma' has a hold (.deny)",
                ifItSucceeds: "deleting a cabinet whose folder has a hold succeeded: a .deny rule two levels down "
                    + "was not applied"
            ) { try context.save() }
            let after = try StoredState.read(container, env)
            if let (_, lines) = after.differences(from: before) {
                throw env.failure(
                    "a save refused by a .deny rule two levels down stored some of its changes: the save was not "
                        + "atomic",
                    found: lines.prefix(4).joined(separator: "; "))
            }
        },
        CaseDefinition(
            .relationships, "nullifiedReferencesAreStored",
            "When a delete clears references (nullify), the store keeps them cleared on both sides: no stored "
                + "reference leads to a deleted model, even one a context would read as nil."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let notes = try env.step("fetching notes") { try context.fetch(FetchDescriptor<Note>()) }
            for note in notes where note.order == 0 { context.delete(note) }
            try env.step("deleting the first note of every folder") { try context.save() }
            let state = try StoredState.read(container, env)
            try checkNoDanglingReferences(
                state, through: inverseRelationships, env, after: "deleting notes that have remarks")
            let stored = state.entities["Remark"] ?? [:]
            let cleared = stored.values.filter { $0["note"] == .null }.count
            try env.checkEqual(
                cleared, 1 + 4 + 1,
                "after deleting 4 notes (5 remarks between them), the store does not keep exactly those remarks, and "
                    + "the loose one, with 'note' cleared")
        },
    ]
}
