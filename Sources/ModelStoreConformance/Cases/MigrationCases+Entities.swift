import Foundation
import ModelStore

// Entities that come and go:
//   1.0.0  Shelf(name), Label(text)
//   2.0.0  Shelf(name), Bin(code, shelf)      custom from 1.0.0: didMigrate adds a bin to every shelf

enum ShelvesV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Shelf.self, Label.self] }

    final class Shelf: PersistentModel {
        @Attribute var name: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }

    final class Label: PersistentModel {
        @Attribute var text: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum ShelvesV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Shelf.self, Bin.self] }

    final class Shelf: PersistentModel {
        @Attribute var name: String = ""
        @Relationship(deleteRule: .cascade, inverse: \Bin.shelf) var bins: [Bin] = []
        let persistentBackingData = BackingData()
        init() {}
    }

    final class Bin: PersistentModel {
        @Attribute var code: String = ""
        @Relationship var shelf: Shelf?
        let persistentBackingData = BackingData()
        init() {}
    }
}

/// Removes 'Label', adds 'Bin', and gives every shelf a bin in didMigrate.
enum ShelvesPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ShelvesV1.self, ShelvesV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: ShelvesV1.self, toVersion: ShelvesV2.self, willMigrate: nil,
                didMigrate: { context in
                    for shelf in try context.fetch(FetchDescriptor<ShelvesV2.Shelf>()) {
                        let bin = ShelvesV2.Bin()
                        bin.code = "bin-" + shelf.name
                        bin.shelf = shelf
                        context.insert(bin)
                    }
                    try context.save()
                })
        ]
    }
}

/// Migration cases about entities added and removed.
extension MigrationCases {
    static let entities: [CaseDefinition] = [
        CaseDefinition(
            .migrations, "stageAddsAndRemovesEntities",
            "A stage drops a removed entity's models, and didMigrate fills a new entity with related models "
                + "that are stored and survive reopening.",
            requires: [.durability, .migrations, .customMigrationStages]
        ) { env in
            let configuration = try env.configuration()
            do {
                let container = try env.step("opening the store at 1.0.0") {
                    try ModelContainer(for: Schema(versionedSchema: ShelvesV1.self), configurations: [configuration])
                }
                let context = ModelContext(container)
                for name in ["a", "b"] {
                    let shelf = ShelvesV1.Shelf()
                    shelf.name = name
                    context.insert(shelf)
                    let label = ShelvesV1.Label()
                    label.text = name
                    context.insert(label)
                }
                try env.step("saving two shelves and two labels") { try context.save() }
            }
            for attempt in ["migrating", "reopening"] {
                let container = try env.step("\(attempt) at 2.0.0 with the shelves plan") {
                    try ModelContainer(
                        for: Schema(versionedSchema: ShelvesV2.self), migrationPlan: ShelvesPlan.self,
                        configurations: [configuration])
                }
                let context = ModelContext(container)
                let bins = try env.step("fetching bins after \(attempt)") {
                    try context.fetch(FetchDescriptor<ShelvesV2.Bin>(sortBy: [SortDescriptor(\.code)]))
                }
                try env.checkEqual(
                    bins.map(\.code), ["bin-a", "bin-b"], "after \(attempt), the bins didMigrate added are not stored")
                try env.checkEqual(
                    bins.map { $0.shelf?.name ?? "none" }, ["a", "b"],
                    "after \(attempt), the bins do not refer to their shelves")
            }
        }
    ]
}
