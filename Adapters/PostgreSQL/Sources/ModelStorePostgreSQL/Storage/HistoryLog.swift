import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

/// The store's history in its namespace: table `"ns"."modelstore_history"`, one row per committed
/// transaction, written inside the transaction it records; and two counters in `modelstore_meta`.
///
/// A row holds the transaction's `number` (its token), its change count, the running total of
/// changes up to it (`cumulative`, so the kept total is the newest row's total minus what came
/// before the oldest), when it was saved (`committed`, seconds since 1970), the author, and the
/// changes as JSON (`json`, not `jsonb`, which would turn a `-0.0` in a tombstone into `0`).
///
/// ## Numbers in commit order
/// `historyLast` in the meta table is the newest number ever given. A writer takes the next one
/// with `UPDATE … SET value = value + 1 … RETURNING value`, which locks that row until the
/// transaction ends. A second writer's `UPDATE` waits for the lock, then (in READ COMMITTED)
/// increments the value the first one committed. So a transaction's number is given only after
/// every transaction with a smaller number has committed or rolled back, and numbers grow in
/// commit order across connections and processes: a reader polling for `number > last` never
/// misses a transaction that commits later under a smaller number. (A sequence would not do:
/// `nextval` is not transactional, so a slow transaction could commit number 5 after a reader
/// has already read 6.) The lock is taken last, after the save's rows are written and its
/// deferred constraints checked, so it is held only for the few statements before the commit. A
/// save takes it in a call of the namespace's function that also writes the history row, sent
/// with the transaction's `COMMIT` (``recordByFunction(_:author:limit:committing:on:unavailable:)``), so it
/// holds it for that call and the commit only.
/// A rolled-back transaction rolls its increment back too, so numbers have no gaps.
///
/// `historyExpiredThrough` is the highest number deleted (by `deleteHistory`, trimming to the
/// limit, or an erase), for ``StoreHistory`` to refuse a fetch that would have a silent gap.
struct HistoryLog: Sendable {
    let namespace: String
    let url: String
    /// Whether the namespace has deferred foreign keys (to-one columns or join tables) for
    /// ``takeNumber(_:)`` to check before it takes the counter's lock; without any, it skips
    /// that statement.
    var hasDeferredConstraints = true

    static let lastKey = "historyLast"
    static let expiredKey = "historyExpiredThrough"

    var table: String { quote(namespace) + ".\"modelstore_history\"" }
    var metaTable: String { quote(namespace) + ".\"modelstore_meta\"" }

    /// Creates the table and the counters (in the open's transaction; both exist afterwards).
    func create(_ session: Session) async throws {
        try await session.execute(
            "CREATE TABLE IF NOT EXISTS \(table) (number bigint PRIMARY KEY, changes integer NOT NULL, "
                + "cumulative bigint NOT NULL, committed double precision NOT NULL, author text, body json NOT NULL)")
        try await session.execute(
            "INSERT INTO \(metaTable) (key, value) VALUES ('\(Self.lastKey)', '0'), ('\(Self.expiredKey)', '0') "
                + "ON CONFLICT (key) DO NOTHING")
    }

    // MARK: Writing

    /// Locks the counter of numbers until the transaction ends and returns the next number
    /// (see the type's discussion). Every writer of history takes this lock first.
    private func takeNumber(_ session: Session) async throws -> Int64 {
        try await checkDeferredConstraints(session)
        // The transaction's id comes along, so the commit need not ask for it (see `Session.transactionID`).
        guard
            let row = try await session.query(
                "UPDATE \(metaTable) SET value = (value::bigint + 1)::text WHERE key = '\(Self.lastKey)' "
                    + "RETURNING value::bigint, txid_current()"
            ).first
        else { throw StoreOpener.incompleteMeta(url) }
        let (number, transaction) = try row.decode((Int64, Int64).self)
        session.transactionID.set(transaction)
        return number
    }

    /// Checks the namespace's deferred foreign keys now rather than at COMMIT, so that no check
    /// waits for another transaction's row while this one holds the counter every writer needs;
    /// does nothing in a namespace without any. Runs before the counter is taken.
    func checkDeferredConstraints(_ session: Session) async throws {
        if hasDeferredConstraints { try await session.execute("SET CONSTRAINTS ALL IMMEDIATE") }
    }

    /// `write` (an `UPDATE … RETURNING` that is a save's one write) as a statement that also takes
    /// the next number (as ``takeNumber(_:)`` does, only where nothing needs `SET CONSTRAINTS ALL
    /// IMMEDIATE` first: no deferred constraints in the namespace), and records the save's one
    /// change under it (after its predecessor, see ``predecessor``), its committed time, author and body the parameters
    /// after `write`'s `parameters`. Returns `write`'s columns, then the number and the transaction
    /// id (`NULL` when `write` returned no row), then the totals for
    /// ``trim(total:before:limit:on:)`` (`NULL` when the row was not recorded). A save of one row is
    /// then two round trips: this statement (with the transaction's `BEGIN`), and `COMMIT`.
    func recordingOneChange(after write: String, parameters: Int) -> String {
        "WITH w AS (\(write)), n AS (\(numberTaking(ifAnyRowIn: "w"))), "
            + "h AS (\(insertInto)SELECT n.number, 1, 1 + p.cumulative, $\(parameters + 1)::double precision, "
            + "$\(parameters + 2)::text, $\(parameters + 3)::text::json FROM n, \(predecessor) \(returningTotals)) "
            + "SELECT w.*, n.number, n.transaction, h.cumulative, h.previous_total FROM w LEFT JOIN n ON true "
            + "LEFT JOIN h ON true"
    }

    /// `write` (an `UPDATE … RETURNING "_version"`, a save's one write, run outside a transaction)
    /// as one statement that also takes the next number when `write` wrote a row, and inserts the
    /// history row under it, its committed time, author and body the three parameters after
    /// `write`'s `parameters`. Unlike ``recordingOneChange(after:parameters:)`` it never writes the
    /// row without the history row: when the statement cannot know the running total before it
    /// (see ``previousTotal``), the history row's total is `NULL`, and its `NOT NULL` fails the whole
    /// statement (``OneStatementUpdate/isMissingPredecessor(_:)``). Returns the new
    /// version, the number, and the totals for ``trim(total:before:limit:on:)``; no row when
    /// `write` wrote none.
    func recordingOneChangeOrFailing(after write: String, parameters: Int) -> String {
        "WITH w AS (\(write)), n AS (\(numberTaking(ifAnyRowIn: "w"))), "
            + "h AS (\(insertInto)SELECT n.number, 1, 1 + \(previousTotal), $\(parameters + 1)::double precision, "
            + "$\(parameters + 2)::text, $\(parameters + 3)::text::json FROM n \(predecessorJoin) \(returningTotals)) "
            + "SELECT w.\(TableLayout.version), n.number, h.cumulative, h.previous_total FROM w LEFT JOIN n ON true "
            + "LEFT JOIN h ON true"
    }

    /// The history row `p` numbered just before the number `n` a statement takes, for the running
    /// total (`p.cumulative`) of the row the statement inserts (`… FROM n, <predecessor>`): the
    /// statement records its transaction only when its snapshot holds that row.
    ///
    /// Why: a statement's snapshot is taken when it starts, and its `UPDATE` of the counter may
    /// first wait for the lock of a writer that then commits the row numbered just before; that row
    /// is newer than the snapshot, so the statement cannot read its running total. (A statement run
    /// after the counter is taken can, see ``record(_:author:limit:number:on:)``.) Numbers grow in
    /// commit order, so when the row just before is in the snapshot, so is every row before it, and
    /// it is the newest. When it is not (that wait happened, or the history is empty), the statement
    /// records nothing, and the caller records the transaction under the taken number by another
    /// statement.
    var predecessor: String { "\(table) p WHERE p.number = n.number - 1" }

    /// The predecessor `p` of the number `n.number` a statement takes, joined so that the statement
    /// still has a row when `p` is not in its snapshot (see ``previousTotal``).
    var predecessorJoin: String { "LEFT JOIN \(table) p ON p.number = n.number - 1" }

    /// The running total of changes before the history row a statement inserts under the number
    /// `n.number` it took, or `NULL` when the statement cannot know it (the statement then records
    /// nothing itself). With ``predecessorJoin``.
    ///
    /// It is the total of the row `p` numbered just before (see ``predecessor``) when that row is in
    /// the statement's snapshot. When it is not, it may have been deleted already (trimmed to the
    /// limit, `deleteHistory`, or the number used up by an erase): then `historyExpiredThrough` in
    /// the snapshot reaches it, which means every transaction numbered before the statement's had
    /// committed when its snapshot was taken, and the newest row of the snapshot gives the total
    /// (`0` for an empty history), as ``record(_:author:limit:number:on:)`` reads it after taking
    /// the number. Otherwise the statement waited for a transaction newer than its snapshot, and the
    /// total is `NULL`. (A history trimmed to nothing, which a save past the limit on its own does,
    /// is the common case: without this, the next save could not record itself in its statement.)
    var previousTotal: String {
        "coalesce(p.cumulative, CASE WHEN n.number - 1 <= (SELECT value::bigint FROM \(metaTable) "
            + "WHERE key = '\(Self.expiredKey)') THEN \(newestTotal) END)"
    }

    /// Appends the parameters of ``recordingOneChange(after:parameters:)``: now, the author, and the
    /// body of `change`.
    static func bindRecording(
        of change: StoreHistoryRecord.Change, author: String?, to binds: inout PostgresBindings
    ) throws {
        bindCommitted(author: author, to: &binds)
        binds.append(try body(of: [change]))
    }

    /// Appends a history row's committed time (now, in seconds since 1970) and author.
    static func bindCommitted(author: String?, to binds: inout PostgresBindings) {
        binds.append(Date().timeIntervalSince1970)
        if let author { binds.append(author) } else { binds.appendNull() }
    }

    /// The `UPDATE` that takes the next number (as ``takeNumber(_:)`` does) when the statement's
    /// common table expression `name` has a row, returning `number` and `transaction` (the id).
    func numberTaking(ifAnyRowIn name: String) -> String {
        "UPDATE \(metaTable) SET value = (value::bigint + 1)::text WHERE key = '\(Self.lastKey)' "
            + "AND EXISTS (SELECT 1 FROM \(name)) RETURNING value::bigint AS number, txid_current() AS transaction"
    }

    /// Records a transaction with these changes, keeps at most `limit` changes, and returns its
    /// number; records nothing and returns `nil` when there are no changes (and no `number` was
    /// taken already, by a statement that could not record the transaction itself, see
    /// ``predecessor``).
    ///
    /// A history over its limit is trimmed to nine tenths of it, so that at the limit a save trims
    /// once per tenth of the limit rather than every time.
    func record(
        _ changes: [StoreHistoryRecord.Change], author: String?, limit: Int?, number taken: Int64? = nil,
        on session: Session
    ) async throws -> Int64? {
        guard !changes.isEmpty || taken != nil else { return nil }
        return try await record(
            body: try Self.body(of: changes), changes: Int64(changes.count), author: author, limit: limit,
            number: taken, on: session)
    }

    /// Records a transaction of `changes` changes whose body is `body` (as ``record(_:author:limit:number:on:)``
    /// does, see there) and returns its number.
    func record(
        body: String, changes: Int64, author: String?, limit: Int?, number taken: Int64?, on session: Session
    ) async throws -> Int64 {
        let number: Int64
        if let taken { number = taken } else { number = try await takeNumber(session) }
        var binds = PostgresBindings()
        binds.append(number)
        binds.append(changes)
        Self.bindCommitted(author: author, to: &binds)
        binds.append(body)
        // The subqueries read the table as it was before this row: the newest total, and what came
        // before the oldest row (this row's start when the table was empty).
        // Kept prepared, every parameter typed by a cast (rule 2 of `PreparedStatements`).
        let rows = try await session.query(
            prepared: insertInto + "VALUES ($1::bigint, $2::bigint, $2::bigint + \(newestTotal), $3::double precision, "
                + "$4::text, $5::text::json) " + returningTotals,
            binds)
        guard let row = rows.first else { return number }
        let (total, before) = try row.decode((Int64, Int64).self)
        try await trim(total: total, before: before, limit: limit, on: session)
        return number
    }

    /// The start of the statement that inserts a history row.
    var insertInto: String { "INSERT INTO \(table) (number, changes, cumulative, committed, author, body) " }

    /// The newest row's running total of changes (`0` for an empty table), as the table was before
    /// the statement that inserts a row reads it.
    var newestTotal: String { "coalesce((SELECT cumulative FROM \(table) ORDER BY number DESC LIMIT 1), 0)" }

    /// The `RETURNING` clause of a history row's insert: the new total, and what came before the
    /// oldest row (the new row's start when the table was empty), for ``trim(total:before:limit:on:)``.
    var returningTotals: String {
        "RETURNING cumulative, coalesce((SELECT cumulative - changes FROM \(table) ORDER BY number LIMIT 1), "
            + "cumulative - changes) AS previous_total"
    }

    /// Trims a history whose kept changes (`total` minus `before`, as the newest row's insert
    /// returned them) are over `limit` to nine tenths of it; does nothing without a limit. One
    /// statement deletes the rows and raises `historyExpiredThrough` to the newest of them.
    func trim(total: Int64, before: Int64, limit: Int?, on session: Session) async throws {
        guard let limit, total - before > Int64(limit) else { return }
        var cut = PostgresBindings()
        cut.append(total - Int64(limit) * 9 / 10)
        // One statement: the rows up to the first that reaches the cut, and the expiry through them.
        try await session.execute(
            "WITH doomed AS (DELETE FROM \(table) WHERE number <= coalesce("
                + "(SELECT number FROM \(table) WHERE cumulative >= $1 ORDER BY number LIMIT 1), 0) "
                + "RETURNING number) UPDATE \(metaTable) SET value = greatest(value::bigint, "
                + "(SELECT max(number) FROM doomed))::text WHERE key = '\(Self.expiredKey)' "
                + "AND EXISTS (SELECT 1 FROM doomed)", cut)
    }

    /// Raises `historyExpiredThrough` to `number` (never lowers it).
    private func expire(through number: Int64, _ session: Session) async throws {
        var binds = PostgresBindings()
        binds.append(number)
        try await session.execute(
            "UPDATE \(metaTable) SET value = greatest(value::bigint, $1)::text WHERE key = '\(Self.expiredKey)'",
            binds)
    }

    /// Deletes the kept transactions `descriptor` selects, under the counter's lock; returns
    /// whether any was deleted.
    func delete(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>, schema: Schema, storeIdentifier: String,
        on session: Session
    ) async throws -> Bool {
        try await session.execute(
            "SELECT value FROM \(metaTable) WHERE key = '\(Self.lastKey)' FOR UPDATE")
        var history = try await load(storeIdentifier: storeIdentifier, on: session)
        let kept = Set(history.records.map(\.number))
        guard try history.delete(descriptor, schema: schema, storeIdentifier: storeIdentifier) else { return false }
        let doomed = kept.subtracting(history.records.map(\.number))
        var binds = PostgresBindings()
        binds.append(Array(doomed))
        try await session.execute("DELETE FROM \(table) WHERE number = ANY($1)", binds)
        try await expire(through: history.expiredThrough, session)
        return true
    }

    /// Deletes every transaction (an erase) and uses up one number, so every token from before the
    /// erase expires, the newest included: a process watching for `number > newest` learns that
    /// everything may have changed.
    func deleteAll(on session: Session) async throws {
        let number = try await takeNumber(session)
        try await session.execute("DELETE FROM \(table)")
        try await expire(through: number, session)
    }

    // MARK: Reading

    /// The history as a value (every kept record, oldest first, and the counters), read by one
    /// statement so the rows and the counters are of one moment.
    func load(
        storeIdentifier: String, window: HistoryReadWindow = HistoryReadWindow(), on session: Session
    ) async throws -> StoreHistory {
        // The window's rows, found through the primary key: a fetch after a recent token reads only
        // the rows after it, however long the history.
        var binds = PostgresBindings()
        var rowsSQL = "SELECT * FROM \(table)"
        if let after = window.after {
            binds.append(after)
            rowsSQL += " WHERE number > $\(binds.count)"
        }
        rowsSQL += window.newestFirst ? " ORDER BY number DESC" : " ORDER BY number"
        if let limit = window.limit {
            binds.append(Int64(limit))
            rowsSQL += " LIMIT $\(binds.count)"
        }
        let rows = try await session.query(
            "SELECT c.last, c.expired, h.number, h.committed, h.author, h.body::text, h.changes FROM (SELECT "
                + "(SELECT value::bigint FROM \(metaTable) WHERE key = '\(Self.lastKey)') AS last, "
                + "(SELECT value::bigint FROM \(metaTable) WHERE key = '\(Self.expiredKey)') AS expired) c "
                + "LEFT JOIN (\(rowsSQL)) h ON true ORDER BY h.number", binds)
        var last: Int64 = 0
        var expired: Int64 = 0
        var records: [StoreHistoryRecord] = []
        records.reserveCapacity(rows.count)
        for row in rows {
            let (counter, expiry, number, committed, author, body, count) = try row.decode(
                (Int64?, Int64?, Int64?, Double?, String?, String?, Int32?).self)
            guard let counter, let expiry else { throw StoreOpener.incompleteMeta(url) }
            (last, expired) = (counter, expiry)
            guard let number, let committed, let body, let count else { continue }
            records.append(
                StoreHistoryRecord(
                    number: number, timestamp: Date(timeIntervalSince1970: committed), author: author,
                    changes: try changes(in: body, counting: Int(count), storeIdentifier: storeIdentifier)))
        }
        return StoreHistory(records: records, lastNumber: last, expiredThrough: expired)
    }

    // MARK: The body

    /// One change as it is kept: kind (`i`, `u`, `d`), entity, key, updated property names, and
    /// a delete's tombstone; empty fields are left out. In a body of format 2 or later (see
    /// ``bodyFormat``), a line may name many deletions at once: kind `d`, the entity, and instead of
    /// `p` either `ps`, the keys (format 2), or `rs` (format 3), runs of consecutive keys, each
    /// `[first,last]` (a delete of every model, see ``deleteEveryRow(of:emptying:author:limit:on:)``).
    private struct Line: Codable {
        var k: String
        var e: String
        var p: Int64?
        var u: [String]?
        var t: [String: StoreValue]?
        var ps: [Int64]?
        var rs: [[Int64]]?
    }

    /// A body of format 2 or later: `{"v":3,"c":[lines]}`.
    private struct VersionedBody: Decodable {
        var v: Int
        var c: [Line]?
    }

    /// The newest format of a history row's body this build writes and reads.
    ///
    /// - Format 1 (no version written): the JSON array of the changes' lines, one per change.
    /// - Format 2: `{"v":2,"c":[lines]}`, where a line may also name many deletions of one entity
    ///   (`{"k":"d","e":"User","ps":[1,2,3]}`): the changes of that line, in that order, are the
    ///   deletions of those keys, as format 1 would have listed them one per line.
    /// - Format 3: as format 2, where a line of many deletions may also name its keys as runs of
    ///   consecutive keys (`{"k":"d","e":"User","rs":[[1,5],[7,9]]}`): the deletions of every key of
    ///   each run, in that order (1 to 5, then 7 to 9). The row's change count is the number of those
    ///   keys, and a reader refuses a row whose runs name more keys than it counts.
    ///
    /// A reader takes all three; a body of a newer format fails the read with `.corrupted`, saying a
    /// newer build wrote it, rather than being read wrongly.
    static let bodyFormat = 3

    /// The JSON array of the changes' ``Line``s. A line without a tombstone (every insert and
    /// update, and the deletes of a batch delete) is written directly, with its entity name
    /// encoded once: a save of many rows would otherwise spend more time in `JSONEncoder` than in
    /// its statements, and a save of one row a good part of its own time. A tombstone's values
    /// go through `JSONEncoder`.
    static func body(of changes: [StoreHistoryRecord.Change]) throws -> String {
        var encoder: JSONEncoder?
        var names: [String: String] = [:]
        // The entity of the change before, whose name a run of changes of one entity reuses unhashed.
        var last: (entity: String, name: String)?
        var text = "["
        text.reserveCapacity(changes.count * 40 + 2)
        for (number, change) in changes.enumerated() {
            if number > 0 { text += "," }
            let kind = change.kind == .insert ? "i" : change.kind == .update ? "u" : "d"
            let entity = change.id.entityName
            let key = change.id.primaryKey.intValue ?? 0
            guard change.tombstone.isEmpty else {
                let line = Line(
                    k: kind, e: entity, p: key, u: change.updatedProperties.isEmpty ? nil : change.updatedProperties,
                    t: change.tombstone)
                let lineEncoder = encoder ?? JSONEncoder()
                encoder = lineEncoder
                text += String(decoding: try lineEncoder.encode(line), as: UTF8.self)
                continue
            }
            let name: String
            if let last, last.entity == entity {
                name = last.name
            } else if let known = names[entity] {
                name = known
            } else {
                name = jsonString(entity)
                names[entity] = name
            }
            last = (entity, name)
            if change.updatedProperties.isEmpty {
                text += "{\"k\":\"\(kind)\",\"e\":"
                text += name
                text += ",\"p\":"
                text += String(key)
                text += "}"
            } else {
                text += "{\"k\":\"\(kind)\",\"e\":\(name),\"p\":\(key),\"u\":["
                for (index, property) in change.updatedProperties.enumerated() {
                    if index > 0 { text += "," }
                    text += jsonString(property)
                }
                text += "]}"
            }
        }
        return text + "]"
    }

    /// `text` as a JSON string: quoted, with quotation marks, backslashes and control characters escaped.
    static func jsonString(_ text: String) -> String {
        let plain = text.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        if plain { return "\"" + text + "\"" }
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    /// The changes of a row's body, of format 1 to 3 (see ``bodyFormat``); `count` is the row's
    /// change count, which bounds the keys the runs of a format 3 line may name.
    private func changes(
        in body: String, counting count: Int, storeIdentifier: String
    ) throws -> [StoreHistoryRecord.Change] {
        let lines: [Line]
        do {
            if body.utf8.first(where: { $0 != UInt8(ascii: " ") }) == UInt8(ascii: "[") {
                lines = try JSONDecoder().decode([Line].self, from: Data(body.utf8))
            } else {
                let versioned = try JSONDecoder().decode(VersionedBody.self, from: Data(body.utf8))
                guard versioned.v <= Self.bodyFormat else { throw newerFormat(versioned.v) }
                guard let changes = versioned.c else { throw damaged(nil) }
                lines = changes
            }
        } catch let error as DataStoreError {
            throw error
        } catch {
            throw damaged(error)
        }
        var changes: [StoreHistoryRecord.Change] = []
        changes.reserveCapacity(lines.count)
        for line in lines {
            let kind: StoreHistoryRecord.Change.Kind
            switch line.k {
            case "i": kind = .insert
            case "u": kind = .update
            case "d": kind = .delete
            default: throw damaged(nil)
            }
            let many = kind == .delete && line.u == nil && line.t == nil
            switch (line.p, line.ps, line.rs) {
            case (let key?, nil, nil):
                changes.append(
                    StoreHistoryRecord.Change(
                        kind, .identifier(for: storeIdentifier, entityName: line.e, primaryKey: key),
                        updatedProperties: line.u ?? [], tombstone: line.t ?? [:]))
            case (nil, let keys?, nil) where many:
                for key in keys {
                    changes.append(
                        StoreHistoryRecord.Change(
                            .delete, .identifier(for: storeIdentifier, entityName: line.e, primaryKey: key)))
                }
            case (nil, nil, let runs?) where many:
                for run in runs {
                    // A run is `[first,last]`, and names no more keys than the row has changes left.
                    guard run.count == 2, run[0] <= run[1] else { throw damaged(nil) }
                    let (span, overflow) = run[1].subtractingReportingOverflow(run[0])
                    guard !overflow, span < Int64(count - changes.count) else { throw damaged(nil) }
                    for key in run[0]...run[1] {
                        changes.append(
                            StoreHistoryRecord.Change(
                                .delete, .identifier(for: storeIdentifier, entityName: line.e, primaryKey: key)))
                    }
                }
            default: throw damaged(nil)
            }
        }
        return changes
    }

    private func newerFormat(_ format: Int) -> DataStoreError {
        DataStoreError(
            .corrupted,
            "a row of the 'modelstore_history' table of the PostgreSQL store '\(url)' is of format \(format), "
                + "written by a newer build of ModelStorePostgreSQL; this build reads formats 1 to \(Self.bodyFormat)",
            remedy: "Update this program to the build that writes the store's history")
    }

    private func damaged(_ error: (any Error)?) -> DataStoreError {
        DataStoreError(
            .corrupted, "a row of the 'modelstore_history' table of the PostgreSQL store '\(url)' cannot be read",
            remedy: "Delete the history (deleteHistory) or restore the namespace from a backup", underlyingError: error)
    }

}
