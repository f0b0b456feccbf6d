import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

extension PostgreSQLStore {
    /// Deletes every row of `layout`'s table and records the deletion by one call of the namespace's
    /// function (``HistoryLog/everyRowFunctionSQL()``), outside a transaction: the call is one
    /// statement, its own transaction, one round trip. Returns the deleted keys as runs, ascending
    /// (none for an empty table), or `nil` when the caller must delete with the transaction of
    /// separate statements instead (``HistoryLog/deleteEveryRow(of:emptying:author:limit:on:)``),
    /// having changed nothing: the namespace has no function (its creation was refused at the open,
    /// or it was dropped since, which turns the calls off for the store's life), the server's
    /// transactions are not READ COMMITTED by default, or a deadlock or serialization failure rolled
    /// the call back (the transaction retries those).
    ///
    /// When the connection ends before the answer without the server's word that the call failed,
    /// the call may have committed: see ``everyRowCallInDoubt(_:of:underlying:)``.
    func deleteEveryRowInOneCall(
        of layout: TableLayout, author: String?, limit: Int?
    ) async throws -> [ClosedRange<Int64>]? {
        guard hasEveryRowFunction.withLock({ $0 }) else { return nil }
        let call = history.everyRowCall(
            of: layout, emptying: layout.joinTables.map(\.table), author: author, limit: limit)
        do {
            return try await database.autocommit { session -> [ClosedRange<Int64>]? in
                guard let row = try await session.query(prepared: call.sql, call.binds).first else { return nil }
                let (firsts, lasts) = try row.decode(([Int64]?, [Int64]?).self)
                guard let firsts, let lasts, firsts.count == lasts.count else { return nil }
                return zip(firsts, lasts).map { $0...$1 }
            }
        } catch let error as DataStoreError {
            throw error
        } catch  where ["42883", "42501"].contains(ModelStoreErrors.sqlState(error) ?? "") {
            // No function (dropped after the open), or no right to run it: the statements from now on.
            hasEveryRowFunction.withLock { $0 = false }
            return nil
        } catch  where ModelStoreErrors.isRetryable(error) {
            return nil
        } catch  where ModelStoreErrors.sqlState(error) == HistoryLog.missingCounterState {
            throw StoreOpener.incompleteMeta(database.url)
        } catch  where ModelStoreErrors.sqlState(error) == nil {
            // The connection ended without an error from the server: the call may have committed.
            return try await everyRowCallInDoubt(call, of: layout, underlying: error)
        } catch {
            throw ModelStoreErrors.translate(error, doing: "deleting every '\(layout.entity.name)'", url: database.url)
        }
    }

    /// What became of a call of the function whose connection ended before its answer (see
    /// ``deleteEveryRowInOneCall(of:author:limit:)``), asked on another connection: under the table's
    /// lock (which waits for the call, if it still runs), the history row the call would have
    /// written, found by its committed time, author and entity. Returns the runs it names when it is
    /// there; otherwise fails with ``DataStoreError/Code/io`` saying that the outcome is unknown (the
    /// call may have failed, deleted nothing from an empty table, or recorded a deletion the history
    /// limit trimmed at once).
    func everyRowCallInDoubt(
        _ call: HistoryLog.EveryRowCall, of layout: TableLayout, underlying: any Error
    ) async throws -> [ClosedRange<Int64>] {
        let (history, url) = (self.history, database.url)
        let doing = "deleting every '\(layout.entity.name)'"
        let body: String?
        do {
            body = try await database.transaction("checking whether a delete was stored") { session in
                try await session.execute(history.lockAgainstWriters(layout))
                var binds = PostgresBindings()
                binds.append(call.committed)
                if let author = call.author { binds.append(author) } else { binds.appendNull() }
                binds.append(call.bodyStart)
                return try await session.query(
                    "SELECT body::text FROM \(history.table) WHERE committed = $1::double precision "
                        + "AND author IS NOT DISTINCT FROM $2::text AND starts_with(body::text, $3::text) "
                        + "ORDER BY number DESC LIMIT 1", binds
                ).first?.decode(String.self)
            }
        } catch {
            throw ModelStoreErrors.commitOutcomeUnknown(doing, url: url, underlying: underlying)
        }
        guard let body, let runs = HistoryLog.runs(in: body, of: call) else {
            throw ModelStoreErrors.commitOutcomeUnknown(doing, url: url, underlying: underlying)
        }
        return runs
    }
}
