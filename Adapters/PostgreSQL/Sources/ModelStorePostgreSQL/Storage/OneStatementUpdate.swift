import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

/// A save that updates one model, written as one statement outside a transaction (the server
/// commits it on its own): the row's `UPDATE`, the history's next number and the history row.
///
/// The `UPDATE` writes the row only when it is still at the version the context read and each of
/// its stored attributes is, bit for bit, the value the context read
/// (``DataStoreSaveChangesRequest/expectedValues``): the conflict check the transactional save
/// makes before its commit, made here in the statement's `WHERE`. The number is taken only when
/// the `UPDATE` wrote the row, and the history row only under a number. So the statement stores
/// all of the save or nothing of it:
/// - No row matched (another process changed or deleted it, or its values are not the ones read):
///   nothing is stored, and ``PostgreSQLStore`` saves through its transaction instead, which
///   reports the conflict (or the missing model) as it always did, or writes a row changed and
///   changed back at its new version.
/// - The history row needs the running total of the row numbered just before it, which the
///   statement cannot read when it had to wait for another writer's number (its snapshot predates
///   that writer's row, see ``HistoryLog/predecessor``). Then the row's `cumulative` would be
///   `NULL`, which its `NOT NULL` refuses: the whole statement fails (``isMissingPredecessor(_:)``),
///   and the save goes through its transaction, which reads the total after taking the number.
///
/// Made only when each compared value's SQL comparison is as strict as ``StoreValue/isIdentical(to:)``
/// on the value the column gives back (see ``ColumnType/comparesExactly(_:)``); otherwise the save
/// goes through its transaction.
struct OneStatementUpdate: Sendable {
    let sql: String
    let binds: PostgresBindings
    /// Whether every parameter binds as its column's own type, so the text can be kept prepared.
    let prepared: Bool
    let snapshot: DefaultSnapshot
    let layout: TableLayout
    let key: Int64
    /// The version the context read: the row's new version is one more.
    let read: Int64
    /// The history row's committed time, author and body, as bound: what a save whose outcome the
    /// connection's end left unknown looks for (see ``PostgreSQLStore/storedInDoubt(_:)``).
    let committed: Double
    let author: String?
    let body: String

    /// The statement for a save of `snapshot`, read at version `read` with the stored values
    /// `expected` and changing `change`, whose text is `sql` (``sql(for:history:)`` of `layout`);
    /// `nil` when a value cannot be compared exactly in SQL. Only the parameters are built per save.
    init?(
        _ snapshot: DefaultSnapshot, key: Int64, read: Int64, expected: [StoreValue], change: StoreHistoryRecord.Change,
        author: String?, layout: TableLayout, sql: String
    ) throws {
        guard expected.count == snapshot.values.count else { return nil }
        let attributes = layout.entity.attributes
        var binds = PostgresBindings(capacity: 5 + layout.columns.count + attributes.count)
        binds.append(key)
        binds.append(read)
        var prepared = true
        for column in layout.columns {
            guard let type = column.type else { return nil }
            if !type.bindsAsItself(snapshot.values[column.slot]) { prepared = false }
            try type.bind(snapshot.values[column.slot], to: &binds)
        }
        for attribute in attributes {
            guard let type = layout.columnsBySlot[attribute.slot]?.type, type.comparesExactly(expected[attribute.slot])
            else { return nil }
            try type.bind(expected[attribute.slot], to: &binds)
        }
        committed = Date().timeIntervalSince1970
        body = try HistoryLog.body(of: [change])
        binds.append(committed)
        if let author { binds.append(author) } else { binds.appendNull() }
        binds.append(body)
        self.sql = sql
        self.binds = binds
        self.prepared = prepared
        self.snapshot = snapshot
        self.layout = layout
        self.key = key
        self.read = read
        self.author = author
    }

    /// The text of the statement for a save of one model of `layout`, the same for every save:
    /// parameters `$1` the key and `$2` the version read, then each column's new value (in the
    /// order of the layout's columns), then each attribute's value read (in the entity's order),
    /// then the history row's committed time, author and body. `nil` for a layout with
    /// relationships. Built once per store (see ``PostgreSQLStore/oneStatementTexts``).
    static func sql(for layout: TableLayout, history: HistoryLog) -> String? {
        guard layout.hasNoRelationships else { return nil }
        var parameters = 2
        var assignments = ["\(TableLayout.version) = \(TableLayout.version) + 1"]
        for column in layout.columns {
            guard let type = column.type else { return nil }
            parameters += 1
            assignments.append("\(column.quoted) = \(type.placeholder(parameters))")
        }
        var conditions = ["\(TableLayout.key) = $1", "\(TableLayout.version) = $2"]
        for attribute in layout.entity.attributes {
            guard let column = layout.columnsBySlot[attribute.slot], let type = column.type else { return nil }
            parameters += 1
            conditions.append(type.identical(column.quoted, to: parameters))
        }
        let write =
            "UPDATE \(layout.table) SET " + assignments.joined(separator: ", ") + " WHERE "
            + conditions.joined(separator: " AND ") + " RETURNING \(TableLayout.version)"
        return history.recordingOneChangeOrFailing(after: write, parameters: parameters)
    }

    /// Whether `error` is the refusal of a history row without its predecessor's running total
    /// (see the type's discussion): nothing was stored, and the save goes through its transaction.
    static func isMissingPredecessor(_ error: any Error) -> Bool {
        guard let info = (error as? PSQLError)?.serverInfo else { return false }
        return info[.sqlState] == "23502" && info[.tableName] == "modelstore_history"
            && info[.columnName] == "cumulative"
    }
}

extension ColumnType {
    /// Whether SQL's comparison of this column with a parameter holding `value`
    /// (``identical(_:to:)``) is true only when the value the column gives back is, bit for bit, `value`
    /// (``StoreValue/isIdentical(to:)``): the value is of the kind the column decodes to, and the
    /// comparison is of bytes (integers, booleans, UUIDs, `bytea`, `text` under a deterministic
    /// collation, and doubles by their bytes, so `-0.0` and `NaN` are told apart). Decimals (whose
    /// `numeric` forgets a value's exponent), URLs (which have a base) and composite values are not
    /// compared so.
    func comparesExactly(_ value: StoreValue) -> Bool {
        switch (self, value) {
        case (.decimal, _), (.url, _), (.encoded, _): false
        case (_, .null), (.bool, .bool), (.int, .int), (.uint64, .uint), (.double, .double), (.string, .string),
            (.date, .date), (.data, .data), (.uuid, .uuid):
            true
        default: false
        }
    }

    /// The condition that `column` holds parameter `number` exactly (see ``comparesExactly(_:)``),
    /// `NULL` matching `NULL`.
    func identical(_ column: String, to number: Int) -> String {
        switch self {
        case .double, .date: "float8send(\(column)) IS NOT DISTINCT FROM float8send($\(number)::double precision)"
        default: "\(column) IS NOT DISTINCT FROM $\(number)"
        }
    }
}
