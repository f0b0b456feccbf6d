import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreAdapters
import ModelStoreAppendLog
import ModelStoreInMemory
import ModelStoreJSONFile
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// SwiftData's `ModelConfiguration(…, allowsSave: false)`: every built-in store opens read-only,
/// reads what is stored, refuses every change with `readOnly` before touching anything, and
/// writes no file, neither when it opens nor when a change is refused.
@Suite struct ReadOnlyStoreTests {
    /// A store file or folder per durable kind, as `ModelConfiguration(url:)` picks the adapter.
    static let durableFiles = ["trips.json", "trips.log", "trips.store"]

    /// SQLite's own index files, which any reader of a database in WAL mode may create (documented
    /// on `SQLiteStoreConfiguration.allowsSave`); everything else must stay byte for byte.
    private func storeFiles(_ directory: TemporaryDirectory) throws -> [String: Data] {
        try FileTree.snapshot(directory.url).filter { !$0.key.hasSuffix("-shm") && !$0.key.hasSuffix("-wal") }
    }

    private func seed(_ url: URL) throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        let passport = Item()
        passport.title = "Passport"
        context.insert(Trip(name: "Lisbon", start: Date(timeIntervalSince1970: 0), items: [passport]))
        context.insert(Trip(name: "Kyoto", start: Date(timeIntervalSince1970: 86_400)))
        try context.save()
    }

    @Test(arguments: durableFiles)
    func aReadOnlyStoreReadsAndRefusesEveryChangeWithoutWriting(file: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file(file)
        try seed(url)
        let before = try storeFiles(directory)
        do {
            let container = try ModelContainer(
                for: Trip.self, configurations: ModelConfiguration(url: url, allowsSave: false))
            let context = ModelContext(container)
            let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
            #expect(trips.map(\.name) == ["Kyoto", "Lisbon"])
            #expect(trips.last?.items.map(\.title) == ["Passport"])

            trips[0].name = "Osaka"
            context.insert(Trip(name: "Porto", start: .now))
            let error = expectError(.readOnly) { try context.save() }
            #expect(error?.message.contains("allowsSave: false") == true)
            #expect(error?.remedy?.contains("rollback()") == true)
            // Nothing was stored and nothing was lost: the changes are still pending.
            #expect(context.hasChanges)
            #expect(context.insertedModelsArray.count == 1)
            expectError(.readOnly) { try context.delete(model: Trip.self) }
            expectError(.readOnly) {
                try context.update(Trip.self, set: [.set(\.name, to: "Nowhere")])
            }
            expectError(.readOnly) { try context.insert(Trip.self, rows: [[.set(\.name, to: "Rome")]]) }
            expectError(.readOnly) { try container.erase() }
            context.rollback()
            let reread = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
            #expect(reread.map(\.name) == ["Kyoto", "Lisbon"])
        }
        #expect(try storeFiles(directory) == before, "a read-only store changed the files of '\(file)'")
        // The store is intact: a writable open saves into it as before.
        let writable = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(writable)
        context.insert(Trip(name: "Porto", start: .now))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 3)
    }

    @Test(arguments: durableFiles)
    func aMissingStoreIsRefusedAndNothingIsCreated(file: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("folder").appendingPathComponent(file)
        let error = expectError(.notFound) {
            try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url, allowsSave: false))
        }
        #expect(error?.message.contains("does not create one") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test func aReadOnlySQLiteStoreSeesAnotherContainersLaterSaves() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("trips.store")
        try seed(url)
        let writer = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        let reader = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(url: url, allowsSave: false))
        let context = ModelContext(writer)
        context.insert(Trip(name: "Porto", start: .now))
        try context.save()
        #expect(try ModelContext(reader).fetchCount(FetchDescriptor<Trip>()) == 3)
    }

    @Test func aReadOnlyAppendLogIsRefusedWhileAWriterHasItOpen() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("trips.log")
        let writer = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        let error = expectError(.locked) {
            try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url, allowsSave: false))
        }
        #expect(error?.message.contains("read-only open") == true)
        withExtendedLifetime(writer) {}
    }

    @Test func aReadOnlyContainerReadsASharedInMemoryStoreThatAnotherWrites() throws {
        let name = "read-only-\(UUID().uuidString)"
        let writer = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(name, isStoredInMemoryOnly: true))
        let reader = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(name, isStoredInMemoryOnly: true, allowsSave: false))
        let context = ModelContext(writer)
        context.insert(Trip(name: "Lisbon", start: .now))
        try context.save()
        let readerContext = ModelContext(reader)
        #expect(try readerContext.fetch(FetchDescriptor<Trip>()).map(\.name) == ["Lisbon"])
        readerContext.insert(Trip(name: "Kyoto", start: .now))
        expectError(.readOnly) { try readerContext.save() }
        #expect(try ModelContext(writer).fetchCount(FetchDescriptor<Trip>()) == 1)
    }

    @Test func aSaveAcrossStoresIsRefusedBeforeTheWritableStoreIsTouched() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("items.store")
        do {
            var seeded = SQLiteStoreConfiguration(name: "items", url: url)
            seeded.schema = Schema([Item.self])
            let container = try ModelContainer(
                for: Trip.self, configurations: InMemoryStoreConfiguration(name: "trips"), seeded)
            let context = ModelContext(container)
            context.insert(Item())
            try context.save()
        }
        var items = SQLiteStoreConfiguration(name: "items", url: url)
        items.schema = Schema([Item.self])
        items.allowsSave = false
        let container = try ModelContainer(
            for: Trip.self, configurations: InMemoryStoreConfiguration(name: "trips"), items)
        let context = ModelContext(container)
        let item = Item()
        item.title = "Passport"
        context.insert(Trip(name: "Lisbon", start: .now, items: [item]))
        expectError(.readOnly) { try context.save() }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
    }
}

// Two versions of one model, for a read-only open that would need a migration.
enum ReadOnlyV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Note.self] }

    final class Note: PersistentModel {
        @Attribute var text: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum ReadOnlyV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Note.self] }

    final class Note: PersistentModel {
        @Attribute(originalName: "text") var body: String = ""
        @Attribute var pinned: Bool = false
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum ReadOnlyPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ReadOnlyV1.self, ReadOnlyV2.self] }
    static var stages: [MigrationStage] { [.lightweight(fromVersion: ReadOnlyV1.self, toVersion: ReadOnlyV2.self)] }
}

extension ReadOnlyStoreTests {
    @Test(arguments: durableFiles)
    func aStoreThatWouldNeedMigratingIsRefusedAndLeftAsItWas(file: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file(file)
        do {
            let container = try ModelContainer(
                for: Schema(versionedSchema: ReadOnlyV1.self), configurations: [ModelConfiguration(url: url)])
            let context = ModelContext(container)
            let note = ReadOnlyV1.Note()
            note.text = "keep me"
            context.insert(note)
            try context.save()
        }
        let before = try storeFiles(directory)
        let error = expectError(.readOnly) {
            try ModelContainer(
                for: Schema(versionedSchema: ReadOnlyV2.self), migrationPlan: ReadOnlyPlan.self,
                configurations: [ModelConfiguration(url: url, allowsSave: false)])
        }
        #expect(error?.message.contains("read-only") == true)
        #expect(try storeFiles(directory) == before, "a refused read-only open changed '\(file)'")
        // Opened writable once, it migrates; then it opens read-only.
        _ = try ModelContainer(
            for: Schema(versionedSchema: ReadOnlyV2.self), migrationPlan: ReadOnlyPlan.self,
            configurations: [ModelConfiguration(url: url)])
        let container = try ModelContainer(
            for: Schema(versionedSchema: ReadOnlyV2.self), migrationPlan: ReadOnlyPlan.self,
            configurations: [ModelConfiguration(url: url, allowsSave: false)])
        #expect(try ModelContext(container).fetch(FetchDescriptor<ReadOnlyV2.Note>()).map(\.body) == ["keep me"])
    }
}
