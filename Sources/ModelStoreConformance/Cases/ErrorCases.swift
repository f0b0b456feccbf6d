import Foundation
import ModelStore

/// Errors: the right `DataStoreError` codes, naming the right things, never leaking values.
enum ErrorCases {
    static let secret = "SECRET-VALUE-31337"

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .errors, "uniqueViolationNamesConstraint",
            "A unique violation is DataStoreError.uniqueConstraintViolation naming the entity and property, "
                + "with the value kept out of its description."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            context.insert(Seed.makeSpecimen(0, code: secret))
            try env.step("saving a specimen") { try context.save() }
            context.insert(Seed.makeSpecimen(1, code: secret))
            let error = try env.expectError(
                [.uniqueConstraintViolation], "saving a duplicate 'code'",
                ifItSucceeds: "saving a duplicate 'code' succeeded: unique constraint not enforced"
            ) {
                try context.save()
            }
            try env.checkEqual(error.entityName, "Specimen", "the unique-violation error names the wrong entity")
            try env.checkEqual(error.propertyNames, ["code"], "the unique-violation error names the wrong properties")
            try env.check(
                !error.description.contains(secret),
                "the unique-violation error's description contains the conflicting value: errors MUST NOT "
                    + "leak record contents",
                found: error.description)
        },
        CaseDefinition(
            .errors, "compoundViolationNamesEveryProperty",
            "A compound unique violation names every property of the constraint."
        ) { env in
            let container = try env.openContainer()
            let context = env.freshContext(container)
            context.insert(Seed.makeSpecimen(0, code: "A"))
            try env.step("saving a specimen") { try context.save() }
            context.insert(Seed.makeSpecimen(0, code: "B"))
            let error = try env.expectError(
                [.uniqueConstraintViolation], "saving a duplicate ('series', 'serial')",
                ifItSucceeds: "saving a duplicate ('series', 'serial') succeeded: compound unique "
                    + "constraint not enforced"
            ) { try context.save() }
            try env.checkEqual(
                Set(error.propertyNames), ["series", "serial"],
                "the compound unique-violation error names the wrong properties")
        },
        CaseDefinition(
            .errors, "denyViolationNamesRelationship",
            "A refused delete is DataStoreError.denyRuleViolation naming the entity and relationship."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let context = env.freshContext(container)
            let gamma = try env.fetchSeeded(\Folder.name, "Gamma", in: context)
            context.delete(gamma)
            let error = try env.expectError([.denyRuleViolation], "deleting a folder that still has a hold") {
                try context.save()
            }
            try env.checkEqual(error.entityName, "Folder", "the deny-rule error names the wrong entity")
            try env.checkEqual(error.propertyNames, ["holds"], "the deny-rule error names the wrong relationship")
        },
        CaseDefinition(
            .errors, "changingADeletedModelFails",
            "Saving changes to a model another context deleted fails with notFound or conflict and does "
                + "not bring it back."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let stale = env.freshContext(container)
            let held = try env.fetchSeeded(\LogEntry.sequence, 3, in: stale)
            let deleter = env.freshContext(container)
            let doomed = try env.fetchSeeded(\LogEntry.sequence, 3, in: deleter)
            deleter.delete(doomed)
            try env.step("deleting entry 3 in the second context") { try deleter.save() }
            held.label = "changed after delete"
            try env.expectError(
                [.notFound, .conflict], "saving a change to a model another context deleted",
                ifItSucceeds: "saving a change to a model another context deleted succeeded: the store "
                    + "brought a deleted model back"
            ) { try stale.save() }
            try env.check(
                !(try env.all(LogEntry.self, in: container, by: \.label).contains { $0.sequence == 3 }),
                "a change to a deleted model brought it back")
        },
        CaseDefinition(
            .errors, "failingPredicateIsInvalidPredicate",
            "A predicate that cannot be evaluated (a forced unwrap of nil) fails with invalidPredicate, pushed or not."
        ) { env in
            let pushed = try env.openContainer()
            let fallback = try env.openFallbackContainer()
            for (label, container) in [("", pushed), (" through the in-memory fallback", fallback)] {
                try env.seed(container)
                let context = env.freshContext(container)
                try env.expectError(
                    [.invalidPredicate], "fetching with 'nickname! == \"x\"' where some nicknames are nil\(label)",
                    ifItSucceeds:
                        "a fetch with 'nickname! == \"x\"'\(label) succeeded although some nicknames are nil: "
                        + "evaluation errors MUST surface as invalidPredicate, not as a filtered result"
                ) { _ = try context.fetch(FetchDescriptor<Specimen>(predicate: #Predicate { $0.nickname! == "x" })) }
            }
        },
    ]
}
