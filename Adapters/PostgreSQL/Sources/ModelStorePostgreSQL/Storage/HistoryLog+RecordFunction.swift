import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

extension HistoryLog {
    /// The name of the PL/pgSQL function, created in the namespace, that records a save's history
    /// in one call (see ``recordFunctionSQL()``). The number is its version, as for
    /// ``everyRowFunctionName``.
    static let recordFunctionName = "modelstore_record_history_1"

    /// The function, qualified by the namespace.
    var recordFunction: String { quote(namespace) + "." + Self.recordFunctionName }

    /// The function's name and parameter types, as `to_regprocedure` reads them.
    var recordFunctionSignature: String {
        recordFunction + "(boolean, bigint, double precision, text, text, bigint)"
    }

    /// Creates the function (``recordFunctionSQL()``) when the namespace lacks it, as
    /// ``createEveryRowFunctionIfMissing(_:)`` creates its own (see there: in the open's transaction,
    /// and a refusal fails nothing). Returns whether the namespace has it now.
    func createRecordFunctionIfMissing(_ session: Session) async throws -> Bool {
        try await createFunctionIfMissing(recordFunctionSignature, recordFunctionSQL(), session)
    }

    /// Creates a function of the namespace from `sql` when no function has `signature`; returns
    /// whether the namespace has it now. A refused creation (no `CREATE` privilege, no PL/pgSQL, or
    /// no `sql` for this namespace) is rolled back to a savepoint and returns `false`.
    func createFunctionIfMissing(_ signature: String, _ sql: String?, _ session: Session) async throws -> Bool {
        var binds = PostgresBindings()
        binds.append(signature)
        if try await session.query("SELECT to_regprocedure($1) IS NOT NULL", binds).first?.decode(Bool.self) == true {
            return true
        }
        guard let sql else { return false }
        try await session.execute("SAVEPOINT modelstore_function")
        do {
            try await session.execute(sql)
        } catch  where ModelStoreErrors.sqlState(error) != nil && !ModelStoreErrors.endsTheConnection(error) {
            try await session.execute("ROLLBACK TO SAVEPOINT modelstore_function")
            return false
        }
        try await session.execute("RELEASE SAVEPOINT modelstore_function")
        return true
    }

    /// The `CREATE FUNCTION` statement of ``recordFunction``, or `nil` for a namespace whose name
    /// could end the function's dollar-quoted body.
    ///
    /// The function does in one call what ``record(body:changes:author:limit:number:on:)`` does in
    /// up to four statements, in the same order and with the same locks, so that a save holds the
    /// counter's lock (see the type's discussion) for that one call and its `COMMIT`, not for several
    /// round trips between the client and the server:
    /// 1. With `immediate`, it checks the deferred constraints (``checkDeferredConstraints(_:)``),
    ///    before it takes the counter.
    /// 2. It takes the next number (the counter's row lock, until the transaction ends).
    /// 3. It inserts the history row, its running total read by a statement of its own after the
    ///    number was taken: in READ COMMITTED each statement of a function takes a new snapshot,
    ///    which holds every row numbered before (their writers committed before the lock was granted).
    ///    In REPEATABLE READ or SERIALIZABLE, the counter's `UPDATE` fails with a serialization failure
    ///    when another writer took a number after the transaction's snapshot, so the snapshot holds
    ///    them too.
    /// 4. It trims the history to `history_limit` (`NULL` for none), as ``trim(total:before:limit:on:)``.
    ///
    /// Returns the number and the transaction's id (`txid_current()`, for a commit whose outcome the
    /// connection's end leaves unknown). Raises ``missingCounterState`` when the meta table lacks the
    /// counter. Its statements are planned once per connection.
    func recordFunctionSQL() -> String? {
        let tag = "$modelstore$"
        guard !namespace.contains("$") else { return nil }
        return """
            CREATE FUNCTION \(recordFunction)(immediate boolean, change_count bigint, committed_at double precision,
                author_name text, body_text text, history_limit bigint, OUT taken bigint, OUT transaction_id bigint)
            LANGUAGE plpgsql AS \(tag)
            DECLARE
                kept_total bigint;
                kept_before bigint;
            BEGIN
                IF immediate THEN
                    SET CONSTRAINTS ALL IMMEDIATE;
                END IF;
                UPDATE \(metaTable) SET value = (value::bigint + 1)::text WHERE key = '\(Self.lastKey)'
                    RETURNING value::bigint INTO taken;
                IF taken IS NULL THEN
                    RAISE SQLSTATE '\(Self.missingCounterState)';
                END IF;
                INSERT INTO \(table) (number, changes, cumulative, committed, author, body)
                    VALUES (taken, change_count, change_count + coalesce((SELECT h.cumulative FROM \(table) h
                        ORDER BY h.number DESC LIMIT 1), 0), committed_at, author_name, body_text::json)
                    RETURNING cumulative, coalesce((SELECT h.cumulative - h.changes FROM \(table) h
                        ORDER BY h.number LIMIT 1), cumulative - changes) INTO kept_total, kept_before;
                transaction_id := txid_current();
                IF history_limit IS NOT NULL AND kept_total - kept_before > history_limit THEN
                    WITH doomed AS (DELETE FROM \(table) d WHERE d.number <= coalesce((SELECT h.number
                        FROM \(table) h WHERE h.cumulative >= kept_total - history_limit * 9 / 10
                        ORDER BY h.number LIMIT 1), 0) RETURNING d.number)
                    UPDATE \(metaTable) SET value = greatest(value::bigint, (SELECT max(number) FROM doomed))::text
                        WHERE key = '\(Self.expiredKey)' AND EXISTS (SELECT 1 FROM doomed);
                END IF;
            END
            \(tag)
            """
    }

    /// Records a save's `changes` (none: nothing recorded, `nil` returned) by one call of
    /// ``recordFunction`` and returns the number. With `committing`, the call is written to the
    /// connection together with the transaction's `COMMIT` (``Session/queryCommitting(_:_:)``): the
    /// server commits as soon as the call returns, without waiting for this task, so the counter's
    /// lock is held for the call and the commit only. Without, the transaction stays open (a save
    /// of a group, see ``PostgreSQLStore/groupsCommits``, whose transaction commits after its last
    /// save).
    ///
    /// With `committing`, the caller MUST make this the last statement of its transaction. When the
    /// server refuses the call because the function is missing (dropped after the open) or may not
    /// be run, this calls `unavailable` and throws ``RunAgain``: the transaction, aborted, runs again
    /// from its start, and `unavailable` MUST make it record with
    /// ``record(_:author:limit:number:on:)`` instead.
    func recordByFunction(
        _ changes: [StoreHistoryRecord.Change], author: String?, limit: Int?, committing: Bool = true,
        on session: Session, unavailable: @Sendable () -> Void
    ) async throws -> Int64? {
        guard !changes.isEmpty else { return nil }
        var binds = PostgresBindings()
        binds.append(hasDeferredConstraints)
        binds.append(Int64(changes.count))
        Self.bindCommitted(author: author, to: &binds)
        binds.append(try Self.body(of: changes))
        if let limit { binds.append(Int64(limit)) } else { binds.appendNull() }
        let rows: [PostgresRow]
        do {
            let sql =
                "SELECT taken, transaction_id FROM \(recordFunction)($1::boolean, $2::bigint, "
                + "$3::double precision, $4::text, $5::text, $6::bigint)"
            rows = try await committing ? session.queryCommitting(sql, binds) : session.query(sql, binds)
        } catch  where ["42883", "42501"].contains(ModelStoreErrors.sqlState(error) ?? "") {
            unavailable()
            throw RunAgain(underlying: error)
        } catch  where ModelStoreErrors.sqlState(error) == Self.missingCounterState {
            throw StoreOpener.incompleteMeta(url)
        }
        guard let row = rows.first else { throw StoreOpener.incompleteMeta(url) }
        let (number, transaction) = try row.decode((Int64?, Int64?).self)
        if let transaction { session.transactionID.set(transaction) }
        guard let number else { throw StoreOpener.incompleteMeta(url) }
        return number
    }
}

/// Work that the server refused for a reason its caller has just removed (see
/// ``HistoryLog/recordByFunction(_:author:limit:committing:on:unavailable:)``): ``Database`` runs the
/// transaction again from its start, since the refusal aborted it.
struct RunAgain: Error {
    let underlying: any Error
}
