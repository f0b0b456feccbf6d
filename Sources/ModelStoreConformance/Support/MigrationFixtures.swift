import Foundation
import ModelStore

/// Two versions of a 'Note' entity and a plan between them with a custom stage, for an adapter's
/// own migration tests: crash points in the migration's commit, and failures that must leave the
/// files byte for byte as they were.
///
/// Version 1.0.0 stores `title` and `body`; version 2.0.0 renames `title` to `heading`
/// (`originalName`), adds `words`, and the custom stage's `didMigrate` fills `words` from `body`.
public enum MigrationFixtures {
    /// The old version.
    public enum V1: VersionedSchema {
        /// 1.0.0.
        public static let versionIdentifier = Schema.Version(1, 0, 0)
        /// The note.
        public static var models: [any PersistentModel.Type] { [Note.self] }

        /// A version-1 note.
        public final class Note: PersistentModel {
            /// The title, renamed `heading` in version 2.
            @Attribute public var title: String = ""
            /// The text.
            @Attribute public var body: String = ""
            /// The model's storage.
            public let persistentBackingData = BackingData()
            /// An empty note.
            public init() {}
        }
    }

    /// The new version.
    public enum V2: VersionedSchema {
        /// 2.0.0.
        public static let versionIdentifier = Schema.Version(2, 0, 0)
        /// The note.
        public static var models: [any PersistentModel.Type] { [Note.self] }

        /// A version-2 note.
        public final class Note: PersistentModel {
            /// The heading, `title` in version 1.
            @Attribute(originalName: "title") public var heading: String = ""
            /// The text.
            @Attribute public var body: String = ""
            /// How many words `body` has, filled by the migration's didMigrate.
            @Attribute public var words: Int = 0
            /// The model's storage.
            public let persistentBackingData = BackingData()
            /// An empty note.
            public init() {}
        }
    }

    /// From 1.0.0 to 2.0.0 with a custom stage that counts words.
    public enum Plan: SchemaMigrationPlan {
        /// Both versions.
        public static var schemas: [any VersionedSchema.Type] { [V1.self, V2.self] }
        /// One custom stage.
        public static var stages: [MigrationStage] {
            [
                .custom(
                    fromVersion: V1.self, toVersion: V2.self, willMigrate: nil,
                    didMigrate: { context in
                        for note in try context.fetch(FetchDescriptor<V2.Note>()) {
                            note.words = note.body.split(separator: " ").count
                        }
                        try context.save()
                    })
            ]
        }
    }

    /// The same versions with a stage whose `didMigrate` throws after changing every note.
    public enum FailingPlan: SchemaMigrationPlan {
        /// Both versions.
        public static var schemas: [any VersionedSchema.Type] { [V1.self, V2.self] }
        /// One custom stage that fails.
        public static var stages: [MigrationStage] {
            [
                .custom(
                    fromVersion: V1.self, toVersion: V2.self, willMigrate: nil,
                    didMigrate: { context in
                        for note in try context.fetch(FetchDescriptor<V2.Note>()) { note.words = -1 }
                        try context.save()
                        throw DataStoreError(.invalidValue, "the fixture's failing stage fails on purpose")
                    })
            ]
        }
    }

    /// The seeded notes as (title, body).
    public static let seededNotes = [("one", "a b c"), ("two", "d e"), ("three", "")]

    /// Saves ``seededNotes`` as version-1 notes in the store of `configuration`.
    public static func seed(_ configuration: any DataStoreConfiguration) throws {
        let container = try ModelContainer(for: Schema(versionedSchema: V1.self), configurations: [configuration])
        let context = ModelContext(container)
        for (title, body) in seededNotes {
            let note = V1.Note()
            note.title = title
            note.body = body
            context.insert(note)
        }
        try context.save()
    }

    /// What a store holds after a migration was interrupted: exactly the old notes, or exactly the migrated ones.
    public enum Outcome: Sendable, Equatable {
        /// The store is at 1.0.0 with the seeded notes.
        case old
        /// The store is at 2.0.0 with the seeded notes migrated (headings, word counts).
        case migrated
    }

    /// Opens the store at the version it records and checks that it holds exactly the old or
    /// exactly the migrated notes; throws a description of anything else (a mix).
    public static func outcome(
        _ configuration: any DataStoreConfiguration, storedVersion: Schema.Version
    ) throws -> Outcome {
        let sorted = seededNotes.sorted { $0.0 < $1.0 }
        switch storedVersion {
        case V1.versionIdentifier:
            let container = try ModelContainer(for: Schema(versionedSchema: V1.self), configurations: [configuration])
            let notes = try ModelContext(container).fetch(FetchDescriptor<V1.Note>(sortBy: [SortDescriptor(\.title)]))
            guard notes.map(\.title) == sorted.map(\.0), notes.map(\.body) == sorted.map(\.1) else {
                throw MixedStore(description: "at 1.0.0 the notes are not the seeded ones: \(notes.map(\.title))")
            }
            return .old
        case V2.versionIdentifier:
            let container = try ModelContainer(for: Schema(versionedSchema: V2.self), configurations: [configuration])
            let notes = try ModelContext(container).fetch(FetchDescriptor<V2.Note>(sortBy: [SortDescriptor(\.heading)]))
            let words = sorted.map { $0.1.split(separator: " ").count }
            guard notes.map(\.heading) == sorted.map(\.0), notes.map(\.words) == words else {
                throw MixedStore(
                    description: "at 2.0.0 the notes are not the migrated ones: \(notes.map(\.heading)), "
                        + "\(notes.map(\.words))")
            }
            return .migrated
        default:
            throw MixedStore(description: "the store records version \(storedVersion), neither 1.0.0 nor 2.0.0")
        }
    }

    /// Every regular file under `directory` and its bytes, by path relative to `directory`, leaving
    /// out lock files (opening a store records its holder there) and SQLite's shared-memory index
    /// (`-shm`, rebuilt on every open): what a failed migration or a dry run must leave unchanged.
    public static func files(in directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let root = directory.standardizedFileURL.path
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            let name = url.lastPathComponent
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                !name.contains("lock"), !name.hasSuffix("-shm")
            else { continue }
            files[String(url.standardizedFileURL.path.dropFirst(root.count))] = try Data(contentsOf: url)
        }
        return files
    }

    /// A migration check that failed: what was expected and what was found.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// Where a verifier finds the store: its configuration, the folder of its files, and how to
    /// read the schema version it records without opening it.
    public struct Subject {
        /// The store's configuration.
        public var configuration: any DataStoreConfiguration
        /// The folder holding every file of the store.
        public var directory: URL
        /// The recorded schema version, read without opening the store.
        public var storedVersion: () throws -> Schema.Version

        /// A subject.
        public init(
            configuration: any DataStoreConfiguration, directory: URL,
            storedVersion: @escaping () throws -> Schema.Version
        ) {
            self.configuration = configuration
            self.directory = directory
            self.storedVersion = storedVersion
        }

        /// Opens the store at version 2.0.0 with `plan`.
        public func open(plan: any SchemaMigrationPlan.Type) throws -> ModelContainer {
            try ModelContainer(
                for: Schema(versionedSchema: V2.self), migrationPlan: plan, configurations: [configuration])
        }

        /// What the store holds (see ``MigrationFixtures/outcome(_:storedVersion:)``).
        public func outcome() throws -> Outcome {
            try MigrationFixtures.outcome(configuration, storedVersion: storedVersion())
        }
    }

    /// Seeds the subject's store, opens it with ``FailingPlan``, and checks that the open fails with
    /// a ``DataStoreError`` naming the stage and that every file is byte for byte as before.
    public static func verifyFailedStageChangesNothing(_ subject: Subject) throws {
        try seed(subject.configuration)
        let before = try files(in: subject.directory)
        do {
            _ = try subject.open(plan: FailingPlan.self)
            throw Failure(description: "the store opened although its migration stage threw")
        } catch let error as DataStoreError {
            guard error.code == .invalidValue, error.message.contains("from '1.0.0' to '2.0.0'") else {
                throw Failure(description: "the error keeps neither the stage's code nor its name: \(error)")
            }
        }
        guard try files(in: subject.directory) == before else {
            throw Failure(description: "a failed migration changed the store's files")
        }
        guard try subject.outcome() == .old else { throw Failure(description: "a failed migration changed the notes") }
    }

    /// Seeds the subject's store, arms a hook that stops the migration's commit at one step (as a
    /// crash or a failure would), opens with ``Plan`` expecting that to fail, and checks that the
    /// store then holds `expected` (the old notes or the migrated ones, never a mix) and that opening
    /// again with the plan finishes the migration.
    public static func verifyInterruptedMigration(
        _ subject: Subject, expecting expected: Outcome, arm: () -> Void, disarm: () -> Void
    ) throws {
        try seed(subject.configuration)
        arm()
        do {
            defer { disarm() }
            _ = try subject.open(plan: Plan.self)
            throw Failure(description: "the migration was not interrupted: the hook never ran")
        } catch is Failure {
            throw Failure(description: "the migration was not interrupted: the hook never ran")
        } catch let error as DataStoreError {
            throw Failure(description: "the migration failed on its own, not at the hook: \(error)")
        } catch {
            // The hook's error: the interruption.
        }
        let found = try subject.outcome()
        guard found == expected else {
            throw Failure(description: "after the interruption the store is \(found), not \(expected)")
        }
        _ = try subject.open(plan: Plan.self)
        guard try subject.outcome() == .migrated else {
            throw Failure(description: "opening again with the plan did not finish the migration")
        }
    }

    /// Seeds the subject's store, previews the migration to 2.0.0, and checks the report and that
    /// no file changed.
    public static func verifyDryRun(_ subject: Subject) throws {
        try seed(subject.configuration)
        let before = try files(in: subject.directory)
        let reports = try ModelContainer.previewMigration(
            for: Schema(versionedSchema: V2.self), migrationPlan: Plan.self, configurations: [subject.configuration])
        guard let report = reports.first, let note = report.entity(named: "Note") else {
            throw Failure(description: "the dry run reported nothing for 'Note': \(reports)")
        }
        let expected = EntityMigrationReport(
            entityName: "Note", rowsTouched: seededNotes.count, attributesAdded: ["words"],
            attributesRenamed: ["title -> heading"])
        guard report.isDryRun, report.stages == ["custom 1.0.0 -> 2.0.0"], note == expected else {
            throw Failure(description: "the dry run reported '\(report)', not '\(expected)'")
        }
        guard try files(in: subject.directory) == before else { throw Failure(description: "a dry run changed files") }
        guard try subject.outcome() == .old else { throw Failure(description: "a dry run changed the notes") }
    }

    /// A store that holds neither the old nor the migrated notes.
    public struct MixedStore: Error, CustomStringConvertible {
        /// What was found.
        public var description: String
    }
}
