import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreAdapters
import ModelStoreAppendLog
import ModelStoreConformance
import ModelStoreInMemory
import ModelStoreJSONFile
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// The context checks for conflicts before it writes (its merge policy), and every built-in store
/// checks again under the lock its write holds (`DataStoreSaveChangesRequest.expectedValues`), so a
/// change another context makes between the two is refused, never overwritten.
@Suite struct ConflictCheckedOnWriteTests {
    final class Counter: PersistentModel {
        @Attribute(.unique) var name: String = ""
        @Attribute var value: Int = 0
        @Attribute var note: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }

    /// One configuration per built-in store, in a temporary folder.
    static func configuration(_ kind: String, in directory: TemporaryDirectory) -> any DataStoreConfiguration {
        switch kind {
        case "json": JSONFileStoreConfiguration(url: directory.file("counters.json"))
        case "log": AppendLogStoreConfiguration(directory: directory.file("counters-log"))
        case "sqlite": SQLiteStoreConfiguration(url: directory.file("counters.sqlite"))
        default: InMemoryStoreConfiguration()
        }
    }

    static let kinds = ["memory", "json", "log", "sqlite"]

    @Test(arguments: kinds)
    func aStoreRefusesAnUpdateWhoseExpectedValuesAreStale(kind: String) throws {
        let directory = try TemporaryDirectory()
        let container = try ModelContainer(for: Counter.self, configurations: Self.configuration(kind, in: directory))
        let context = ModelContext(container)
        let counter = Counter()
        counter.name = "hits"
        counter.value = 1
        context.insert(counter)
        try context.save()
        let store = try #require(container.stores.first)
        let id = counter.persistentModelID
        let entity = try #require(container.schema.entity(named: "Counter"))
        func snapshot(value: Int) throws -> DefaultSnapshot {
            try DefaultSnapshot(
                persistentIdentifier: id, entity: entity,
                namedValues: ["name": .string("hits"), "value": .int(Int64(value)), "note": .string("")])
        }
        func save(_ value: Int, expecting expected: Int) throws {
            var request = DataStoreSaveChangesRequest<DefaultSnapshot>(
                editingState: EditingState(), inserted: [], updated: [try snapshot(value: value)], deleted: [])
            request.expectedValues[id] = try snapshot(value: expected).values
            _ = try saveThroughAnyStore(store, request)
        }
        // Expected 5, stored 1: another writer changed it; nothing is written.
        let error = expectError(.conflict) { try save(10, expecting: 5) }
        #expect(error?.propertyNames == ["value"])
        #expect(try ModelContext(container).fetch(FetchDescriptor<Counter>()).map(\.value) == [1])
        // Expected what is stored: the write goes through.
        try save(2, expecting: 1)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Counter>()).map(\.value) == [2])
    }

    @Test(arguments: kinds)
    func aChangeMadeBetweenTheContextsCheckAndItsWriteIsRefused(kind: String) throws {
        let directory = try TemporaryDirectory()
        let race = SaveHook()
        func racing<C: DataStoreConfiguration>(_ inner: C) -> any DataStoreConfiguration {
            SaveHookConfiguration(inner: inner, hook: race)
        }
        let configuration = racing(Self.configuration(kind, in: directory))
        let container = try ModelContainer(for: Counter.self, configurations: configuration)
        let seed = ModelContext(container)
        let counter = Counter()
        counter.name = "hits"
        seed.insert(counter)
        try seed.save()

        let slow = ModelContext(container)
        let mine = try #require(try slow.fetch(FetchDescriptor<Counter>()).first)
        mine.value += 1
        // Another context saves its own increment after the slow context checked for conflicts
        // (and found none) but before its write reaches the store.
        race.beforeNextSave {
            let other = ModelContext(container)
            let theirs = try other.fetch(FetchDescriptor<Counter>()).first!
            theirs.value += 1
            try other.save()
        }
        expectError(.conflict) { try slow.save() }
        #expect(race.runs == 1)
        // The other increment is kept; retrying from a fresh read gives both.
        #expect(try ModelContext(container).fetch(FetchDescriptor<Counter>()).map(\.value) == [1])
        slow.rollback()
        let again = try #require(try slow.fetch(FetchDescriptor<Counter>()).first)
        again.value += 1
        try slow.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Counter>()).map(\.value) == [2])
    }
}

/// Saves a request through a store of any type.
private func saveThroughAnyStore(
    _ store: any DataStore, _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
    func save<S: DataStore>(_ store: S) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var converted = DataStoreSaveChangesRequest<S.Snapshot>(
            editingState: request.editingState, inserted: request.inserted.map(S.Snapshot.init),
            updated: request.updated.map(S.Snapshot.init), deleted: request.deleted.map(S.Snapshot.init))
        converted.expectedValues = request.expectedValues
        let result = try store.save(converted)
        return DataStoreSaveChangesResult(for: result.storeIdentifier)
    }
    return try save(store)
}
