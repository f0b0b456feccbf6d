import Foundation
import ModelStore
import ModelStoreAdapterKit

/// Two-phase saves and the asynchronous twins, with the mutants of `DataStoreTwoPhaseSaving` and
/// `DataStoreAsynchronous`.
extension MutantStore: DataStoreTwoPhaseSaving, DataStoreAsynchronous {
    func prepareSave(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> any PreparedStoreSave<DefaultSnapshot> {
        let holdsLock = !has(.preparedSaveLetsOthersIn)
        if holdsLock { writeLock.lock() }
        do {
            let before = try locked(writing: false) { ($0.table, $0.history) }
            var next = before.0
            let result = try next.save(request, storeIdentifier: identifier)
            let part = MutantPreparedSave(
                store: self, before: before, next: next, result: result, author: request.editingState.author,
                holdsLock: holdsLock)
            if has(.preparedSaveVisible) { try part.commit() }
            return part
        } catch {
            if holdsLock { writeLock.unlock() }
            throw error
        }
    }

    // MARK: Asynchronous twins

    /// Suspends, as a store waiting for its server would; the blocking mutant holds its thread instead.
    private func waitForTheServer() async {
        if has(.asyncBlocksItsThread) {
            usleep(2000)  // a synchronous wait for the reply, holding the thread
        } else {
            await Task.yield()
        }
    }

    func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) async throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        await waitForTheServer()
        var request = request
        if has(.asyncIgnoresWindow) {
            request.query?.offset = 0
            request.query?.limit = nil
            request.descriptor.fetchOffset = nil
            request.descriptor.fetchLimit = nil
        }
        return try synchronousFetch(request)
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) async throws -> Int {
        await waitForTheServer()
        return try synchronousCount(request)
    }

    func fetchIdentifiers<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) async throws -> [PersistentIdentifier] {
        await waitForTheServer()
        return try synchronousIdentifiers(request)
    }

    func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) async throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        await waitForTheServer()
        return try synchronousSave(request)
    }

    // The synchronous requirements by other names, so the async twins do not call themselves.
    private func synchronousFetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> DataStoreFetchResult<T, DefaultSnapshot> { try fetch(request) }
    private func synchronousCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try fetchCount(request)
    }
    private func synchronousIdentifiers<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> [PersistentIdentifier] { try fetchIdentifiers(request) }
    private func synchronousSave(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> { try save(request) }
}

/// A prepared part of a ``MutantStore`` save: the table it will hold, and what it held before.
final class MutantPreparedSave: PreparedStoreSave {
    typealias Snapshot = DefaultSnapshot

    let store: MutantStore
    let before: (SnapshotTable, StoreHistory)
    let next: SnapshotTable
    let result: DataStoreSaveChangesResult<DefaultSnapshot>
    let author: String?
    private var holdsLock: Bool
    private var committed = false

    init(
        store: MutantStore, before: (SnapshotTable, StoreHistory), next: SnapshotTable,
        result: DataStoreSaveChangesResult<DefaultSnapshot>, author: String?, holdsLock: Bool
    ) {
        self.store = store
        self.before = before
        self.next = next
        self.result = result
        self.author = author
        self.holdsLock = holdsLock
    }

    func commit() throws {
        guard !committed else { return }
        committed = true
        if store.has(.commitAppliesNothing) { return }
        let change = MutantStore.Change.save(inserts: true, updates: true, deletes: true, equalUpdatesOnly: false)
        _ = try store.locked(writing: true) { state in
            try store.commit(
                next, change, from: state.table, author: author, remapped: result.remappedIdentifiers, &state)
        }
    }

    func abort() {
        if committed && !store.has(.abortKeepsCommittedPart) {
            let change = MutantStore.Change.save(inserts: true, updates: true, deletes: true, equalUpdatesOnly: false)
            try? store.locked(writing: true) { state in
                try store.persist(before.0, before.1, change, &state)
                state.table = before.0
                state.history = before.1
            }
        }
        committed = false
        release()
    }

    func finish() { release() }

    private func release() {
        if holdsLock { store.writeLock.unlock() }
        holdsLock = false
    }
}
