import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// A save across stores on `SQLiteStore`: staged in a transaction on a second connection, and
/// undone row by row when another store's part fails after this one committed.
struct SQLiteTwoPhaseSaveTests {
    /// Every stored snapshot, in identifier order: the whole state of the store.
    private static func everything(_ store: SQLiteStore) throws -> [DefaultSnapshot] {
        try store.run(StoreQuery(entityName: "Item")).sorted { $0.persistentIdentifier < $1.persistentIdentifier }
    }

    /// A store holding a parent with two children (to-one and to-many references both ways), and
    /// a save that deletes the parent (clearing the children's references), swaps two unique
    /// codes, and inserts a model that takes the deleted parent's unique code.
    private static func storeAndSave(
        _ directory: TemporaryDirectory
    ) throws -> (SQLiteStore, DataStoreSaveChangesRequest<DefaultSnapshot>) {
        let store = try ItemSchema.store(directory.file("store.sqlite"))
        let entity = try #require(store.schema.entity(named: "Item"))
        let parent = try SQLiteStoreTests.item(entity, ["code": .string("parent"), "name": .string("p")])
        var first = try SQLiteStoreTests.item(entity, ["code": .string("a"), "n": .int(1)])
        var second = try SQLiteStoreTests.item(entity, ["code": .string("b"), "n": .int(2)])
        first["parent"] = .reference(parent.persistentIdentifier)
        second["parent"] = .reference(parent.persistentIdentifier)
        var withChildren = parent
        withChildren["children"] = .references([first.persistentIdentifier, second.persistentIdentifier])
        let ids = try store.insert([withChildren, first, second])
        let stored = try everything(store)
        var swappedFirst = try #require(stored.first { $0.persistentIdentifier == ids[1] })
        var swappedSecond = try #require(stored.first { $0.persistentIdentifier == ids[2] })
        swappedFirst["code"] = .string("b")
        swappedSecond["code"] = .string("a")
        let deleted = try #require(stored.first { $0.persistentIdentifier == ids[0] })
        let newcomer = try SQLiteStoreTests.item(entity, ["code": .string("parent"), "name": .string("new")])
        return (
            store,
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: [newcomer], updated: [swappedFirst, swappedSecond],
                deleted: [deleted])
        )
    }

    @Test func abortAfterCommitPutsBackEveryRowReferenceAndUniqueValue() throws {
        let directory = try TemporaryDirectory()
        let (store, request) = try Self.storeAndSave(directory)
        let before = try Self.everything(store)
        let part = try store.prepareSave(request)
        #expect(try Self.everything(store) == before, "a prepared save must not be visible")
        try part.commit()
        #expect(try Self.everything(store) != before, "the commit stored nothing")
        part.abort()
        #expect(try Self.everything(store) == before)
        // The store is released, and reopening reads the restored state from the file.
        _ = try store.insert([
            try SQLiteStoreTests.item(try #require(store.schema.entity(named: "Item")), ["code": .string("later")])
        ])
        let reopened = try ItemSchema.store(directory.file("store.sqlite"))
        #expect(try Self.everything(reopened).count == before.count + 1)
    }

    @Test func commitThenFinishStoresWhatAPlainSaveStores() throws {
        let prepared = try TemporaryDirectory()
        let plain = try TemporaryDirectory()
        let (store, request) = try Self.storeAndSave(prepared)
        let (reference, referenceRequest) = try Self.storeAndSave(plain)
        let part = try store.prepareSave(request)
        try part.commit()
        part.finish()
        let result = try reference.save(referenceRequest)
        #expect(part.result.remappedIdentifiers.count == result.remappedIdentifiers.count)
        #expect(try Self.everything(store).map(\.values) == Self.everything(reference).map(\.values))
    }

    @Test func aPrepareThatFailsReleasesTheStoreAndChangesNothing() throws {
        let directory = try TemporaryDirectory()
        let (store, request) = try Self.storeAndSave(directory)
        let before = try Self.everything(store)
        var clash = request
        clash.updated = [request.updated[0]]  // code "b" while the other model keeps "b"
        expectError(.uniqueConstraintViolation) { try store.prepareSave(clash) }
        #expect(try Self.everything(store) == before)
        let part = try store.prepareSave(request)
        part.abort()
        #expect(try Self.everything(store) == before)
    }

    @Test func anInMemoryDatabaseRefusesToTakePart() throws {
        let store = try ItemSchema.store(nil)
        let entity = try #require(store.schema.entity(named: "Item"))
        let request = DataStoreSaveChangesRequest(
            editingState: EditingState(), inserted: [try SQLiteStoreTests.item(entity, ["code": .string("x")])],
            updated: [], deleted: [])
        let error = expectError(.unsupportedFeature) { try store.prepareSave(request) }
        #expect(error?.remedy?.isEmpty == false)
    }
}
