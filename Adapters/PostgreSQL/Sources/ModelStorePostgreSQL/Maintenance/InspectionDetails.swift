import ModelStoreTooling

/// What `modelstore inspect` shows of a PostgreSQL store beyond its counts: the storage format, and
/// the namespace's tables, indexes and history with their sizes. Encoded under `"postgres"`.
struct InspectionDetails: Encodable, Sendable {
    /// A table with its rows (counted, or estimated past ``StoreCatalog/exactCountLimit``) and sizes.
    struct TableRow: Encodable, Sendable {
        let name: String
        let rowCount: Int
        let estimated: Bool
        let byteCount: Int
        let indexByteCount: Int

        init(table: StoreCatalog.Table, count: StoreCatalog.RowCount) {
            name = table.name
            rowCount = count.rows
            estimated = count.isEstimate
            byteCount = table.byteCount
            indexByteCount = table.indexByteCount
        }
    }

    /// An index with its table and size.
    struct IndexRow: Encodable, Sendable {
        let name: String
        let table: String
        let unique: Bool
        let valid: Bool
        let byteCount: Int

        init(_ index: StoreCatalog.Index) {
            name = index.name
            table = index.table
            unique = index.isUnique
            valid = index.isValid
            byteCount = index.byteCount
        }
    }

    /// The history table: how many transactions it keeps, their numbers, and its size.
    struct History: Encodable, Sendable {
        let transactionCount: Int
        let estimated: Bool
        let oldest: Int64?
        let newest: Int64?
        let byteCount: Int

        init(row: TableRow?, range: (oldest: Int64, newest: Int64)?) {
            transactionCount = row?.rowCount ?? 0
            estimated = row?.estimated ?? false
            oldest = range?.oldest
            newest = range?.newest
            byteCount = row?.byteCount ?? 0
        }
    }

    let format: Int
    let namespace: String
    /// Every table of the namespace with its indexes, in bytes.
    let byteCount: Int
    let tables: [TableRow]
    let indexes: [IndexRow]
    let history: History

    /// The details for people.
    var lines: [String] {
        var lines = [
            "PostgreSQL: storage format \(format), namespace '\(namespace)', \(ReportFormat.bytes(byteCount)) in "
                + "\(ReportFormat.count(tables.count, "table")) and \(indexes.count) index\(indexes.count == 1 ? "" : "es")"
        ]
        lines += ["", "Tables:"]
        lines += ReportFormat.table(
            tables.map { table in
                [
                    table.name, (table.estimated ? "about " : "") + ReportFormat.count(table.rowCount, "row"),
                    ReportFormat.bytes(table.byteCount), "indexes " + ReportFormat.bytes(table.indexByteCount),
                ]
            })
        lines += ["", "Indexes:"]
        lines += ReportFormat.table(
            indexes.map { index in
                [
                    index.name, "on " + index.table, index.unique ? "unique" : "",
                    index.valid ? "" : "INVALID", ReportFormat.bytes(index.byteCount),
                ]
            })
        var historyLine =
            "History: " + (history.estimated ? "about " : "")
            + ReportFormat.count(history.transactionCount, "transaction")
        if let oldest = history.oldest, let newest = history.newest {
            historyLine += " (numbers \(oldest) to \(newest))"
        }
        lines += ["", historyLine + ", " + ReportFormat.bytes(history.byteCount)]
        return lines
    }
}
