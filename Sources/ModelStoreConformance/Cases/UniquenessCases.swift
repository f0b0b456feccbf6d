import Foundation
import ModelStore

/// Unique attributes and compound constraints: the typed error, and nothing of the failed save stored.
enum UniquenessCases {
    /// Fails unless the store holds exactly these specimen codes and log entry sequences.
    static func checkUnchanged(
        _ container: ModelContainer, _ env: CaseEnvironment, codes: [String], sequences: [Int], after what: String
    ) throws {
        let storedCodes = try env.all(Specimen.self, in: container, by: \.code).map(\.code)
        try env.checkEqual(
            storedCodes, codes.sorted(), "after \(what), the stored specimens changed: the failed save was not atomic")
        let storedSequences = try env.all(LogEntry.self, in: container, by: \.label).map(\.sequence).sorted()
        try env.checkEqual(
            storedSequences, sequences.sorted(),
            "after \(what), the stored log entries changed: the failed save was not atomic")
    }

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .uniqueness, "upsertFindsTheStoredModel",
            "Under SwiftData's upsert, a new model with a stored model's unique value updates that model: the "
                + "context finds it through the store's own query."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let context = env.freshContext(container)
            context.duplicateInsertPolicy = .upsert
            let again = Seed.makeSpecimen(0, code: "S01")
            again.count = 4
            context.insert(again)
            try env.step("saving a new 'S01' under .upsert") { try context.save() }
            let stored = try env.all(Specimen.self, in: container, by: \.code)
            try env.checkEqual(
                stored.map(\.code), seed.specimens.map(\.code).sorted(),
                "an upsert inserted a second model or lost one: the store's query for 'S01' missed the stored model")
            let original = try env.require(stored.first { $0.code == "S01" }, "'S01' is missing after the upsert")
            try env.checkEqual(original.count, 4, "the stored 'S01' did not take the inserted model's values")
            try env.checkEqual(
                again.persistentModelID, original.persistentModelID,
                "the inserted object does not name the stored model it updated")
        },
        CaseDefinition(
            .uniqueness, "duplicateWithinOneSave",
            "Two new models with the same unique value fail the save, and nothing of it is stored."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            context.insert(Seed.makeSpecimen(0, code: "DUP"))
            context.insert(Seed.makeSpecimen(1, code: "DUP"))
            context.insert(Seed.makeSpecimen(2))
            let entry = LogEntry()
            entry.sequence = 1
            context.insert(entry)
            try env.expectError(
                [.uniqueConstraintViolation], "saving two new specimens with code 'DUP'",
                ifItSucceeds: "saving two new specimens with code 'DUP' succeeded: unique constraint not enforced"
            ) { try context.save() }
            try checkUnchanged(container, env, codes: [], sequences: [], after: "a save refused for a duplicate 'code'")
        },
        CaseDefinition(
            .uniqueness, "duplicateOfStoredModel",
            "A new model with a stored model's unique value fails the save, and nothing of it is stored."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let context = env.freshContext(container)
            context.insert(Seed.makeSpecimen(40, code: "S01"))
            let entry = LogEntry()
            entry.sequence = 999
            context.insert(entry)
            try env.expectError(
                [.uniqueConstraintViolation], "saving a duplicate unique value",
                ifItSucceeds: "saving a second 'Specimen' with code 'S01' succeeded: unique constraint not enforced"
            ) { try context.save() }
            try checkUnchanged(
                container, env, codes: seed.specimens.map(\.code), sequences: seed.entries.map(\.sequence),
                after: "a save refused for a duplicate 'code'")
            let original = try env.all(Specimen.self, in: container, by: \.code).first { $0.code == "S01" }
            try SpecimenField.check(
                try env.require(original, "'S01' is missing"), equals: Seed.makeSpecimen(0),
                "the stored 'S01' after a refused duplicate", in: env)
        },
        CaseDefinition(
            .uniqueness, "compoundConstraint",
            "Two models may share one property of a compound constraint, but not all of them."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let context = env.freshContext(container)
            let sameSeries = Seed.makeSpecimen(0, code: "NEW1")
            sameSeries.serial = 99
            context.insert(sameSeries)
            try env.step("saving a specimen that shares only 'series' with a stored one") { try context.save() }
            let clash = Seed.makeSpecimen(0, code: "NEW2")
            context.insert(clash)
            try env.expectError(
                [.uniqueConstraintViolation], "saving a duplicate unique value",
                ifItSucceeds: "saving a 'Specimen' with the same 'series' and 'serial' as 'S01' succeeded: compound "
                    + "unique constraint not enforced"
            ) { try context.save() }
            try checkUnchanged(
                container, env, codes: seed.specimens.map(\.code) + ["NEW1"],
                sequences: seed.entries.map(\.sequence), after: "a save refused for a duplicate ('series', 'serial')")
        },
        CaseDefinition(
            .uniqueness, "updateIntoDuplicate",
            "Changing a saved model's unique value to another model's fails the save and changes nothing."
        ) { env in
            let container = try env.openContainer()
            let seed = try env.seed(container)
            let context = env.freshContext(container)
            let specimens = try env.step("fetching specimens") { try context.fetch(FetchDescriptor<Specimen>()) }
            let second = try env.require(specimens.first { $0.code == "S02" }, "the seeded specimen 'S02' is missing")
            second.code = "S01"
            try env.expectError(
                [.uniqueConstraintViolation], "saving a duplicate unique value",
                ifItSucceeds: "changing the code of 'S02' to 'S01' and saving succeeded: unique constraint not enforced"
            ) { try context.save() }
            try checkUnchanged(
                container, env, codes: seed.specimens.map(\.code), sequences: seed.entries.map(\.sequence),
                after: "an update refused for a duplicate 'code'")
        },
        CaseDefinition(
            .uniqueness, "freedValueIsReusable",
            "A unique value freed by a delete or a change can be taken in the same save."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let entry = try env.fetchSeeded(\LogEntry.sequence, 1, in: context)
            context.delete(entry)
            let replacement = LogEntry()
            replacement.sequence = 1
            replacement.label = "replacement"
            context.insert(replacement)
            try env.step("deleting log entry 1 and inserting a new entry 1 in one save") { try context.save() }
            let specimens = try env.step("fetching specimens") { try context.fetch(FetchDescriptor<Specimen>()) }
            let a = try env.require(specimens.first { $0.code == "S02" }, "the seeded specimen 'S02' is missing")
            let b = try env.require(specimens.first { $0.code == "S03" }, "the seeded specimen 'S03' is missing")
            a.code = "TMP"
            b.code = "S02"
            try env.step("giving 'S03' the code 'S02' freed by the same save") { try context.save() }
            let codes = try env.all(Specimen.self, in: container, by: \.code).map(\.code)
            try env.check(
                codes.contains("S02") && codes.contains("TMP") && !codes.contains("S03"),
                "reusing a unique value freed in the same save was not stored as saved", found: "\(codes.prefix(4))…")
            let labels = try env.all(LogEntry.self, in: container, by: \.label).filter { $0.sequence == 1 }.map(\.label)
            try env.checkEqual(
                labels, ["replacement"], "reusing a unique value freed by a delete in the same save was not stored")
        },
        CaseDefinition(
            .uniqueness, "contextKeepsChangesAfterViolation",
            "After a refused save the context keeps its changes; fixing the value and saving again succeeds."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let duplicate = Seed.makeSpecimen(40, code: "S01")
            context.insert(duplicate)
            _ = try? context.save()
            try env.check(context.hasChanges, "after a refused save, the context lost its pending insert")
            duplicate.code = "S41"
            try env.step("saving again after fixing the duplicate code") { try context.save() }
            try env.check(
                try env.all(Specimen.self, in: container, by: \.code).contains { $0.code == "S41" },
                "the corrected insert was not stored")
        },
    ]
}
