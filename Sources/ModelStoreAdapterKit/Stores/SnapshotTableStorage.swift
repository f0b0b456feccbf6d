import Foundation
import ModelStore

/// A ``SnapshotTable`` and its ``StoreHistory`` kept in memory behind a store's locks: what a
/// ``TableWritingStore`` that persists nothing needs, with a save that spans stores.
///
/// Reads take the table lock. Writes take a save lock first, so writes go one at a time, and a
/// two-phase save (``prepareSave(_:storeIdentifier:)``) holds the save lock from its prepare to its
/// finish while reads go on seeing the table as it was. Writes run on the live table: a change
/// throws only before it edits (see ``TableWritingStore``).
///
/// Several stores may share one storage, as stores of one name share their models.
public final class SnapshotTableStorage: @unchecked Sendable {
    // Safety: `table` and `history` are read and written only while `lock` is held; writes also hold `saveLock`.
    @usableFromInline let lock = NSLock()
    @usableFromInline let saveLock = NSLock()
    @usableFromInline var table: SnapshotTable
    @usableFromInline var history: StoreHistory

    /// A storage holding `table` and `history`.
    public init(_ table: SnapshotTable, history: StoreHistory) {
        self.table = table
        self.history = history
    }

    /// Runs `body` on the table under the read lock.
    @inlinable
    public func read<Result>(_ body: (SnapshotTable) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(table)
    }

    /// Runs `body` on the history under the read lock.
    @inlinable
    public func readHistory<Result>(_ body: (StoreHistory) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(history)
    }

    /// Runs `change` on the live table and history, one write at a time (the persistence hook of
    /// a store that keeps nothing else), and returns its result.
    @inlinable
    public func write<Result>(
        _ change: (inout SnapshotTable, inout StoreHistory) throws -> (result: Result, changed: Bool)
    ) rethrows -> Result {
        saveLock.lock()
        defer { saveLock.unlock() }
        lock.lock()
        defer { lock.unlock() }
        return try change(&table, &history).result
    }

    /// Prepares a save that spans several stores: validates it and mints identifiers, and keeps
    /// other writes out until the part is finished or aborted (`PreparedStoreSave`).
    ///
    /// An abort after the commit puts back the table and history exactly as they were.
    public func prepareSave(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, storeIdentifier: String
    ) throws -> any PreparedStoreSave<DefaultSnapshot> {
        try PreparedTableSave(storage: self, request: request, storeIdentifier: storeIdentifier)
    }
}

/// A storage's part of a save across stores. It keeps the table as it was before the commit, so
/// that an abort after a commit restores it exactly (a copy made only by that commit).
private final class PreparedTableSave: PreparedStoreSave {
    typealias Snapshot = DefaultSnapshot
    let result: DataStoreSaveChangesResult<DefaultSnapshot>
    private let storage: SnapshotTableStorage
    private let prepared: SnapshotTable.PreparedSave
    private let record: StoreHistoryRecord?
    private var before: (table: SnapshotTable, history: StoreHistory)?
    private var isOpen = true

    init(
        storage: SnapshotTableStorage, request: DataStoreSaveChangesRequest<DefaultSnapshot>, storeIdentifier: String
    ) throws {
        storage.saveLock.lock()
        do {
            prepared = try storage.read { try $0.prepare(request, storeIdentifier: storeIdentifier) }
        } catch {
            storage.saveLock.unlock()
            throw error
        }
        // The save lock keeps every other writer out until finish or abort, so the number stays free.
        let save = prepared
        let changes = storage.read { $0.historyChanges(of: save) }
        record = storage.readHistory { $0.nextRecord(changes, author: request.editingState.author) }
        self.storage = storage
        result = prepared.result(
            for: storeIdentifier,
            historyToken: record.map {
                DefaultHistoryToken(storeIdentifier: storeIdentifier, transactionNumber: $0.number)
            })
    }

    func commit() throws {
        precondition(isOpen && before == nil, "commit() is called once, between prepareSave and finish")
        storage.lock.lock()
        defer { storage.lock.unlock() }
        before = (storage.table, storage.history)
        storage.table.apply(prepared)
        if let record { storage.history.append(record) }
    }

    func abort() {
        guard isOpen else { return }
        if let before {
            storage.lock.lock()
            storage.table = before.table
            storage.history = before.history
            storage.lock.unlock()
        }
        close()
    }

    func finish() {
        guard isOpen else { return }
        close()
    }

    private func close() {
        isOpen = false
        before = nil
        storage.saveLock.unlock()
    }

    deinit {
        // A part dropped without finish or abort must not keep the store locked.
        if isOpen { abort() }
    }
}
