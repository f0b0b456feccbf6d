import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

// Three versions of 'Crate' and 'Box':
//   1.0.0  Crate(name, count: Int?, tag)           Box(label, crate: Crate?)
//   2.0.0  Crate(name, count: Int = 7, title ← tag) Box(label, crates: [Crate] ← crate)
//   3.0.0  Crate(name, quantity ← count, title)     Box(label, crates)
enum RunnerV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Crate.self, Box.self] }

    final class Crate: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var count: Int? = nil
        @Attribute var tag: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }

    final class Box: PersistentModel {
        @Attribute var label: String = ""
        @Relationship var crate: Crate?
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum RunnerV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Crate.self, Box.self] }

    final class Crate: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var count: Int = 7
        @Attribute(originalName: "tag") var title: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }

    final class Box: PersistentModel {
        @Attribute var label: String = ""
        @Relationship(originalName: "crate") var crates: [Crate] = []
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum RunnerV3: VersionedSchema {
    static let versionIdentifier = Schema.Version(3, 0, 0)
    static var models: [any PersistentModel.Type] { [Crate.self, Box.self] }

    final class Crate: PersistentModel {
        @Attribute var name: String = ""
        @Attribute(originalName: "count") var quantity: Int = 0
        @Attribute var title: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }

    final class Box: PersistentModel {
        @Attribute var label: String = ""
        @Relationship var crates: [Crate] = []
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum RunnerLightweightPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [RunnerV1.self, RunnerV2.self, RunnerV3.self] }
    static var stages: [MigrationStage] {
        [
            .lightweight(fromVersion: RunnerV1.self, toVersion: RunnerV2.self),
            .lightweight(fromVersion: RunnerV2.self, toVersion: RunnerV3.self),
        ]
    }
}

/// One edit a randomized `willMigrate` makes on version-1 crates.
enum CrateEdit: Sendable {
    case insert(name: String, count: Int?, tag: String)
    case delete(name: String)
    case setCount(name: String, count: Int?)
}

/// The edits the current test's stages make; a task-local, so parallel tests don't share them.
enum RandomizedStage {
    @TaskLocal static var edits: [CrateEdit] = []
    @TaskLocal static var threshold = 0
}

enum RunnerCustomPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [RunnerV1.self, RunnerV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: RunnerV1.self, toVersion: RunnerV2.self,
                willMigrate: { context in
                    for edit in RandomizedStage.edits {
                        let crates = try context.fetch(FetchDescriptor<RunnerV1.Crate>())
                        switch edit {
                        case .insert(let name, let count, let tag):
                            let crate = RunnerV1.Crate()
                            crate.name = name
                            crate.count = count
                            crate.tag = tag
                            context.insert(crate)
                        case .delete(let name):
                            for crate in crates where crate.name == name { context.delete(crate) }
                        case .setCount(let name, let count):
                            for crate in crates where crate.name == name { crate.count = count }
                        }
                        try context.save()
                    }
                },
                didMigrate: { context in
                    // Left unsaved on purpose: the runner saves what a stage leaves.
                    for crate in try context.fetch(FetchDescriptor<RunnerV2.Crate>())
                    where crate.count > RandomizedStage.threshold {
                        crate.title = crate.title.uppercased()
                    }
                })
        ]
    }
}

/// A store's data in memory, behind the runner's seam.
final class MemoryMigrationStorage: SchemaMigrationStorage {
    let storeDescription = "the test storage"
    let storeIdentifier = "test-store"
    var storedVersion: Schema.Version? { data.schema.version }
    private(set) var data: MigrationData
    private(set) var commits = 0

    init(_ data: MigrationData) { self.data = data }

    /// The stored models, as models of `schema` (the same shape as the stored one).
    func read(as schema: Schema) throws -> MigrationData {
        let snapshots = data.snapshots.map {
            DefaultSnapshot(
                persistentIdentifier: $0.persistentIdentifier, entity: schema.entity(named: $0.entity.name)!,
                values: $0.values)
        }
        return MigrationData(schema: schema, snapshots: snapshots, nextPrimaryKey: data.nextPrimaryKey)
    }

    func commit(_ data: MigrationData) throws {
        self.data = data
        commits += 1
    }
}

/// The runner, through an in-memory storage: chained lightweight stages, and custom stages whose
/// edits are checked against a plain-Swift model.
struct SchemaMigrationRunnerTests {
    static let v1 = Schema(versionedSchema: RunnerV1.self)

    /// Version-1 data: crates (name, count, tag) and boxes (label, index of their crate).
    static func storage(crates: [(String, Int?, String)], boxes: [(String, Int?)]) throws -> MemoryMigrationStorage {
        var key: Int64 = 1
        func id(_ entity: String) -> PersistentIdentifier {
            defer { key += 1 }
            return .identifier(for: "test-store", entityName: entity, primaryKey: key)
        }
        let crateEntity = v1.entity(named: "Crate")!
        let crateSnapshots = try crates.map { name, count, tag in
            try DefaultSnapshot(
                persistentIdentifier: id("Crate"), entity: crateEntity,
                namedValues: [
                    "name": .string(name), "count": count.map { .int(Int64($0)) } ?? .null, "tag": .string(tag),
                ])
        }
        let boxSnapshots = try boxes.map { label, crate in
            try DefaultSnapshot(
                persistentIdentifier: id("Box"), entity: v1.entity(named: "Box")!,
                namedValues: [
                    "label": .string(label),
                    "crate": crate.map { .reference(crateSnapshots[$0].persistentIdentifier) } ?? .null,
                ])
        }
        return MemoryMigrationStorage(
            MigrationData(schema: v1, snapshots: crateSnapshots + boxSnapshots, nextPrimaryKey: key))
    }

    static func values(_ data: MigrationData, _ entity: String, _ property: String) -> [StoreValue] {
        data.snapshots.filter { $0.entity.name == entity }.sorted { $0.persistentIdentifier < $1.persistentIdentifier }
            .map { $0[property] ?? .null }
    }

    @Test func chainedLightweightStagesCarryRenamesDefaultsAndToManyAcrossVersions() throws {
        let storage = try Self.storage(crates: [("a", 1, "x"), ("b", nil, "y")], boxes: [("one", 0), ("two", nil)])
        let v3 = Schema(versionedSchema: RunnerV3.self)
        let runner = SchemaMigrationRunner(schema: v3, plan: RunnerLightweightPlan.self)
        let report = try #require(try runner.migrate(storage))
        #expect(storage.commits == 1)
        #expect(storage.data.schema === v3)
        #expect(Self.values(storage.data, "Crate", "quantity") == [.int(1), .int(7)])
        #expect(Self.values(storage.data, "Crate", "title") == [.string("x"), .string("y")])
        let crateA = storage.data.snapshots.first { $0["name"] == .string("a") }!.persistentIdentifier
        #expect(Self.values(storage.data, "Box", "crates") == [.references([crateA]), .references([])])
        #expect(report.stages == ["lightweight 1.0.0 -> 2.0.0", "lightweight 2.0.0 -> 3.0.0"])
        let crate = try #require(report.entity(named: "Crate"))
        #expect(crate.attributesRenamed == ["tag -> title", "count -> quantity"])
        #expect(crate.rowsTouched == 2)
        #expect(report.entity(named: "Box")?.attributesRenamed == ["crate -> crates"])
    }

    @Test func aStoreAtTheAppsVersionOrOneThePlanDoesNotListRunsNothing() throws {
        let storage = try Self.storage(crates: [("a", 1, "x")], boxes: [])
        let v1 = Schema(versionedSchema: RunnerV1.self)
        #expect(try SchemaMigrationRunner(schema: v1, plan: RunnerLightweightPlan.self).migrate(storage) == nil)
        let v3 = Schema(versionedSchema: RunnerV3.self)
        #expect(try SchemaMigrationRunner(schema: v3, plan: nil).migrate(storage) == nil)
        #expect(storage.commits == 0)
    }

    @Test func aDryRunReportsWithoutCommitting() throws {
        let storage = try Self.storage(crates: [("a", 1, "x")], boxes: [])
        let v3 = Schema(versionedSchema: RunnerV3.self)
        let report = try SchemaMigrationRunner(schema: v3, plan: RunnerLightweightPlan.self).preview(storage)
        #expect(report.isDryRun)
        #expect(report.entity(named: "Crate")?.rowsTouched == 1)
        #expect(storage.commits == 0)
        #expect(storage.data.schema.version == Schema.Version(1, 0, 0))
    }

    @Test func aStageThatThrowsCommitsNothingAndIsNamed() throws {
        let storage = try Self.storage(crates: [("a", 1, "x"), ("b", 2, "y")], boxes: [])
        let v2 = Schema(versionedSchema: RunnerV2.self)
        let error = try #require(throws: DataStoreError.self) {
            _ = try SchemaMigrationRunner(schema: v2, plan: FailingAfterEditsPlan.self).migrate(storage)
        }
        #expect(error.code == .migrationFailed)
        #expect(error.message.contains("from '1.0.0' to '2.0.0'"))
        #expect(error.message.contains("the test storage"))
        #expect(storage.commits == 0)
    }

    /// Seeded random edits in willMigrate and a transform in didMigrate, against a plain-Swift model.
    @Test(arguments: 0..<40)
    func randomizedCustomStagesMatchAPlainModel(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var model: [String: (count: Int?, tag: String)] = [:]
        let counts: [Int?] = [nil, 0, 3, 7, 12]
        let tags = ["", "a", "box", "Q"]
        var crates: [(String, Int?, String)] = []
        for index in 0..<Int.random(in: 0...6, using: &rng) {
            let crate = ("c\(index)", rng.pick(counts), rng.pick(tags))
            crates.append(crate)
            model[crate.0] = (crate.1, crate.2)
        }
        var edits: [CrateEdit] = []
        for step in 0..<Int.random(in: 0...8, using: &rng) {
            let existing = model.keys.sorted()
            switch existing.isEmpty ? 0 : Int.random(in: 0..<3, using: &rng) {
            case 0:
                let edit = ("n\(step)", rng.pick(counts), rng.pick(tags))
                edits.append(.insert(name: edit.0, count: edit.1, tag: edit.2))
                model[edit.0] = (edit.1, edit.2)
            case 1:
                let name = rng.pick(existing)
                edits.append(.delete(name: name))
                model[name] = nil
            default:
                let name = rng.pick(existing)
                let count = rng.pick(counts)
                edits.append(.setCount(name: name, count: count))
                model[name]?.count = count
            }
        }
        let threshold = rng.pick([0, 5, 10])
        let storage = try Self.storage(crates: crates, boxes: [])
        let v2 = Schema(versionedSchema: RunnerV2.self)
        try RandomizedStage.$edits.withValue(edits) {
            try RandomizedStage.$threshold.withValue(threshold) {
                _ = try SchemaMigrationRunner(schema: v2, plan: RunnerCustomPlan.self).migrate(storage)
            }
        }
        // The plain model: lightweight (nil count -> 7, tag -> title), then didMigrate's transform.
        let expected = model.keys.sorted().map { name -> String in
            let count = model[name]!.count ?? 7
            let title = count > threshold ? model[name]!.tag.uppercased() : model[name]!.tag
            return "\(name) \(count) \(title)"
        }
        let found = storage.data.snapshots.map { snapshot -> String in
            guard case .string(let name)? = snapshot["name"], case .int(let count)? = snapshot["count"],
                case .string(let title)? = snapshot["title"]
            else { return "unreadable \(snapshot.values)" }
            return "\(name) \(count) \(title)"
        }.sorted()
        #expect(found == expected, "seed \(seed), edits \(edits), threshold \(threshold)")
        let keys = storage.data.snapshots.compactMap { $0.persistentIdentifier.primaryKey.intValue }
        #expect(Set(keys).count == keys.count, "seed \(seed): a key was minted twice")
    }
}

/// A plan whose custom stage edits, then throws something that is not a DataStoreError.
enum FailingAfterEditsPlan: SchemaMigrationPlan {
    struct StageFailure: Error {}
    static var schemas: [any VersionedSchema.Type] { [RunnerV1.self, RunnerV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: RunnerV1.self, toVersion: RunnerV2.self,
                willMigrate: { context in
                    for crate in try context.fetch(FetchDescriptor<RunnerV1.Crate>()) { context.delete(crate) }
                    try context.save()
                    throw StageFailure()
                }, didMigrate: nil)
        ]
    }
}

enum RunnerV4: VersionedSchema {
    static let versionIdentifier = Schema.Version(4, 0, 0)
    static var models: [any PersistentModel.Type] { [Crate.self, Box.self] }

    final class Crate: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var quantity: Int = 0
        @Attribute var title: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }

    final class Box: PersistentModel {
        @Attribute var label: String = ""
        @Relationship(originalName: "crates") var crate: Crate?
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum RunnerToOnePlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [RunnerV3.self, RunnerV4.self] }
    static var stages: [MigrationStage] { [.lightweight(fromVersion: RunnerV3.self, toVersion: RunnerV4.self)] }
}

/// A to-many relationship that becomes to-one: it migrates when the data allows, and fails naming
/// the model and the stage when it does not.
struct ToOneMigrationTests {
    /// Version-3 data: crates 'a' and 'b', and one box holding the crates at `holding`.
    static func storage(holding: [Int]) throws -> MemoryMigrationStorage {
        let v3 = Schema(versionedSchema: RunnerV3.self)
        let crates = try ["a", "b"].enumerated().map { index, name in
            try DefaultSnapshot(
                persistentIdentifier: .identifier(for: "test-store", entityName: "Crate", primaryKey: Int64(index + 1)),
                entity: v3.entity(named: "Crate")!, namedValues: ["name": .string(name)])
        }
        let box = try DefaultSnapshot(
            persistentIdentifier: .identifier(for: "test-store", entityName: "Box", primaryKey: 3),
            entity: v3.entity(named: "Box")!,
            namedValues: [
                "label": .string("box"), "crates": .references(holding.map { crates[$0].persistentIdentifier }),
            ])
        return MemoryMigrationStorage(MigrationData(schema: v3, snapshots: crates + [box], nextPrimaryKey: 4))
    }

    @Test func aToManyWithAtMostOneModelBecomesToOne() throws {
        let storage = try Self.storage(holding: [1])
        let v4 = Schema(versionedSchema: RunnerV4.self)
        try SchemaMigrationRunner(schema: v4, plan: RunnerToOnePlan.self).migrate(storage)
        let box = try #require(storage.data.snapshots.first { $0.entity.name == "Box" })
        let crateB = storage.data.snapshots.first { $0["name"] == .string("b") }?.persistentIdentifier
        #expect(box["crate"] == crateB.map { .reference($0) })
    }

    @Test func aToManyWithTwoModelsFailsNamingTheModelAndTheStage() throws {
        let storage = try Self.storage(holding: [0, 1])
        let v4 = Schema(versionedSchema: RunnerV4.self)
        let error = try #require(throws: DataStoreError.self) {
            try SchemaMigrationRunner(schema: v4, plan: RunnerToOnePlan.self).migrate(storage)
        }
        #expect(error.code == .invalidValue)
        #expect(error.message.contains("'Box.crate'"))
        #expect(error.message.contains("from '3.0.0' to '4.0.0'"))
        #expect(storage.commits == 0)
    }
}
