import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

extension HistoryLog {
    /// The name of the PL/pgSQL function, created in the namespace, that deletes every row of a table
    /// and records the deletion in one call (see ``everyRowFunctionSQL()``). The number is its
    /// version: a build that needs another function (other parameters, other results) gives it
    /// another name, and the builds of both versions can share the namespace.
    static let everyRowFunctionName = "modelstore_delete_every_row_1"

    /// The function, qualified by the namespace.
    var everyRowFunction: String { quote(namespace) + "." + Self.everyRowFunctionName }

    /// The function's name and parameter types, as `to_regprocedure` reads them.
    var everyRowFunctionSignature: String {
        everyRowFunction + "(regclass, regclass[], boolean, double precision, text, text, text, bigint)"
    }

    /// Creates the function (``everyRowFunctionSQL()``) when the namespace lacks it: a namespace
    /// created before it existed gets it at its next open. Runs in the open's transaction, which
    /// holds the namespace's advisory lock (see ``StoreOpener``), so opens by several processes at
    /// once take turns: the first creates it, the others find it. Returns whether the namespace has
    /// it now.
    ///
    /// A server that refuses to create it (a role without the `CREATE` privilege on the namespace,
    /// a database without PL/pgSQL) fails nothing: the creation is rolled back to a savepoint, this
    /// returns `false`, and the store deletes every row with separate statements instead
    /// (``deleteEveryRow(of:emptying:author:limit:on:)``).
    func createEveryRowFunctionIfMissing(_ session: Session) async throws -> Bool {
        try await createFunctionIfMissing(everyRowFunctionSignature, everyRowFunctionSQL(), session)
    }

    /// The SQLSTATE the function raises inside its exception block when the keys it deleted were not
    /// one run, which rolls the block back (its savepoint) so that the keys can be read as runs.
    static let notOneRunState = "MSRUN"

    /// The SQLSTATE the function raises when the meta table lacks the history's counter.
    static let missingCounterState = "MSMET"

    /// The `CREATE FUNCTION` statement of ``everyRowFunction``, or `nil` for a namespace whose name
    /// could end the function's dollar-quoted body.
    ///
    /// The function does in one call what ``deleteEveryRow(of:emptying:author:limit:on:)`` does in a
    /// transaction of six statements, in the same order and with the same locks:
    /// 1. Outside READ COMMITTED (a server whose `default_transaction_isolation` is another) it
    ///    returns `NULL`s at once, having done nothing: the caller then runs that transaction, which
    ///    asks for READ COMMITTED. In READ COMMITTED each statement of the function takes a new
    ///    snapshot, as each statement of the transaction does.
    /// 2. It locks the table against other writers (``lockAgainstWriters(_:)``), first, and empties
    ///    the join tables `joins`; with `immediate`, it checks the deferred constraints now
    ///    (``checkDeferredConstraints(_:)``).
    /// 3. In an exception block (a savepoint, taken after the lock, so a rollback to it keeps the
    ///    lock): the smallest and largest key from the primary key's index, then a plain `DELETE`,
    ///    whose `ROW_COUNT` says whether the keys were every key between the two. When they were
    ///    not, the block is rolled back, and the keys are read as runs (gaps and islands over the
    ///    primary key) before the rows are deleted. An empty table ends the call here: empty arrays,
    ///    nothing recorded.
    /// 4. The history, as ``record(body:changes:author:limit:number:on:)`` and
    ///    ``trim(total:before:limit:on:)`` write it: the next number (the counter's lock, taken
    ///    last), the row of the runs (format 3, the body `body_start`, the runs, `body_end`) with its
    ///    running total read after the number was taken (a statement of its own, so its snapshot
    ///    holds every row numbered before), and the trim to `history_limit` (`NULL` for none).
    ///
    /// Returns the runs' first and last keys, ascending. Its statements are planned once per
    /// connection, as a prepared statement's, except the three that name the table (`EXECUTE`, the
    /// table is a parameter), which are small to plan.
    func everyRowFunctionSQL() -> String? {
        let tag = "$modelstore$"
        guard !namespace.contains("$") else { return nil }
        let key = TableLayout.key
        let runs =
            "SELECT array_agg(lo ORDER BY lo), array_agg(hi ORDER BY lo) FROM (SELECT min(\(key)) AS lo, "
            + "max(\(key)) AS hi FROM (SELECT \(key), \(key) - row_number() OVER (ORDER BY \(key)) AS run "
            + "FROM %s) i GROUP BY run) r"
        return """
            CREATE FUNCTION \(everyRowFunction)(target regclass, joins regclass[], immediate boolean,
                committed_at double precision, author_name text, body_start text, body_end text,
                history_limit bigint, OUT first_keys bigint[], OUT last_keys bigint[])
            LANGUAGE plpgsql AS \(tag)
            DECLARE
                smallest bigint;
                largest bigint;
                deleted bigint;
                join_table regclass;
                taken bigint;
                kept_total bigint;
                kept_before bigint;
            BEGIN
                IF current_setting('transaction_isolation') <> 'read committed' THEN
                    RETURN;
                END IF;
                EXECUTE format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', target);
                FOREACH join_table IN ARRAY joins LOOP
                    EXECUTE format('DELETE FROM %s', join_table);
                END LOOP;
                IF immediate THEN
                    SET CONSTRAINTS ALL IMMEDIATE;
                END IF;
                BEGIN
                    EXECUTE format('SELECT min(\(key)), max(\(key)) FROM %s', target) INTO smallest, largest;
                    IF smallest IS NULL THEN
                        first_keys := '{}';
                        last_keys := '{}';
                        RETURN;
                    END IF;
                    EXECUTE format('DELETE FROM %s', target);
                    GET DIAGNOSTICS deleted = ROW_COUNT;
                    IF deleted::numeric <> largest::numeric - smallest + 1 THEN
                        RAISE SQLSTATE '\(Self.notOneRunState)';
                    END IF;
                    first_keys := ARRAY[smallest];
                    last_keys := ARRAY[largest];
                EXCEPTION WHEN SQLSTATE '\(Self.notOneRunState)' THEN
                    EXECUTE format('\(runs)', target) INTO first_keys, last_keys;
                    EXECUTE format('DELETE FROM %s', target);
                    GET DIAGNOSTICS deleted = ROW_COUNT;
                END;
                UPDATE \(metaTable) SET value = (value::bigint + 1)::text WHERE key = '\(Self.lastKey)'
                    RETURNING value::bigint INTO taken;
                IF taken IS NULL THEN
                    RAISE SQLSTATE '\(Self.missingCounterState)';
                END IF;
                INSERT INTO \(table) (number, changes, cumulative, committed, author, body)
                    SELECT taken, deleted, deleted + coalesce((SELECT h.cumulative FROM \(table) h
                        ORDER BY h.number DESC LIMIT 1), 0), committed_at, author_name, (body_start
                        || (SELECT string_agg('[' || u.f || ',' || u.l || ']', ',' ORDER BY u.f)
                        FROM unnest(first_keys, last_keys) AS u (f, l)) || body_end)::json
                    RETURNING cumulative, coalesce((SELECT h.cumulative - h.changes FROM \(table) h
                        ORDER BY h.number LIMIT 1), cumulative - changes) INTO kept_total, kept_before;
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

    /// One call of ``everyRowFunction`` that deletes every row of `layout`'s table (emptying
    /// `joinTables` first) and records the deletion with `author` under the history limit `limit`:
    /// its text (kept prepared: every value a parameter, typed by a cast), its parameters, and what
    /// identifies its history row (the committed time, the author and the start of the body), for
    /// a caller that lost the connection before the answer.
    struct EveryRowCall: Sendable {
        let sql: String
        let binds: PostgresBindings
        let committed: Double
        let author: String?
        let bodyStart: String
        let bodyEnd: String
    }

    /// The call of ``everyRowFunction`` for `layout`'s table (see ``EveryRowCall``).
    func everyRowCall(
        of layout: TableLayout, emptying joinTables: [String], author: String?, limit: Int?
    ) -> EveryRowCall {
        let (start, end) = Self.runsBody(entityName: layout.entity.name)
        let committed = Date().timeIntervalSince1970
        var binds = PostgresBindings()
        binds.append(layout.table)
        binds.append(joinTables)
        binds.append(hasDeferredConstraints)
        binds.append(committed)
        if let author { binds.append(author) } else { binds.appendNull() }
        binds.append(start)
        binds.append(end)
        if let limit { binds.append(Int64(limit)) } else { binds.appendNull() }
        let sql =
            "SELECT first_keys, last_keys FROM \(everyRowFunction)($1::text::regclass, $2::text[]::regclass[], "
            + "$3::boolean, $4::double precision, $5::text, $6::text, $7::text, $8::bigint)"
        return EveryRowCall(
            sql: sql, binds: binds, committed: committed, author: author, bodyStart: start, bodyEnd: end)
    }

    /// The runs a body of format 3 written by `call` names (`[first,last]`, separated by commas,
    /// between its start and end), or `nil` when `body` is not one.
    static func runs(in body: String, of call: EveryRowCall) -> [ClosedRange<Int64>]? {
        guard body.hasPrefix(call.bodyStart), body.hasSuffix(call.bodyEnd),
            body.utf8.count >= call.bodyStart.utf8.count + call.bodyEnd.utf8.count
        else { return nil }
        let inner = body.utf8.dropFirst(call.bodyStart.utf8.count).dropLast(call.bodyEnd.utf8.count)
        var runs: [ClosedRange<Int64>] = []
        for part in String(decoding: inner, as: UTF8.self).split(separator: "],[", omittingEmptySubsequences: false) {
            let ends = part.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).split(separator: ",")
            guard ends.count == 2, let first = Int64(ends[0]), let last = Int64(ends[1]), first <= last else {
                return nil
            }
            runs.append(first...last)
        }
        return runs
    }
}
