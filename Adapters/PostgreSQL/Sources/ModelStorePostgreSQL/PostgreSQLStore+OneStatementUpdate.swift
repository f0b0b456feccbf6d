import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

extension PostgreSQLStore {
    /// What a save's one statement stored (see ``OneStatementUpdate``).
    struct OneStatementWritten: Sendable {
        let version: Int64
        let number: Int64
        /// The running totals for ``HistoryLog/trim(total:before:limit:on:)``; `nil` when unknown.
        let totals: (total: Int64, before: Int64)?
    }

    /// The one statement of a save (see ``OneStatementUpdate``), when the save updates one model at
    /// a version the context read (and has not marked stale), with the stored values it read
    /// (``DataStoreSaveChangesRequest/expectedValues``), changing at least one of them, in a
    /// namespace without deferred constraints; `nil` otherwise.
    func oneStatementUpdate(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, versions read: [PersistentIdentifier: Int64]
    ) throws -> OneStatementUpdate? {
        guard request.inserted.isEmpty, request.deleted.isEmpty, request.updated.count == 1,
            let snapshot = request.updated.first, !self.history.hasDeferredConstraints
        else { return nil }
        let id = snapshot.persistentIdentifier
        guard let version = read[id], version != Self.staleVersion, let key = localKey(id),
            let layout = layouts[id.entityName], let sql = oneStatementTexts[id.entityName],
            let expected = request.expectedValues[id]
        else { return nil }
        let before = DefaultSnapshot(persistentIdentifier: id, entity: snapshot.entity, values: expected)
        guard let change = StoreHistoryRecord.Change.update(from: before, to: snapshot) else { return nil }
        return try OneStatementUpdate(
            snapshot, key: key, read: version, expected: expected, change: change,
            author: request.editingState.author, layout: layout, sql: sql)
    }

    /// Saves `request` as one statement, when it can be (``oneStatementUpdate(_:versions:)``): returns
    /// the result and the version written, or `nil` when the statement stored nothing and the save
    /// goes through its transaction (no row at the version and with the values read, a history row
    /// the statement could not number, or a deadlock, which the transaction retries). A unique
    /// index's refusal fails the save as in the transaction, having stored nothing.
    ///
    /// When the connection ends before the answer, the statement may have committed: the row is
    /// read under its lock on another connection (which waits for a statement still running), and
    /// the save fails with ``DataStoreError/Code/io`` when it is still at the version read, succeeds
    /// when the history holds the statement's row, and otherwise fails saying the outcome is unknown.
    func updateInOneStatement(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, versions read: [PersistentIdentifier: Int64]
    ) async throws -> (DataStoreSaveChangesResult<DefaultSnapshot>, [PersistentIdentifier: Int64])? {
        guard let update = try oneStatementUpdate(request, versions: read) else { return nil }
        let url = database.url
        let written: OneStatementWritten?
        do {
            written = try await database.autocommit { session in
                let rows = try await self.writer(on: session).run(
                    update.sql, update.binds, writing: update.snapshot, layout: update.layout,
                    prepared: update.prepared)
                guard let row = rows.first else { return nil }
                let (version, number, total, before) = try row.decode((Int64, Int64?, Int64?, Int64?).self)
                guard let number, let total, let before else { throw StoreOpener.incompleteMeta(url) }
                return OneStatementWritten(version: version, number: number, totals: (total, before))
            }
        } catch let error as DataStoreError {
            throw error
        } catch  where OneStatementUpdate.isMissingPredecessor(error) || ModelStoreErrors.isRetryable(error) {
            return nil
        } catch  where ModelStoreErrors.endsTheConnection(error) {
            written = try await storedInDoubt(update, underlying: error)
        } catch {
            throw ModelStoreErrors.translate(error, doing: "saving", url: url)
        }
        guard let written else { return nil }
        if let totals = written.totals, let limit = configuration.historyLimit,
            totals.total - totals.before > Int64(limit)
        {
            // After the commit, as one statement committed on its own (see `HistoryLog.trim`), so
            // the deletion and the expiry of the tokens into it are seen together. A failure leaves
            // the history over its limit until the next save that finds it so; the save itself has
            // committed.
            let history = self.history
            _ = try? await database.autocommit { session in
                try await history.trim(total: totals.total, before: totals.before, limit: limit, on: session)
            }
        }
        let result = DataStoreSaveChangesResult<DefaultSnapshot>(
            for: identifier, remappedIdentifiers: [:], snapshotsToReregister: [:],
            historyToken: DefaultHistoryToken(storeIdentifier: identifier, transactionNumber: written.number))
        return (result, [update.snapshot.persistentIdentifier: written.version])
    }

    /// What became of a one-statement save whose connection ended before its answer (see
    /// ``updateInOneStatement(_:versions:)``): its row and history row, read on another connection.
    func storedInDoubt(_ update: OneStatementUpdate, underlying: any Error) async throws -> OneStatementWritten {
        let url = database.url
        let history = self.history
        let found: (version: Int64?, number: Int64?)
        do {
            found = try await database.transaction("checking whether a save was stored") { session in
                var row = PostgresBindings()
                row.append(update.key)
                let version = try await session.integer(
                    "SELECT \(TableLayout.version) FROM \(update.layout.table) WHERE \(TableLayout.key) = $1 "
                        + "FOR NO KEY UPDATE", row)
                if version == update.read { return (version, nil) }
                var mine = PostgresBindings()
                mine.append(update.committed)
                if let author = update.author { mine.append(author) } else { mine.appendNull() }
                mine.append(update.body)
                let number = try await session.integer(
                    "SELECT number FROM \(history.table) WHERE committed = $1::double precision "
                        + "AND author IS NOT DISTINCT FROM $2::text AND body::text = $3::text", mine)
                return (version, number)
            }
        } catch {
            throw ModelStoreErrors.commitOutcomeUnknown("saving", url: url, underlying: underlying)
        }
        if found.version == update.read { throw ModelStoreErrors.translate(underlying, doing: "saving", url: url) }
        guard let number = found.number else {
            throw ModelStoreErrors.commitOutcomeUnknown("saving", url: url, underlying: underlying)
        }
        return OneStatementWritten(version: update.read + 1, number: number, totals: nil)
    }
}
