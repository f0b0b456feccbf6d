import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// The store's conflict check for a context under `.error` (`checksExpectedValues`): a save
/// compares the values the context last read with the rows it locks, so it conflicts exactly when
/// those differ, whatever happened to the rows' versions in between.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLExpectedValuesTests {
    /// A container in a fresh namespace with one counter, `c`, at `value`.
    private static func counter(at value: Int) throws -> ModelContainer {
        let container = try ModelContainer(
            for: Counter.schema,
            configurations: [try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace("exp"))])
        let context = ModelContext(container)
        let counter = Counter(name: "c")
        counter.value = value
        context.insert(counter)
        try context.save()
        return container
    }

    private static func value(in container: ModelContainer) throws -> Int? {
        try ModelContext(container).fetch(FetchDescriptor<Counter>()).first?.value
    }

    @Test func expectedValuesThatDifferFromTheRowAreAConflictEvenAtTheReadVersion() throws {
        let container = try Self.counter(at: 1)
        let store = try #require(container.stores.first as? PostgreSQLStore)
        #expect(store.checksExpectedValues)
        let state = EditingState()
        store.initializeState(for: state)
        // The store remembers the version this read returns, so the UPDATE's version check passes.
        let read = try #require(
            try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor<Counter>(), editingState: state))
                .fetchedSnapshots.first)
        let slot = try #require(read.entity.slot(of: "value"))
        var changed = read
        changed.values[slot] = .int(5)
        var expected = read.values
        expected[slot] = .int(0)
        var request = DataStoreSaveChangesRequest(editingState: state, inserted: [], updated: [changed], deleted: [])
        request.expectedValues = [read.persistentIdentifier: expected]
        let error = try #require(throws: DataStoreError.self) { _ = try store.save(request) }
        #expect(error.code == .conflict)
        #expect(try Self.value(in: container) == 1)
        // The same save with the values read goes through.
        request.expectedValues = [read.persistentIdentifier: read.values]
        store.initializeState(for: state)
        _ = try store.fetch(DataStoreFetchRequest(descriptor: FetchDescriptor<Counter>(), editingState: state))
        _ = try store.save(request)
        #expect(try Self.value(in: container) == 5)
    }

    @Test func aRowWrittenSinceTheReadWithTheSameValuesIsNoConflict() throws {
        let container = try Self.counter(at: 1)
        let context = ModelContext(container)
        let counter = try #require(try context.fetch(FetchDescriptor<Counter>()).first)
        // Another context changes the row and changes it back: a new version, the values read.
        let other = ModelContext(container)
        let same = try #require(try other.fetch(FetchDescriptor<Counter>()).first)
        same.value = 7
        try other.save()
        same.value = 1
        try other.save()
        counter.name = "renamed"
        try context.save()
        let stored = try #require(try ModelContext(container).fetch(FetchDescriptor<Counter>()).first)
        #expect((stored.name, stored.value) == ("renamed", 1))
    }

    @Test func aRowChangedSinceTheReadIsAConflictAndKeepsTheOtherChange() throws {
        let container = try Self.counter(at: 1)
        let context = ModelContext(container)
        let counter = try #require(try context.fetch(FetchDescriptor<Counter>()).first)
        let other = ModelContext(container)
        try #require(try other.fetch(FetchDescriptor<Counter>()).first).value = 2
        try other.save()
        counter.value = 10
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .conflict)
        #expect(try Self.value(in: container) == 2)
    }
}
