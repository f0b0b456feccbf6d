import Foundation
import ModelStore

/// To-one and to-many relationships, their inverses, and every delete rule, one and three levels deep.
enum RelationshipCases {
    /// The identifiers of every seeded model a delete of `folders` may touch: the folders, their notes, those
    /// notes' remarks, and the folders' specimens, plus `extra`.
    static func involved(in seed: Seed, folders names: Set<String>, extra: [PersistentIdentifier] = [])
        -> Set<PersistentIdentifier>
    {
        let folders = seed.folders.filter { names.contains($0.name) }
        let notes = seed.notes.filter { $0.folder.map { names.contains($0.name) } ?? false }
        let noteIDs = Set(notes.map(\.persistentModelID))
        let remarks = seed.remarks.filter { $0.note.map { noteIDs.contains($0.persistentModelID) } ?? false }
        let specimens = seed.specimens.filter { $0.folder.map { names.contains($0.name) } ?? false }
        return Set(
            folders.map(\.persistentModelID) + notes.map(\.persistentModelID) + remarks.map(\.persistentModelID)
                + specimens.map(\.persistentModelID) + extra)
    }

    /// Fails, naming the right cause, when a save changed stored models it had no reason to touch.
    ///
    /// Checked before the delete rules themselves, so a store that stores an update on the wrong model (rows
    /// shifted or swapped) is reported as that, not as a wrong delete rule.
    ///
    /// Models the delete involves may lose or change only the relationships in `mayChange`
    /// (`"Entity.property"`, the references a delete rule clears and the inverses it updates); every other
    /// value of every model that survives MUST be what it was.
    static func checkOnlyInvolvedChanged(
        before: StoredState, after: StoredState, involved: Set<PersistentIdentifier>, _ env: CaseEnvironment,
        what: String, mayChange: Set<String> = inverseRelationships
    ) throws {
        var touched: [String] = []
        for (entity, models) in before.entities.sorted(by: { $0.key < $1.key }) {
            for (id, values) in models.sorted(by: { $0.key < $1.key }) {
                guard let stored = after.entities[entity]?[id] else {
                    if !involved.contains(id) { touched.append("'\(entity)' \(id) was deleted") }
                    continue
                }
                let changed = values.keys.sorted().filter { property in
                    stored[property] != values[property]
                        && !(involved.contains(id) && mayChange.contains("\(entity).\(property)"))
                }
                if !changed.isEmpty { touched.append("'\(entity)' \(id) changed \(changed)") }
            }
        }
        try env.check(
            touched.isEmpty,
            "\(what) changed \(touched.count) stored model(s), or values of them, that neither the delete nor its "
                + "rules touch: the store stored updates on other models than the ones saved (rows shifted or "
                + "swapped), or deleted models it was not asked to delete",
            found: touched.prefix(4).joined(separator: "; "))
    }

    /// Fails when a stored relationship still refers to a model the store no longer has: the context reads
    /// such a reference as `nil`, but the store keeps a dangling identifier that a later model could reuse.
    static func checkNoDanglingReferences(
        _ state: StoredState, through relationships: Set<String>, _ env: CaseEnvironment, after what: String
    ) throws {
        let stored = Set(state.entities.values.flatMap(\.keys))
        var dangling: [String] = []
        for (entity, models) in state.entities.sorted(by: { $0.key < $1.key }) {
            for (id, values) in models.sorted(by: { $0.key < $1.key }) {
                for (property, value) in values.sorted(by: { $0.key < $1.key })
                where relationships.contains("\(entity).\(property)") {
                    let missing = value.referencedIdentifiers.filter { !stored.contains($0) }
                    if !missing.isEmpty { dangling.append("'\(entity).\(property)' of \(id) -> \(missing)") }
                }
            }
        }
        try env.check(
            dangling.isEmpty,
            "after \(what), the store still keeps references to deleted models (a context reads them as nil, but "
                + "they are stored): the nullify rule's updates were not stored, or the inverse side was not updated",
            found: dangling.prefix(4).joined(separator: "; "))
    }

    /// Every relationship of the fixture that has an inverse, both sides: these MUST never dangle.
    static let inverseRelationships: Set<String> = [
        "Cabinet.folders", "Folder.cabinet", "Folder.notes", "Folder.specimens", "Folder.holds", "Note.folder",
        "Note.remarks", "Remark.note", "Specimen.folder", "Hold.folder",
    ]

    static let all: [CaseDefinition] = deepCases + oneLevelCases

    /// The cases one level deep.
    static let oneLevelCases: [CaseDefinition] = [
        CaseDefinition(
            .relationships, "toOneAndToManyRoundTrip",
            "Both sides of every relationship come back as saved, in a fresh context."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let seed = Seed.make()
            let folders = try env.all(Folder.self, in: container, by: \.name)
            for (folder, expected) in zip(folders, seed.folders.sorted { $0.name < $1.name }) {
                try env.checkEqual(
                    folder.specimens.map(\.code).sorted(), expected.specimens.map(\.code).sorted(),
                    "the to-many 'Folder.specimens' of '\(folder.name)' came back wrong")
                try env.checkEqual(
                    folder.notes.map(\.text).sorted(), expected.notes.map(\.text).sorted(),
                    "the to-many 'Folder.notes' of '\(folder.name)' came back wrong")
                try env.checkEqual(
                    folder.holds.map(\.reason), expected.holds.map(\.reason),
                    "the to-many 'Folder.holds' of '\(folder.name)' came back wrong")
            }
            let specimens = try env.all(Specimen.self, in: container, by: \.code)
            try env.checkEqual(
                specimens.map { $0.folder?.name ?? "nil" }, seed.specimens.map { $0.folder?.name ?? "nil" },
                "the to-one 'Specimen.folder' came back wrong")
            try env.checkEqual(
                specimens.map { $0.peer?.code ?? "nil" }, seed.specimens.map { $0.peer?.code ?? "nil" },
                "the self-referencing to-one 'Specimen.peer' came back wrong")
            let notes = try env.all(Note.self, in: container, by: \.text)
            try env.checkEqual(
                notes.map { $0.subject?.code ?? "nil" },
                seed.notes.sorted { $0.text < $1.text }.map { $0.subject?.code ?? "nil" },
                "the to-one 'Note.subject' came back wrong")
        },
        CaseDefinition(
            .relationships, "movingBetweenInverses",
            "Moving a model from one to-many to another is stored on both sides."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let specimens = try env.step("fetching specimens") { try context.fetch(FetchDescriptor<Specimen>()) }
            let folders = try env.step("fetching folders") { try context.fetch(FetchDescriptor<Folder>()) }
            let moving = try env.require(specimens.first { $0.code == "S01" }, "the seeded specimen 'S01' is missing")
            let beta = try env.require(folders.first { $0.name == "beta" }, "the seeded folder 'beta' is missing")
            moving.folder = beta
            let leaving = try env.require(specimens.first { $0.code == "S02" }, "the seeded specimen 'S02' is missing")
            leaving.folder?.specimens.removeAll { $0 === leaving }
            try env.step("saving a specimen moved to another folder and one removed from its folder") {
                try context.save()
            }
            let fresh = try env.all(Folder.self, in: container, by: \.name)
            let alpha = fresh.first { $0.name == "Alpha" }?.specimens.map(\.code) ?? []
            let freshBeta = fresh.first { $0.name == "beta" }?.specimens.map(\.code) ?? []
            try env.check(
                !alpha.contains("S01") && freshBeta.contains("S01"),
                "moving 'S01' from 'Alpha' to 'beta' was not stored on both sides of the relationship",
                expected: "'S01' in beta only", found: "Alpha: \(alpha), beta: \(freshBeta)")
            let freshLeaving = try env.all(Specimen.self, in: container, by: \.code).first { $0.code == "S02" }
            try env.check(
                freshLeaving?.folder == nil,
                "removing 'S02' from its folder's 'specimens' did not clear 'S02.folder'",
                found: freshLeaving?.folder?.name ?? "nil")
        },
        CaseDefinition(
            .relationships, "cascadeDeletesRelated", "Deleting a folder deletes its notes (.cascade) and no others."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let before = try StoredState.read(container, env)
            let context = env.freshContext(container)
            let alpha = try env.fetchSeeded(\Folder.name, "Alpha", in: context)
            context.delete(alpha)
            try env.step("deleting the folder 'Alpha'") { try context.save() }
            try checkOnlyInvolvedChanged(
                before: before, after: try StoredState.read(container, env),
                involved: involved(in: seed, folders: ["Alpha"], extra: seed.cabinets.map(\.persistentModelID)), env,
                what: "deleting the folder 'Alpha'")
            let notes = try env.all(Note.self, in: container, by: \.text).map(\.text)
            try env.check(
                !notes.contains { $0.hasPrefix("note-Alpha") },
                "deleting a 'Folder' left its notes, whose rule is .cascade: delete rule applied wrongly",
                found: "\(notes.filter { $0.hasPrefix("note-Alpha") })")
            try env.checkEqual(
                notes.count, Seed.make().notes.count - 3,
                "deleting a 'Folder' deleted notes of other folders: delete rule applied wrongly")
            let folders = try env.all(Folder.self, in: container, by: \.name).map(\.name)
            try env.check(!folders.contains("Alpha"), "the deleted folder 'Alpha' is still stored: delete ignored")
        },
        CaseDefinition(
            .relationships, "nullifyKeepsRelated",
            "Deleting a folder keeps its specimens (.nullify) and clears their folder."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let before = try StoredState.read(container, env)
            let members = seed.specimens.filter { $0.folder?.name == "beta" }.map(\.code)
            let context = env.freshContext(container)
            let beta = try env.fetchSeeded(\Folder.name, "beta", in: context)
            context.delete(beta)
            try env.step("deleting the folder 'beta'") { try context.save() }
            let after = try StoredState.read(container, env)
            try checkOnlyInvolvedChanged(
                before: before, after: after,
                involved: involved(in: seed, folders: ["beta"], extra: seed.cabinets.map(\.persistentModelID)), env,
                what: "deleting the folder 'beta'")
            try checkNoDanglingReferences(
                after, through: inverseRelationships, env, after: "deleting the folder 'beta'")
            let specimens = try env.all(Specimen.self, in: container, by: \.code)
            let missing = members.filter { code in !specimens.contains { $0.code == code } }
            try env.check(
                missing.isEmpty,
                "deleting a 'Folder' also deleted its 'Specimen' models, whose rule is .nullify: delete "
                    + "rule applied wrongly",
                expected: "\(seed.specimens.count) specimens", found: "\(specimens.count), missing \(missing)")
            let dangling = specimens.filter { members.contains($0.code) && $0.folder != nil }.map(\.code)
            try env.check(
                dangling.isEmpty,
                "after deleting their folder (.nullify), specimens \(dangling) still have a folder: "
                    + "delete rule applied wrongly"
            )
        },
        CaseDefinition(
            .relationships, "denyRefusesDelete",
            "A folder with a hold cannot be deleted (.deny) and nothing of that save is stored; without "
                + "the hold it can."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let gamma = try env.fetchSeeded(\Folder.name, "Gamma", in: context)
            let entry = LogEntry()
            entry.sequence = 777
            context.insert(entry)
            context.delete(gamma)
            try env.expectError([.denyRuleViolation], "deleting a folder that still has a hold (.deny)") {
                try context.save()
            }
            try env.check(
                try env.all(Folder.self, in: container, by: \.name).contains { $0.name == "Gamma" },
                "a delete refused by a .deny rule was stored anyway")
            try env.check(
                !(try env.all(LogEntry.self, in: container, by: \.label).contains { $0.sequence == 777 }),
                "an insert saved together with a delete refused by a .deny rule was stored: the save was not atomic")
            context.rollback()
            let hold = try env.require(gamma.holds.first, "the folder 'Gamma' lost its hold")
            context.delete(hold)
            context.delete(gamma)
            try env.step("deleting the hold and then its folder in one save") { try context.save() }
            try env.check(
                !(try env.all(Folder.self, in: container, by: \.name).contains { $0.name == "Gamma" }),
                "deleting 'Gamma' together with its hold was not stored: delete ignored")
            try env.checkEqual(
                try env.count(Hold.self, in: container), 0, "the deleted hold is still stored: delete ignored")
        },
        CaseDefinition(
            .relationships, "noActionLeavesRelated",
            "Deleting a note leaves its subject (.noAction) unchanged, and updates its folder's notes."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let note = try env.fetchSeeded(\Note.text, "note-Alpha-0", in: context)
            let subject = try env.require(note.subject?.code, "the seeded note 'note-Alpha-0' has no subject")
            context.delete(note)
            try env.step("deleting a note") { try context.save() }
            let specimens = try env.all(Specimen.self, in: container, by: \.code)
            try env.check(
                specimens.contains { $0.code == subject },
                "deleting a 'Note' deleted its subject, whose rule is .noAction: delete rule applied wrongly")
            let alpha = try env.all(Folder.self, in: container, by: \.name).first { $0.name == "Alpha" }
            try env.checkEqual(
                alpha?.notes.map(\.text).sorted() ?? [], ["note-Alpha-1", "note-Alpha-2"],
                "after deleting 'note-Alpha-0', its folder's 'notes' still list it")
        },
        CaseDefinition(
            .relationships, "danglingReferences",
            "Deleting a model that others refer to through relationships without an inverse succeeds, and those "
                + "references then read nil."
        ) { env in
            // The context applies delete rules only through inverses (as SwiftData does); a store that refuses
            // such a delete makes an app that works on one adapter fail on another.
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let target = try env.fetchSeeded(\Specimen.code, "S04", in: context)
            let notes = try env.step("fetching notes") { try context.fetch(FetchDescriptor<Note>()) }
            try env.check(notes.contains { $0.subject === target }, "the seed has no note about 'S04'")
            context.delete(target)
            try env.step("deleting 'S04', which a note's 'subject' and a specimen's 'peer' still refer to") {
                try context.save()
            }
            let fresh = try env.all(Specimen.self, in: container, by: \.code)
            try env.check(
                !fresh.contains { $0.code == "S04" }, "the deleted specimen 'S04' is still stored: delete ignored")
            let holder = try env.require(fresh.first { $0.code == "S03" }, "the seeded specimen 'S03' is missing")
            try env.check(holder.peer == nil, "'S03.peer' still leads to the deleted 'S04'", found: holder.peer?.code)
            let note = try env.require(
                try env.all(Note.self, in: container, by: \.text).first { $0.text == "note-beta-0" },
                "the seeded note 'note-beta-0' is missing")
            try env.check(note.subject == nil, "'note-beta-0.subject' still leads to the deleted 'S04'")
        },
    ]
}
