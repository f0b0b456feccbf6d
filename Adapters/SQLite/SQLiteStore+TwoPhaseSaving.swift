import Foundation
import ModelStore

extension SQLiteStore: DataStoreTwoPhaseSaving {
    /// Stages a save that spans several stores: takes the store's connection and SQLite's write
    /// lock, and writes the save inside a transaction that is not yet committed.
    ///
    /// Everything that can fail because of the request fails here (unknown models, unique
    /// indexes), and the transaction is rolled back. The save is written through a second
    /// connection to the file, so fetches, from this store or other processes, read the file as it
    /// was until ``PreparedStoreSave/commit()``; other saves wait for SQLite's write lock until the
    /// save finishes. An in-memory database has no second connection and throws
    /// ``DataStoreError/Code/unsupportedFeature``.
    public func prepareSave(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> any PreparedStoreSave<DefaultSnapshot> {
        try SQLitePreparedSave(store: self, writer: try crossStoreConnection(), request: request)
    }

    /// The second connection, opened on first use.
    private func crossStoreConnection() throws -> ConnectionLock {
        guard configuration.url != nil else {
            throw DataStoreError(
                .unsupportedFeature,
                "the in-memory SQLite store '\(configuration.name)' cannot take part in a save across stores",
                remedy: "Save its changes on their own (one save() per store), or keep the store in a file")
        }
        return try crossStoreWriter.withLock { writer in
            if let writer { return writer }
            let connection = try SQLiteConnection(
                path: configuration.path, readOnly: false, create: false, busyTimeout: configuration.busyTimeout,
                cipher: pageCipher)
            try connection.execute("PRAGMA synchronous = \(configuration.durability.pragma)", during: "configuring")
            let opened = ConnectionLock(connection)
            writer = opened
            return opened
        }
    }
}

/// A save staged in an open SQLite transaction, holding the store until it finishes or aborts.
///
/// `commit()` commits the transaction, and then takes SQLite's write lock again at once, so that
/// until `finish()` no other save reaches the file; `abort()` after a commit writes the rows back
/// as the undo log kept them. Between the commit and the new lock another process could write; a
/// row it changed in that instant is overwritten by the undo, the one case where an aborted save
/// across stores is not exact.
final class SQLitePreparedSave: PreparedStoreSave {
    typealias Snapshot = DefaultSnapshot

    private enum State { case prepared, committed, ended }

    let result: DataStoreSaveChangesResult<DefaultSnapshot>
    private let store: SQLiteStore
    private let writerLock: ConnectionLock
    private let connection: SQLiteConnection
    private let undoLog = RowUndoLog()
    /// The writer of the save, whose external files are removed when the save ends.
    private let writer: RowWriter
    private var state = State.prepared
    /// Whether a write transaction is open on the connection.
    private var inTransaction = false

    init(store: SQLiteStore, writer writerLock: ConnectionLock, request: DataStoreSaveChangesRequest<DefaultSnapshot>)
        throws
    {
        self.store = store
        self.writerLock = writerLock
        connection = writerLock.acquire()
        var writer = store.writer(on: connection)
        writer.undoLog = undoLog
        do {
            try connection.begin()
            inTransaction = true
            try store.checkFileIsStillTheOneOpened()
            result = try store.apply(request, with: &writer)
            try writer.storeNextKey()
            try writer.flushExternalFiles()
        } catch {
            connection.rollBack()
            writer.discardWrittenFiles()
            writerLock.release()
            throw error
        }
        self.writer = writer
    }

    func commit() throws {
        guard state == .prepared else { return }
        do {
            try connection.commit()
        } catch {
            connection.rollBack()
            writer.discardWrittenFiles()
            inTransaction = false
            throw error
        }
        state = .committed
        // Keep other writers out until the save finishes, so an abort undoes exactly this save.
        inTransaction = (try? connection.begin()) != nil
    }

    func abort() {
        switch state {
        case .prepared:
            if inTransaction { connection.rollBack() }
            writer.discardWrittenFiles()
        case .committed:
            // The save's files of replaced values are unnamed whether or not the undo commits: it
            // writes the values back to new files.
            let undoWriter = store.writer(on: connection)
            do {
                if !inTransaction { try connection.begin() }
                inTransaction = true
                try undoLog.undo(with: undoWriter)
                if let token = result.historyToken {
                    try HistoryTable.remove(token.transactionNumber, on: connection)
                }
                try undoWriter.flushExternalFiles()
                try connection.commit()
                inTransaction = false
                store.removeReleasedFiles(of: undoWriter)
            } catch {
                connection.rollBack()
                undoWriter.discardWrittenFiles()
                FileHandle.standardError.write(
                    Data(
                        ("ModelStore: undoing a save across stores in the SQLite store '\(store.configuration.name)' "
                            + "failed: \(error)\n").utf8))
            }
        case .ended:
            return
        }
        end()
    }

    func finish() {
        guard state != .ended else { return }
        end()
    }

    private func end() {
        // Nothing is written in the transaction taken after the commit: ending it releases the lock.
        if state == .committed, inTransaction { connection.rollBack() }
        if state == .committed { store.removeReleasedFiles(of: writer) }
        inTransaction = false
        state = .ended
        writerLock.release()
    }

    deinit {
        // A save the context dropped without ending it must not keep the store locked.
        if state != .ended { abort() }
    }
}
