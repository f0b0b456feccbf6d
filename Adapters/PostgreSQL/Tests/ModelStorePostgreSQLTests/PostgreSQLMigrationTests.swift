import Foundation
import ModelStore
import ModelStorePostgreSQL
import Testing

// Two versions of a note for the custom-stage tests:
//   1.0.0  title
//   2.0.0  title, words       custom: willMigrate adds a note, didMigrate counts each title's words

enum NotesV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Note.self] }

    final class Note: PersistentModel {
        @Attribute var title: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum NotesV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Note.self] }

    final class Note: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var words: Int = 0
        let persistentBackingData = BackingData()
        init() {}
    }
}

/// Adds a note on the old version and counts words on the new one.
enum CountingPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: NotesV1.self, toVersion: NotesV2.self,
                willMigrate: { context in
                    let note = NotesV1.Note()
                    note.title = "added during the migration"
                    context.insert(note)
                },
                didMigrate: { context in
                    for note in try context.fetch(FetchDescriptor<NotesV2.Note>()) {
                        note.words = note.title.split(separator: " ").count
                    }
                })
        ]
    }
}

/// The same stage, failing after it changed every note.
enum FailingCountPlan: SchemaMigrationPlan {
    struct StageFailed: Error {}
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: NotesV1.self, toVersion: NotesV2.self, willMigrate: nil,
                didMigrate: { context in
                    for note in try context.fetch(FetchDescriptor<NotesV2.Note>()) { note.words = 1 }
                    try context.save()
                    throw StageFailed()
                })
        ]
    }
}

/// Custom migration stages on the server: the namespace after a failed stage is exactly what it
/// was (tables, columns, indexes, rows, meta, history, key sequence), and a migration keeps the
/// history and never hands out a key twice.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLMigrationTests {
    private func open(
        _ namespace: String, _ schema: any VersionedSchema.Type, plan: (any SchemaMigrationPlan.Type)?
    ) throws -> ModelContainer {
        try ModelContainer(
            for: Schema(versionedSchema: schema), migrationPlan: plan,
            configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
    }

    private func seed(_ namespace: String) throws {
        let context = ModelContext(try open(namespace, NotesV1.self, plan: nil))
        for title in ["one", "two words", "and three words"] {
            let note = NotesV1.Note()
            note.title = title
            context.insert(note)
        }
        try context.save()
    }

    /// Everything the namespace holds, as text: the catalog's tables, columns and indexes, every
    /// table's rows, and the key sequence.
    private func dump(_ namespace: String) async throws -> [String] {
        return try await AdminConnection.using { admin in
            var lines = try await admin.run(
                "SELECT table_name || '.' || column_name || ' ' || data_type FROM information_schema.columns "
                    + "WHERE table_schema = '\(namespace)' ORDER BY table_name, ordinal_position")
            lines += try await admin.run(
                "SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = '\(namespace)' ORDER BY indexname"
            )
            let tables = try await admin.run(
                "SELECT tablename FROM pg_tables WHERE schemaname = '\(namespace)' ORDER BY tablename")
            for table in tables {
                lines += try await admin.run(
                    "SELECT '\(table): ' || coalesce((SELECT json_agg(t ORDER BY t::text)::text FROM \"\(namespace)\".\"\(table)\" t), '')"
                )
            }
            lines += try await admin.run("SELECT last_value::text FROM \"\(namespace)\".modelstore_keys")
            return lines
        }
    }

    @Test func aFailedCustomStageLeavesTheNamespaceExactlyAsItWas() async throws {
        let namespace = PostgreSQLServer.freshNamespace("mf")
        try seed(namespace)
        let before = try await dump(namespace)
        #expect(before.contains { $0.hasPrefix("Note: [") }, "the dump does not show the seeded rows")
        do {
            _ = try open(namespace, NotesV2.self, plan: FailingCountPlan.self)
            Issue.record("the store opened although its migration stage threw")
        } catch let error as DataStoreError {
            #expect(error.message.contains("'1.0.0' to '2.0.0'"), "\(error)")
        }
        #expect(try await dump(namespace) == before)
    }

    @Test func aCustomStageMigratesKeepsHistoryAndNeverReusesAKey() throws {
        let namespace = PostgreSQLServer.freshNamespace("mc")
        try seed(namespace)
        let container = try open(namespace, NotesV2.self, plan: CountingPlan.self)
        let context = ModelContext(container)
        let notes = try context.fetch(FetchDescriptor<NotesV2.Note>(sortBy: [SortDescriptor(\.title)]))
        #expect(notes.map(\.title) == ["added during the migration", "and three words", "one", "two words"])
        #expect(notes.map(\.words) == [4, 3, 1, 2])
        // The history of version 1 is still there, under the same keys.
        let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(history.map(\.changes.count) == [3])
        #expect(
            Set(history.flatMap(\.changes).map(\.changedPersistentIdentifier)).isSubset(
                of: Set(notes.map(\.persistentModelID))))
        // A note saved now gets a key no note had, including the one the stage inserted.
        let fresh = NotesV2.Note()
        fresh.title = "after"
        context.insert(fresh)
        try context.save()
        let keys = notes.compactMap { $0.persistentModelID.primaryKey.intValue }
        let freshKey = try #require(fresh.persistentModelID.primaryKey.intValue)
        #expect(freshKey > keys.max() ?? 0)
        // Opening again runs no stage: the words stay as the stage left them.
        let again = try open(namespace, NotesV2.self, plan: FailingCountPlan.self)
        #expect(try ModelContext(again).fetch(FetchDescriptor<NotesV2.Note>()).count == 5)
    }
}
