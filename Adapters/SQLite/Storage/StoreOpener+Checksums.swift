import Foundation
import ModelStore

extension StoreOpener {
    /// Gives every table of a format 1 or 2 file its checksum column (format 3), in the open's write
    /// transaction: each table is renamed, created again with the column, filled from the old one
    /// (SQLite computes each row's checksum), and the old one dropped with its indexes, which are then
    /// created on the new one. It reads and writes every row once, once per file.
    func addChecksums(stored: Schema.Description) throws {
        for layout in try Schema(stored).entities.map(EntityLayout.init) {
            try rebuild(
                layout.entity.name, creating: layout.creationSQL(table: layout.table, indexes: false),
                columns: layout.columnList, indexes: layout.indexSQL)
            for join in layout.joinTables {
                let sql = layout.joinTableSQL(join)
                try rebuild(
                    layout.entity.name + "." + join.name, creating: [sql[0]], columns: EntityLayout.joinColumns,
                    indexes: Array(sql.dropFirst()))
            }
        }
        try rebuild(Self.metaTable, creating: [Self.metaCreationSQL], columns: "key, value", indexes: [])
        try rebuild(
            HistoryTable.table, creating: [HistoryTable.creationSQL], columns: HistoryTable.columns, indexes: [])
        connection.clearCache()
    }

    private func rebuild(_ name: String, creating: [String], columns: String, indexes: [String]) throws {
        let old = quote(name + ".upgrading")
        try connection.execute("ALTER TABLE \(quote(name)) RENAME TO \(old)", during: "upgrading")
        for sql in creating { try connection.execute(sql, during: "upgrading") }
        try connection.execute(
            "INSERT INTO \(quote(name)) (\(columns)) SELECT \(columns) FROM \(old)", during: "upgrading")
        try connection.execute("DROP TABLE \(old)", during: "upgrading")
        for sql in indexes { try connection.execute(sql, during: "upgrading") }
    }
}
