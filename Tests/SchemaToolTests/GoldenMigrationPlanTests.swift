import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreTooling

/// `schema diff --out`: the committed `Golden/MigrationPlan.swift` is what the tool writes for
/// `Fixtures/v1.json` and `Fixtures/v2.json`, it compiles, and its versions are those files.
struct GoldenMigrationPlanTests {
    private func plan() throws -> (old: SchemaDocument, new: SchemaDocument, diff: SchemaDiff) {
        let old = try SchemaToolFixtures.document("v1.json")
        let new = try SchemaToolFixtures.document("v2.json")
        return (old, new, SchemaDiff(old: old, new: new))
    }

    @Test func generatingThePlanAgainGivesTheCommittedFile() throws {
        let (old, new, diff) = try plan()
        let generated = try MigrationPlanWriter(old: old, new: new, diff: diff)
            .file(oldSource: "v1.json", newSource: "v2.json")
        #expect(generated == (try SchemaToolFixtures.text("Golden/MigrationPlan.swift")))
    }

    @Test func theVersionedSchemasExportAsTheirFiles() throws {
        let (old, new, _) = try plan()
        try Schema(versionedSchema: SchemaV1.self).validate()
        try Schema(versionedSchema: SchemaV2.self).validate()
        #expect(SchemaDocument(Schema(versionedSchema: SchemaV1.self)) == old)
        #expect(SchemaDocument(Schema(versionedSchema: SchemaV2.self)) == new)
        #expect(MigrationPlan.schemas.map { $0.versionIdentifier } == [old.version, new.version])
    }

    @Test func theChangesNeedOneCustomStage() throws {
        #expect(try plan().diff.needsCustomStage)
        #expect(MigrationPlan.stages.count == 1)
        guard case .custom(let from, let to, let willMigrate, let didMigrate)? = MigrationPlan.stages.first else {
            Issue.record("the stage is not custom: \(MigrationPlan.stages)")
            return
        }
        #expect(from.versionIdentifier == Schema.Version(1, 0, 0) && to.versionIdentifier == Schema.Version(2, 0, 0))
        #expect(willMigrate != nil && didMigrate != nil)
    }

    /// The plan keeps the renamed model's data: 'Label' models saved under version 1 are 'Tag'
    /// models with the same values after the store (a JSON file, found through its scheme) has
    /// run the plan.
    @Test func theRenamedModelsDataIsCopiedByThePlan() throws {
        let folder = try TemporaryDirectory()
        let url = "json:" + folder.path("store.json")
        do {
            let container = try ModelContainer(
                for: Schema(versionedSchema: SchemaV1.self), url: url, registry: .shared)
            let context = ModelContext(container)
            for (name, color) in [("red", 1), ("blue", 2)] {
                let label = SchemaV1.Label()
                label.name = name
                label.color = color
                context.insert(label)
            }
            try context.save()
        }
        let container = try ModelContainer(
            for: Schema(versionedSchema: SchemaV2.self), url: url, registry: .shared, migrationPlan: MigrationPlan.self)
        let tags = try ModelContext(container).fetch(FetchDescriptor<SchemaV2.Tag>())
        #expect(tags.map { "\($0.name) \($0.color)" }.sorted() == ["blue 2", "red 1"])
    }
}
